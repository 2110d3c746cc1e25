package run

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/internal/testutil"
	"github.com/bitnet-convert/bitnet-convert/runtime"
)

// Generation stops at the vocabulary's EOS unless --ignore-eos: with EOS
// set to 11, the golden greedy ids 440 17 11 1 175 … end after "440 17 11";
// the dump then holds 8 prompt rows + 3 generated rows. stderr says why it
// stopped and prints llama_perf_context_print-style timings.
func TestRunStopsAtEOS(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "eos11.gguf")
	testutil.WithKVs(t, filepath.Join(golden, "gguf/ggml-model-i2_s.gguf"), model, testutil.SetKV("tokenizer.ggml.eos_token_id", gguf.Uint32(11)))
	ids := []int32{1, 100, 200, 300, 400, 500, 7, 8}
	dump := filepath.Join(dir, "l.f32")
	var out, errb bytes.Buffer
	if err := runRun(&RunOptions{Model: model, IDs: ids, N: 16, DumpLogits: dump, Out: &out, Err: &errb}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "generated ids: 440 17 11\n") {
		t.Fatalf("stdout:\n%s", out.String())
	}
	if fi, err := os.Stat(dump); err != nil || fi.Size() != 11*512*4 {
		t.Fatalf("dump: %v %v, want 11 rows of 512 floats", fi, err)
	}
	for _, want := range []string{"stopped at the end-of-generation token 11 after 3 token(s)", "--ignore-eos",
		"prompt eval time =", "/     8 tokens (", "ms per token,", "tokens per second)", "eval time =", "/     2 runs   (", "total time =", "/    10 tokens"} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, errb.String())
		}
	}
	out.Reset()
	errb.Reset()
	if err := runRun(&RunOptions{Model: model, IDs: ids, N: 16, IgnoreEOS: true, Out: &out, Err: &errb}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "generated ids: 440 17 11 1 175 59 215 140 266 461 17 299 486 131 305 158\n") || strings.Contains(errb.String(), "stopped") {
		t.Fatalf("--ignore-eos:\n%s\n%s", out.String(), errb.String())
	}
}

// Each token is written as soon as it is chosen: the stream callback sees
// the ids in order, before GenerateStream returns.
func TestGenerateStreamCallsBack(t *testing.T) {
	var out bytes.Buffer
	opts := &RunOptions{Model: filepath.Join(golden, "gguf/ggml-model-i2_s.gguf"), IDs: []int32{1, 100, 200, 300, 400, 500, 7, 8}, N: 4, Out: &out}
	if err := runRun(opts); err != nil {
		t.Fatal(err)
	}
	// prompt ids first, then the streamed text line, then the ids.
	lines := strings.Split(out.String(), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "prompt ids: ") || !strings.HasPrefix(lines[1], "generated text: ") || lines[2] != "generated ids: 440 17 11 1" {
		t.Fatalf("stdout:\n%q", out.String())
	}
	var seen []int32
	rt := loadTiny(t)
	gen, _, st, err := GenerateStream(rt, []int32{1, 100, 200, 300, 400, 500, 7, 8}, GenOptions{N: 4, OnToken: func(id int32) { seen = append(seen, id) }})
	if err != nil || len(seen) != 4 || seen[3] != gen[3] || st.EvalRuns != 3 || st.PromptTokens != 8 {
		t.Fatalf("seen %v gen %v stats %+v err %v", seen, gen, st, err)
	}
}

// An existing --dump-logits file is kept unless --force.
func TestDumpLogitsNeedsForce(t *testing.T) {
	dump := filepath.Join(t.TempDir(), "old.f32")
	os.WriteFile(dump, []byte("keep"), 0o644)
	opts := &RunOptions{Model: filepath.Join(golden, "gguf/ggml-model-i2_s.gguf"), IDs: []int32{1}, N: 1, DumpLogits: dump, Out: &bytes.Buffer{}}
	if err := runRun(opts); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("err %v", err)
	}
	if b, _ := os.ReadFile(dump); string(b) != "keep" {
		t.Fatal("overwritten without --force")
	}
	opts.Force = true
	if err := runRun(opts); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(dump); fi.Size() != 2*512*4 {
		t.Fatalf("with --force: %d bytes", fi.Size())
	}
}

func loadTiny(t *testing.T) *runtime.Model {
	t.Helper()
	m, f, err := runtime.Open(filepath.Join(golden, "gguf/ggml-model-i2_s.gguf"), runtime.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return m
}
