package perplexity

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/usage"
	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
	"github.com/bitnet-convert/bitnet-convert/runtime"
)

func kldOpts(model string, out *bytes.Buffer) *PerplexityOptions {
	return &PerplexityOptions{Model: filepath.Join(golden, "gguf", model), Ctx: 128, Chunks: 2, Out: out}
}

// TestKLDivergence: a base saved from the F32 golden model, compared with
// the same model, gives a mean KLD of only the base's 16-bit rounding and
// 100 % same top token; the I2_S model gives a larger KLD and fewer equal
// top tokens. The base file has exactly llama-perplexity's size for
// 2 chunks of 128 over 512 ids.
func TestKLDivergence(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "base.kld")
	var out bytes.Buffer
	o := kldOpts("ggml-model-f32.gguf", &out)
	o.File, o.KLBase = filepath.Join(golden, "outputs/ppl_text.txt"), base
	if err := perplexityRun(o); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(base)
	if err != nil {
		t.Fatal(err)
	}
	if want := runtime.KLBaseSize(128, 512, 2); fi.Size() != want || want != 20+4*256+2*2*63*(512+4) {
		t.Fatalf("base is %d bytes, want %d", fi.Size(), want)
	}
	if !strings.Contains(out.String(), "Final estimate: PPL = ") {
		t.Fatalf("base run output %q", out.String())
	}
	// Without --force the base is kept.
	if err := perplexityRun(o); err == nil || !strings.Contains(err.Error(), "pass --force") {
		t.Fatalf("second base run: %v", err)
	}

	kld := func(model string) string {
		var out bytes.Buffer
		o := kldOpts(model, &out)
		o.KLD, o.KLBase, o.Chunks = true, base, 0
		if err := perplexityRun(o); err != nil {
			t.Fatalf("%s: %v", model, err)
		}
		return out.String()
	}
	meanKLD := func(out string) float64 { return meanKLD(t, out) }
	same := kld("ggml-model-f32.gguf")
	for _, w := range []string{"chunk             PPL", "====== KL divergence statistics ======", "Same top p: 100.000 ± 0.000 %"} {
		if !strings.Contains(same, w) {
			t.Errorf("same model: output lacks %q:\n%s", w, same)
		}
	}
	if v := meanKLD(same); math.Abs(v) > 1e-5 {
		t.Errorf("same model: mean KLD %v, want only the base's rounding (< 1e-5)", v)
	}
	other := kld("ggml-model-i2_s.gguf")
	if v := meanKLD(other); v < 1e-3 || strings.Contains(other, "Same top p: 100.000") || !strings.Contains(other, "Mean PPL(base)") {
		t.Errorf("I2_S model: mean KLD %v, output\n%s", v, other)
	}

	// Refusals, one line each: another chunk size, another vocabulary,
	// a truncated file, a file that is no base.
	o = kldOpts("ggml-model-i2_s.gguf", &bytes.Buffer{})
	o.KLD, o.KLBase, o.Ctx, o.CtxSet = true, base, 64, true
	var ue *usage.Error
	if err := perplexityRun(o); err == nil || !errors.As(err, &ue) || !strings.Contains(err.Error(), "computed with -c 128") {
		t.Errorf("-c 64: %v", err)
	}
	vocab := filepath.Join(dir, "vocab.kld")
	var b bytes.Buffer
	if err := runtime.WriteKLBaseHeader(&b, &runtime.KLBase{NCtx: 128, NVocab: 300, NChunk: 1, Tokens: make([]int32, 128)}); err != nil {
		t.Fatal(err)
	}
	b.Write(make([]byte, runtime.KLBaseSize(128, 300, 1)-int64(b.Len())))
	os.WriteFile(vocab, b.Bytes(), 0o644)
	whole, _ := os.ReadFile(base)
	short := filepath.Join(dir, "short.kld")
	os.WriteFile(short, whole[:len(whole)-2], 0o644)
	notBase := filepath.Join(golden, "outputs/ppl_text.txt")
	// Rows start after the 20-byte header and 256 tokens, 516 words each,
	// 63 per chunk: a scale of 0xffffffff (NaN) in chunk 0's first row, an
	// +Inf min in chunk 1's sixth row, a finite scale too large for 65535.
	rowAt := func(c, i int) int { return 20 + 4*256 + 2*(512+4)*(63*c+i) }
	patched := func(name string, at int, v uint32) string {
		b := bytes.Clone(whole)
		binary.LittleEndian.PutUint32(b[at:], v)
		p := filepath.Join(dir, name)
		os.WriteFile(p, b, 0o644)
		return p
	}
	nanScale := patched("nan.kld", rowAt(0, 0), 0xffffffff)
	infMin := patched("inf.kld", rowAt(1, 5)+4, 0x7f800000)
	hugeScale := patched("huge.kld", rowAt(0, 2), math.Float32bits(1e36))
	for _, c := range []struct{ file, want string }{
		{nanScale, "nan.kld: chunk 0: base log-probabilities of position 65: the record's scale NaN is not finite"},
		{infMin, "inf.kld: chunk 1: base log-probabilities of position 70: the record's min +Inf is not finite"},
		{hugeScale, "huge.kld: chunk 0: base log-probabilities of position 67: the record's scale·65535 + min +Inf is not finite"},
		{vocab, "vocabulary of 300 tokens"},
		{short, "need "},
		{notBase, `does not start with "_logits_"`},
	} {
		o := kldOpts("ggml-model-i2_s.gguf", &bytes.Buffer{})
		o.KLD, o.KLBase = true, c.file
		err := perplexityRun(o)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line with %q", c.file, err, c.want)
		}
	}
}

// TestKLDivergenceFromLayout: --kl-divergence honours --from-layout as
// plain perplexity does. bitnet.cpp's aarch64 I2_S file of the golden model
// records no layout; read as ARM it computes the x86 file's logits bit for
// bit, so against a base saved from the x86 file the KLD is only the base's
// 16-bit rounding and every top token agrees. Read as x86 (the flag left
// out) the codes are scrambled and the KLD is large.
func TestKLDivergenceFromLayout(t *testing.T) {
	base := filepath.Join(t.TempDir(), "base.kld")
	o := kldOpts("ggml-model-i2_s.gguf", &bytes.Buffer{})
	o.File, o.KLBase = filepath.Join(golden, "outputs/ppl_text.txt"), base
	if err := perplexityRun(o); err != nil {
		t.Fatal(err)
	}
	arm := filepath.Join(golden, "../ecosystems/tiny-bitnet-i2_s-arm.gguf")
	kld := func(layout string) string {
		var out bytes.Buffer
		o := kldOpts("", &out)
		o.Model, o.FromLayout, o.KLD, o.KLBase, o.Chunks = arm, layout, true, base, 0
		if err := perplexityRun(o); err != nil {
			t.Fatalf("--from-layout %q: %v", layout, err)
		}
		return out.String()
	}
	if got := kld("arm"); !strings.Contains(got, "Same top p: 100.000 ± 0.000 %") || math.Abs(meanKLD(t, got)) > 1e-5 {
		t.Errorf("--from-layout arm: want the x86 file's logits (KLD 0, same top 100 %%):\n%s", got)
	}
	if got := kld(""); strings.Contains(got, "Same top p: 100.000") || meanKLD(t, got) < 1e-2 {
		t.Errorf("no --from-layout: the ARM file read as x86 should disagree with the base:\n%s", got)
	}
}

// meanKLD is the value of the "Mean    KLD:" line of a --kl-divergence run.
func meanKLD(t *testing.T, out string) float64 {
	t.Helper()
	_, after, ok := strings.Cut(out, "Mean    KLD:")
	if !ok {
		t.Fatalf("no Mean KLD line:\n%s", out)
	}
	v, err := strconv.ParseFloat(strings.Fields(after)[0], 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// nanEmbedding writes a copy of the golden F32 model whose token_embd
// element 0 is NaN (the head is tied: logit 0 is NaN at every position) to
// dir and returns its path.
func nanEmbedding(t *testing.T, dir string) string {
	t.Helper()
	src := filepath.Join(golden, "gguf/ggml-model-f32.gguf")
	f, err := reader.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	ti, ok := f.Tensor("token_embd.weight")
	at := f.DataOffset + ti.Offset
	f.Close()
	if !ok || ti.Type != gguf.TypeF32 {
		t.Fatalf("token_embd.weight: %v %v", ok, ti.Type)
	}
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	binary.LittleEndian.PutUint32(b[at:], 0x7fc00000)
	p := filepath.Join(dir, "nan.gguf")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A model with non-finite logits fails writing a base and leaves no base
// file (it is renamed into place only on success); compared with a good
// base it fails as a plain run does instead of printing a NaN table.
func TestKLDivergenceNaNModel(t *testing.T) {
	dir := t.TempDir()
	nan := nanEmbedding(t, dir)
	text := filepath.Join(golden, "outputs/ppl_text.txt")
	bad := filepath.Join(dir, "nan.kld")
	o := &PerplexityOptions{Model: nan, File: text, Ctx: 128, Chunks: 2, KLBase: bad, Out: &bytes.Buffer{}}
	if err := perplexityRun(o); err == nil || !strings.Contains(err.Error(), "the perplexity is NaN") {
		t.Fatalf("base from a NaN model: %v", err)
	}
	if _, err := os.Stat(bad); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a failed base run left %s (%v)", bad, err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("files left in %s: %v", dir, ents)
	}
	base := filepath.Join(dir, "base.kld")
	o = &PerplexityOptions{Model: filepath.Join(golden, "gguf/ggml-model-f32.gguf"), File: text, Ctx: 128, Chunks: 2, KLBase: base, Out: &bytes.Buffer{}}
	if err := perplexityRun(o); err != nil {
		t.Fatal(err)
	}
	o = &PerplexityOptions{Model: nan, KLD: true, KLBase: base, Out: &bytes.Buffer{}}
	want := "model " + nan + ": the perplexity is NaN and the mean KL divergence NaN (the logits are not finite)"
	if err := perplexityRun(o); err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("--kl-divergence on a NaN model: %v, want %q…", err, want)
	}
}

// TestKLDivergenceBatchedGolden: with the defaults (-c 512 -b 2048 -ub
// 512) the base file of the golden tiny I2_S model on the README text
// is byte for byte the one llama-perplexity (bitnet.cpp build A, AVX2)
// writes with its defaults (sha256 in testdata/golden/ppl-batch/README.md),
// and --kl-divergence of the F32 model against it prints llama-perplexity's
// per-chunk rows (tiny-f32_kld_vs_i2_s.txt: one chunk per cache, batches of
// min(-b, -c), every position with logits).
func TestKLDivergenceBatchedGolden(t *testing.T) {
	if testing.Short() {
		t.Skip("2907 tokens, twice")
	}
	const wantSHA = "08e1f40adadcfc3834cfb9a8dbedc877d893c209efa33055f81e9e01918c8c43"
	base := filepath.Join(t.TempDir(), "base.kld")
	text := filepath.Join(golden, "../ppl-batch/text.txt")
	o := &PerplexityOptions{Model: filepath.Join(golden, "gguf/ggml-model-i2_s.gguf"), File: text, Ctx: 512, Batch: 2048, UBatch: 512,
		Threads: 2, KLBase: base, Out: &bytes.Buffer{}}
	if err := perplexityRun(o); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(base)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprintf("%x", sha256.Sum256(b)); got != wantSHA {
		t.Errorf("base sha256 %s, want llama-perplexity's %s", got, wantSHA)
	}
	var out bytes.Buffer
	o = &PerplexityOptions{Model: filepath.Join(golden, "gguf/ggml-model-f32.gguf"), KLD: true, KLBase: base, Ctx: 512, Batch: 2048, UBatch: 512,
		Threads: 2, Out: &out}
	if err := kldRun(o); err != nil {
		t.Fatal(err)
	}
	ref, err := os.ReadFile(filepath.Join(golden, "../ppl-batch/tiny-f32_kld_vs_i2_s.txt"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, l := range strings.Split(string(ref), "\n") {
		if !strings.HasPrefix(l, "   ") && !strings.HasPrefix(l, "Mean ") {
			continue // the chunk rows and the means
		}
		n++
		if !strings.Contains(out.String(), l+"\n") {
			t.Errorf("llama-perplexity's line %q not in our output", l)
		}
	}
	if n < 10 {
		t.Fatalf("only %d reference lines", n)
	}
}
