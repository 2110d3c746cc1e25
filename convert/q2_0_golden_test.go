package convert

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/dummy"
	"github.com/bitnet-convert/bitnet-convert/format"
	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
)

// q2_0Golden holds mainline llama-quantize's Q2_0 files (testdata/golden/
// q2_0/README.md: commit, command, sha256).
const q2_0Golden = "../testdata/golden/q2_0"

// q2_0Dummy regenerates the dummy checkpoint a golden Q2_0 file was made
// from (dummy is deterministic for a seed: same safetensors bytes).
func q2_0Dummy(t *testing.T, config string, packed bool, linearClass string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(q2_0Golden, config))
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := json.Unmarshal(raw, &cfg); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "hf")
	if _, err := dummy.Generate(context.Background(), dir, dummy.Options{Config: cfg, Packed: packed, LinearClass: linearClass, Tokenizer: goldenHF, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// sameQ2_0 checks that every Q2_0 tensor of want is in got with the
// same type, ne and bytes, and that want has n of them.
func sameQ2_0(t *testing.T, got, want *reader.File, n int) {
	t.Helper()
	seen := 0
	for _, w := range want.Tensors {
		if w.Type != gguf.TypeQ2_0 {
			continue
		}
		seen++
		g, ok := got.Tensor(w.Name)
		if !ok || g.Type != w.Type || !equalNe(g.Ne, w.Ne) {
			t.Errorf("%s: ours %v %v, llama-quantize %v %v", w.Name, g.Type, g.Ne, w.Type, w.Ne)
			continue
		}
		a, _ := got.TensorData(w.Name)
		b, _ := want.TensorData(w.Name)
		if !bytes.Equal(a, b) {
			i := 0
			for i < len(a) && a[i] == b[i] {
				i++
			}
			t.Errorf("%s: bytes differ from llama-quantize's first at %d (block %d)", w.Name, i, i/18)
		}
	}
	if seen != n {
		t.Errorf("llama-quantize's file has %d Q2_0 tensors, want %d", seen, n)
	}
}

// TestQ2_0MatchesLlamaQuantize (issue 21, acceptance a): our hf2gguf
// --outtype q2_0 projections equal, tensor by tensor, what mainline's
// llama-quantize --token-embedding-type f16 --output-tensor-type f16 IN OUT
// Q2_0 writes from the F32 GGUF of the same model: the golden tiny model
// (K = 256, 512), a bitnet dummy whose projection rows have length 384
// (K = 384, 768) and a packed Llama3-8B-1.58-shaped dummy (arch llama,
// K = 512, 1792); and requant of bitnet.cpp's own golden I2_S file gives
// the same projections.
func TestQ2_0MatchesLlamaQuantize(t *testing.T) {
	for _, c := range []struct {
		golden, config string
		packed         bool
		class          string
		n              int
	}{
		{"tiny-q2_0.gguf", "", false, "", 14},
		{"bitnet384-q2_0.gguf", "bitnet384.config.json", false, "", 14},
		{"llama-small-q2_0.gguf", "llama-small.config.json", true, dummy.BitLinear, 14},
	} {
		t.Run(c.golden, func(t *testing.T) {
			dir := goldenHF
			if c.config != "" {
				dir = q2_0Dummy(t, c.config, c.packed, c.class)
			}
			out := filepath.Join(t.TempDir(), "ours.gguf")
			if _, err := ConvertDir(context.Background(), dir, out, false, false, Options{OutType: "q2_0", ModelName: "m"}); err != nil {
				t.Fatal(err)
			}
			sameQ2_0(t, openGGUF(t, out), openGGUF(t, filepath.Join(q2_0Golden, c.golden)), c.n)
		})
	}
	t.Run("requant-i2_s", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "req.gguf")
		if _, err := RequantFile(context.Background(), goldenDir+"/gguf/ggml-model-i2_s.gguf", out, false, false, RequantOptions{OutType: "q2_0"}); err != nil {
			t.Fatal(err)
		}
		sameQ2_0(t, openGGUF(t, out), openGGUF(t, filepath.Join(q2_0Golden, "tiny-q2_0.gguf")), 14)
	})
	if _, ok := format.Lookup("q2_0"); !ok {
		t.Fatal("q2_0 is not a row of the type table")
	}
}

// TestQ2_0VerboseRounding: with -v, hf2gguf says how a projection's
// per-tensor scale became the f16 d of its Q2_0 blocks.
func TestQ2_0VerboseRounding(t *testing.T) {
	var log bytes.Buffer
	out := filepath.Join(t.TempDir(), "v.gguf")
	if _, err := ConvertDir(context.Background(), goldenHF, out, false, false, Options{OutType: "q2_0", ModelName: "m", Verbose: true, Log: &log}); err != nil {
		t.Fatal(err)
	}
	// 0.15998523 is the golden blk.0.attn_q scale (bitnet.cpp's I2_S file
	// stores it); its f16 is 0.16003418 (0x311F).
	if want := "blk.0.attn_q.weight          BF16  → Q2_0 ne [256 256] 18432 bytes, scale 0.15998523 → f16 0.16003418 (f16 per block)"; !strings.Contains(log.String(), want) {
		t.Errorf("-v log lacks %q:\n%s", want, log.String())
	}
}
