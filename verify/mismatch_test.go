package verify

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/convert"
	"github.com/bitnet-convert/bitnet-convert/dummy"
)

// goldenConfig returns the tiny golden checkpoint's config.json as a map.
func goldenConfig(t *testing.T) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(goldenHF, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// dummyLike writes a seeded checkpoint of the tiny golden architecture with
// the given config edits (and vocabulary size when > 0).
func dummyLike(t *testing.T, vocab int, edit func(map[string]any)) string {
	t.Helper()
	cfg := goldenConfig(t)
	if edit != nil {
		edit(cfg)
	}
	dir := filepath.Join(t.TempDir(), "hf")
	if _, err := dummy.Generate(context.Background(), dir, dummy.Options{Config: cfg, VocabSize: vocab, Seed: 7, Threads: 1}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Defect D2: a GGUF verified against a checkpoint of another vocabulary
// (either way round) panicked in the logit comparison. Now the structure
// check names token_embd.weight with both shapes, the numeric comparison is
// skipped, and the report fails.
func TestVerifyMismatchedPair(t *testing.T) {
	big := dummyLike(t, 1024, nil)
	bigGGUF := filepath.Join(t.TempDir(), "big.gguf")
	if _, err := convert.ConvertDir(context.Background(), big, bigGGUF, false, false, convert.Options{ModelName: "big", NoVocab: true}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ gguf, hf, want string }{
		{"../testdata/golden/tiny-bitnet/gguf/ggml-model-i2_s.gguf", big, "tensor token_embd.weight: ne [256 512], source implies [256 1024]"},
		{bigGGUF, goldenHF, "tensor token_embd.weight: ne [256 1024], source implies [256 512]"},
	} {
		rep, err := Run(Options{GGUF: tc.gguf, HF: tc.hf, Tokens: 2})
		if err != nil {
			t.Fatalf("%s vs %s: %v", tc.gguf, tc.hf, err)
		}
		if rep.Pass || len(rep.Failures) == 0 || rep.Failures[0] != tc.want {
			t.Errorf("%s vs %s: failures %q, want first %q", tc.gguf, tc.hf, rep.Failures, tc.want)
		}
		// (the dummy checkpoint has no tokenizer: a note says it was not compared)
		if rep.Numbers != nil || !strings.Contains(strings.Join(rep.Notes, "\n"), "numeric comparison skipped") {
			t.Errorf("%s vs %s: numbers %v, notes %q: want the comparison skipped", tc.gguf, tc.hf, rep.Numbers, rep.Notes)
		}
	}
}

// Defect D9: a checkpoint whose config says untied but that has no
// lm_head.weight converts with hf2gguf --allow-tie-fallback; verify failed
// on it ("lm_head.weight is missing") and had no such flag. A GGUF without
// output.weight now implies the fallback (with a note), and the option
// says it explicitly.
func TestVerifyTieFallback(t *testing.T) {
	dir := dummyLike(t, 0, nil) // tied: no lm_head.weight
	cfgPath := filepath.Join(dir, "config.json")
	b, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	untied := strings.Replace(string(b), `"tie_word_embeddings": true`, `"tie_word_embeddings": false`, 1)
	if untied == string(b) {
		t.Fatalf("config.json has no tie_word_embeddings true:\n%s", b)
	}
	if err := os.WriteFile(cfgPath, []byte(untied), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "m.gguf")
	if _, err := convert.ConvertDir(context.Background(), dir, out, false, false, convert.Options{ModelName: "m", NoVocab: true, AllowTieFallback: true}); err != nil {
		t.Fatal(err)
	}
	for _, allow := range []bool{false, true} {
		rep, err := Run(Options{GGUF: out, HF: dir, Tokens: 2, AllowTieFallback: allow})
		if err != nil {
			t.Fatalf("allow %v: %v", allow, err)
		}
		if !rep.Pass || rep.Numbers == nil {
			t.Errorf("allow %v: failures %q", allow, rep.Failures)
		}
		if len(rep.Notes) != 1 || !strings.Contains(rep.Notes[0], "--allow-tie-fallback") {
			t.Errorf("allow %v: notes %q, want the tie fallback named", allow, rep.Notes)
		}
	}
}
