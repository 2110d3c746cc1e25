package runtime

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
	"github.com/bitnet-convert/bitnet-convert/tokenizer"
)

// TestGoldenPerplexity: ppl_text.txt with -c 128 --chunks 4, one token per
// call, against the golden README's I2_S 1493.8001 and F32 1476.3758 (0.01 %).
func TestGoldenPerplexity(t *testing.T) {
	if testing.Short() {
		t.Skip("2 × 512 tokens")
	}
	text, err := os.ReadFile(filepath.Join(tinyDir, "outputs/ppl_text.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		file string
		want float64
	}{
		{"ggml-model-i2_s.gguf", 1493.8001},
		{"ggml-model-f32.gguf", 1476.3758},
	} {
		t.Run(c.file, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(tinyDir, "gguf", c.file)
			f, err := reader.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			m, err := LoadFile(f, Options{})
			if err != nil {
				t.Fatal(err)
			}
			v, err := tokenizer.FromGGUF(f.KVs)
			if err != nil {
				t.Fatal(err)
			}
			tok, err := tokenizer.New(v)
			if err != nil {
				t.Fatal(err)
			}
			ids, err := tok.Encode(string(text), true, false)
			if err != nil {
				t.Fatal(err)
			}
			res, err := Perplexity(m, ids, 128, 4, 1)
			if err != nil {
				t.Fatal(err)
			}
			if res.Tokens != 252 || res.Chunks != 4 {
				t.Errorf("scored %d tokens in %d chunks, want 252 in 4", res.Tokens, res.Chunks)
			}
			if rel := math.Abs(res.PPL-c.want) / c.want; rel > 1e-4 {
				t.Errorf("PPL %.4f, want %.4f (rel. error %.2g > 1e-4)", res.PPL, c.want, rel)
			} else {
				t.Logf("PPL %.4f (want %.4f)", res.PPL, c.want)
			}
		})
	}
}

// TestGoldenEmbeddings: mean- and last-pooled hidden states of the hello
// prompt against llama-embedding (batched, so cosine ≥ 0.999, max |Δ| ≤ 0.05).
func TestGoldenEmbeddings(t *testing.T) {
	f, err := reader.Open(filepath.Join(tinyDir, "gguf/ggml-model-i2_s.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// llama-embedding ran the prompt as one batch: use the batched arithmetic.
	m, err := LoadFile(f, Options{Batched: true})
	if err != nil {
		t.Fatal(err)
	}
	prompt, _ := goldenIDs(t, filepath.Join(tinyDir, "outputs/i2s_hello_seq_t1.txt"))
	s := m.NewSession(len(prompt))
	var hs [][]float32
	for _, id := range prompt {
		if err := s.EvalHidden(id); err != nil {
			t.Fatal(err)
		}
		hs = append(hs, append([]float32(nil), s.Hidden()...))
	}
	for _, c := range []struct {
		file string
		mode PoolMode
	}{{"embd_i2s_mean.json", PoolMean}, {"embd_i2s_last.json", PoolLast}} {
		b, err := os.ReadFile(filepath.Join(tinyDir, "outputs", c.file))
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Data []struct {
				Embedding []float32 `json:"embedding"`
			} `json:"data"`
		}
		if err := json.Unmarshal(b, &doc); err != nil || len(doc.Data) != 1 {
			t.Fatalf("%s: %v", c.file, err)
		}
		want := doc.Data[0].Embedding
		got := Pool(hs, c.mode)
		if len(got) != len(want) {
			t.Fatalf("%s: %d values, want %d", c.file, len(got), len(want))
		}
		var dot, na, nb, worst float64
		for i := range got {
			a, b := float64(got[i]), float64(want[i])
			dot += a * b
			na += a * a
			nb += b * b
			worst = math.Max(worst, math.Abs(a-b))
		}
		cos := dot / math.Sqrt(na*nb)
		if cos < 0.999 || worst > 0.05 {
			t.Errorf("%s: cosine %.6f (≥ 0.999), max |Δ| %.4f (≤ 0.05)", c.file, cos, worst)
		} else {
			t.Logf("%s: cosine %.6f, max |Δ| %.4f", c.file, cos, worst)
		}
	}
}

func TestPool(t *testing.T) {
	h := [][]float32{{1, 2}, {3, 6}, {5, 1}}
	for _, c := range []struct {
		mode PoolMode
		want []float32
	}{{PoolMean, []float32{3, 3}}, {PoolCLS, []float32{1, 2}}, {PoolLast, []float32{5, 1}}} {
		got := Pool(h, c.mode)
		if got[0] != c.want[0] || got[1] != c.want[1] {
			t.Errorf("mode %d: %v, want %v", c.mode, got, c.want)
		}
	}
	if Pool(nil, PoolMean) != nil {
		t.Error("Pool(nil) not nil")
	}
	for name, want := range map[string]PoolMode{"mean": PoolMean, "cls": PoolCLS, "last": PoolLast} {
		if got, err := ParsePoolMode(name); err != nil || got != want {
			t.Errorf("ParsePoolMode(%q) = %v, %v", name, got, err)
		}
	}
	if _, err := ParsePoolMode("max"); err == nil {
		t.Error("ParsePoolMode(max): no error")
	}
}
