package runtime

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
	"github.com/bitnet-convert/bitnet-convert/tokenizer"
)

const pplBatchDir = "../testdata/golden/ppl-batch"

// llamaPerplexityLines returns the running-estimate line ("[1]x,[2]y,…")
// and the "PPL = X +/- E" part of the final estimate of a llama-perplexity
// output kept in testdata.
func llamaPerplexityLines(t *testing.T, path string) (chunks, final string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "[1]") {
			chunks = l
		}
		if i := strings.Index(l, "Final estimate: "); i >= 0 {
			final = l[i+len("Final estimate: "):]
		}
	}
	if chunks == "" || final == "" {
		t.Fatalf("%s: no running estimates or no final estimate", path)
	}
	return chunks, final
}

// pplBatchedLines runs PerplexityBatched on text and prints its figures as
// llama-perplexity does.
func pplBatchedLines(t *testing.T, path, text string, nCtx, chunks int, b PerplexityBatching, threads int) (string, string) {
	t.Helper()
	f, err := reader.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := LoadFile(f, Options{Threads: threads})
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
	ids, err := tok.Encode(text, true, false)
	if err != nil {
		t.Fatal(err)
	}
	var line strings.Builder
	res, err := PerplexityBatched(m, ids, nCtx, chunks, v.BOS, b, func(p ChunkProgress) {
		fmt.Fprintf(&line, "[%d]%.4f,", p.Chunk, p.PPL)
	})
	if err != nil {
		t.Fatal(err)
	}
	return line.String(), fmt.Sprintf("PPL = %.4f +/- %.5f", res.PPL, res.PPLErr)
}

// TestPerplexityBatchedGolden: PerplexityBatched prints llama-perplexity's
// figures digit for digit (bitnet.cpp build A, AVX2;
// testdata/golden/ppl-batch/README.md gives the commands): its defaults
// (-c 512 -b 2048 -ub 512, four chunks in one cache) on the 2907-token
// README text (text.txt) with the golden tiny model in I2_S, F32 and
// I2_S with a Q8_0 head (the tied token_embd), the one-token -b 1 -ub 1,
// chunks whose cells start off a 32-cell boundary (-c 100, -c 200), physical batches that span chunks (-ub 300, -ub 7),
// batches smaller than a chunk (-b 128), and the tiny model's older
// -c 128 -b 128 figures of testdata/golden/tiny-bitnet/outputs.
func TestPerplexityBatchedGolden(t *testing.T) {
	text, err := os.ReadFile(filepath.Join(pplBatchDir, "text.txt"))
	if err != nil {
		t.Fatal(err)
	}
	old, err := os.ReadFile(filepath.Join(tinyDir, "outputs/ppl_text.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		golden, model, text string
		nCtx, chunks, b, ub int
		long                bool // skipped with -short
	}{
		{"tiny-i2_s.txt", "ggml-model-i2_s.gguf", string(text), 512, 0, 2048, 512, false},
		{"tiny-i2_s_b1_ub1.txt", "ggml-model-i2_s.gguf", string(text), 512, 0, 1, 1, false},
		{"tiny-i2_s_c512_b128_ub64.txt", "ggml-model-i2_s.gguf", string(text), 512, 0, 128, 64, true},
		{"tiny-i2_s_c200_b2000_ub300.txt", "ggml-model-i2_s.gguf", string(text), 200, 0, 2000, 300, false},
		{"tiny-i2_s_c100_b1000_ub1.txt", "ggml-model-i2_s.gguf", string(text), 100, 0, 1000, 1, false},
		{"tiny-i2_s_c100_b1000_ub7.txt", "ggml-model-i2_s.gguf", string(text), 100, 0, 1000, 7, true},
		{"tiny-f32.txt", "ggml-model-f32.gguf", string(text), 512, 0, 2048, 512, true},
		{"tiny-i2_s-q8embd.txt", "ggml-model-i2_s-q8embd.gguf", string(text), 512, 0, 2048, 512, false},
		{"../tiny-bitnet/outputs/ppl_i2_s.txt", "ggml-model-i2_s.gguf", string(old), 128, 4, 128, 512, false},
		{"../tiny-bitnet/outputs/ppl_f32.txt", "ggml-model-f32.gguf", string(old), 128, 4, 128, 512, true},
	} {
		t.Run(c.golden, func(t *testing.T) {
			if c.long && testing.Short() {
				t.Skip("-short")
			}
			wantChunks, wantFinal := llamaPerplexityLines(t, filepath.Join(pplBatchDir, c.golden))
			chunks, final := pplBatchedLines(t, filepath.Join(tinyDir, "gguf", c.model), c.text, c.nCtx, c.chunks, PerplexityBatching{c.b, c.ub}, 2)
			if chunks != wantChunks || final != wantFinal {
				t.Errorf("got\n%s\n%s\nwant (llama-perplexity)\n%s\n%s", chunks, final, wantChunks, wantFinal)
			}
		})
	}
}

// TestPerplexityBatchedLarge: llama-perplexity's default figures on the
// bitnet_b1_58-large-shaped dummy (testdata/golden/fullsize/README.md) and
// the README text (text.txt), digit for digit. Heavy (2560 tokens through 729 M
// parameters): BITNET_HEAVY=1; BITNET_FULLSIZE_DIR may hold the GGUF.
func TestPerplexityBatchedLarge(t *testing.T) {
	if testing.Short() || (os.Getenv("BITNET_HEAVY") == "" && os.Getenv("BITNET_FULLSIZE_DIR") == "") {
		t.Skip("set BITNET_HEAVY=1 (or BITNET_FULLSIZE_DIR) to run the large perplexity golden")
	}
	text, err := os.ReadFile(filepath.Join(pplBatchDir, "text.txt"))
	if err != nil {
		t.Fatal(err)
	}
	dir := fullsizeInputs(t, "large-i2_s.gguf")
	wantChunks, wantFinal := llamaPerplexityLines(t, filepath.Join(pplBatchDir, "large-i2_s.txt"))
	chunks, final := pplBatchedLines(t, filepath.Join(dir, "large-i2_s.gguf"), string(text), 512, 0, PerplexityBatching{2048, 512}, 2)
	if chunks != wantChunks || final != wantFinal {
		t.Errorf("got\n%s\n%s\nwant (llama-perplexity)\n%s\n%s", chunks, final, wantChunks, wantFinal)
	}
}

// TestUbatchArithBatchedLogits: a ubatch's arithmetic (ubatchArith with
// tinyBLAS for kq·V, the head and F32 projections) gives the golden tiny
// model's batched logits (the non-_seq_ files: the whole prompt in one
// llama_decode of bitnet.cpp build A) bit for bit, I2_S and F32.
func TestUbatchArithBatchedLogits(t *testing.T) {
	for _, c := range []struct{ gguf, prefix string }{
		{"gguf/ggml-model-i2_s.gguf", "i2s_hello_t1"},
		{"gguf/ggml-model-i2_s.gguf", "i2s_ids_t1"},
		{"gguf/ggml-model-f32.gguf", "f32_hello_t1"},
		{"gguf/ggml-model-f32.gguf", "f32_ids_t1"},
	} {
		t.Run(c.prefix, func(t *testing.T) {
			f, err := reader.Open(filepath.Join(tinyDir, c.gguf))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			m, err := LoadFile(f, Options{Threads: 2})
			if err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(tinyDir, "outputs", c.prefix)
			prompt, _ := goldenIDs(t, out+".txt")
			want := readRows(t, out+".prompt_logits.f32", m.Params.NVocab)
			s := m.NewSession(len(prompt))
			s.ub = ubatchArith{kqvTiny: true, headTiny: true, f32Tiny: true}
			got, err := s.EvalBatch(prompt, 0)
			if err != nil {
				t.Fatal(err)
			}
			if d, r, col := maxAbsDiff(got, want); d != 0 || len(got) != len(want) {
				t.Errorf("%d rows, want %d; max |Δ| %.3g at row %d id %d, want bit-exact", len(got), len(want), d, r, col)
			}
		})
	}
}

// TestPplPlan: the segments and arithmetic llama-perplexity's batches give
// each chunk, on hand-checked cases.
func TestPplPlan(t *testing.T) {
	tiny := func(lo, hi, off int, kqv, head bool) pplSegment {
		return pplSegment{lo, hi, ubatchArith{kqvTiny: kqv, headTiny: head, f32Tiny: kqv, cellOff: off}}
	}
	for _, c := range []struct {
		name       string
		nCtx, nSeq int
		b          PerplexityBatching
		allOut     bool
		want       [][]pplSegment
	}{
		// Defaults: every chunk one ubatch of 512.
		{"defaults", 512, 2, PerplexityBatching{2048, 512}, false,
			[][]pplSegment{{tiny(0, 512, 0, true, true)}, {tiny(0, 512, 512, true, true)}}},
		// -b 1: one token per call (the ubatch of 1 has no tinyBLAS).
		{"b1", 8, 1, PerplexityBatching{1, 512}, false, [][]pplSegment{{tiny(0, 8, 0, false, false)}}},
		// -ub 6 over two chunks of 8: ubatches [0:6) of chunk 0, [6:8) with
		// chunk 1's [0:4), then [4:8): all of ≥ 2 tokens and ≥ 2 outputs
		// (positions from 4), so each chunk is one segment.
		{"ub spans chunks", 8, 2, PerplexityBatching{16, 6}, false, [][]pplSegment{
			{tiny(0, 8, 0, true, true)}, {tiny(0, 8, 8, true, true)}}},
		// -ub 3, outputs from position 4: ubatches [0:3) (no output),
		// [3:6) (2), chunk 0's [6:8) with chunk 1's 0 (3), chunk 1's
		// [1:4) (none), [4:7) (3) and [7:8) alone (one token).
		{"head needs two outputs", 8, 2, PerplexityBatching{16, 3}, false, [][]pplSegment{
			{tiny(0, 3, 0, true, false), tiny(3, 8, 0, true, true)},
			{tiny(0, 1, 8, true, true), tiny(1, 4, 8, true, false), tiny(4, 7, 8, true, true), tiny(7, 8, 8, false, false)}}},
		// --kl-divergence: every position has logits.
		{"all outputs", 8, 1, PerplexityBatching{8, 3}, true, [][]pplSegment{{tiny(0, 8, 0, true, true)}}},
		// -b 4 < -c 8 and -ub 1: single tokens.
		{"b below c", 8, 1, PerplexityBatching{4, 1}, false, [][]pplSegment{{tiny(0, 8, 0, false, false)}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := pplPlan(c.nCtx, c.nSeq, c.b, c.allOut)
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("plan\n got %v\nwant %v", got, c.want)
			}
		})
	}
}

func TestPerplexityBatchingCheck(t *testing.T) {
	for _, c := range []struct {
		b    PerplexityBatching
		want string
	}{
		{PerplexityBatching{2048, 512}, ""},
		{PerplexityBatching{100, 1}, ""},
		{PerplexityBatching{1024, 7}, ""},
		{PerplexityBatching{0, 512}, "-b 0"},
		{PerplexityBatching{2048, 0}, "-ub 0"},
		{PerplexityBatching{700, 512}, "-b 700: a batch of at least one chunk must be a multiple of -c 512"},
	} {
		err := c.b.Check(512)
		if (err == nil) != (c.want == "") || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%+v: error %v, want %q", c.b, err, c.want)
		}
	}
}
