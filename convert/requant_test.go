package convert

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/format"
	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
	"github.com/bitnet-convert/bitnet-convert/internal/embedfixture"
	"github.com/bitnet-convert/bitnet-convert/internal/testutil"
	"github.com/bitnet-convert/bitnet-convert/quantize"
)

func requant(t *testing.T, in string, opts RequantOptions) (string, *RequantPlan) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out.gguf")
	p, err := RequantFile(t.Context(), in, out, false, false, opts)
	if err != nil {
		t.Fatalf("requant %s → %s: %v", in, opts.OutType, err)
	}
	return out, p
}

// TestRequantGoldenI2SToTQ is acceptance c (TQ): requant of bitnet.cpp's own
// golden I2_S file gives the projection tensors llama-quantize writes from the
// F32 file, token_embd keeps its F16 (which here is also llama-quantize's
// choice), the norms are copied: every tensor equal.
func TestRequantGoldenI2SToTQ(t *testing.T) {
	in := goldenDir + "/gguf/ggml-model-i2_s.gguf"
	for _, c := range []struct {
		out  OutType
		file string
	}{{OutTQ2_0, "tiny-bitnet-tq2_0.gguf"}, {OutTQ1_0, "tiny-bitnet-tq1_0.gguf"}} {
		out, p := requant(t, in, RequantOptions{OutType: c.out})
		ours, gold := openGGUF(t, out), openGGUF(t, filepath.Join(ecoDir, c.file))
		sameTensors(t, "requant "+string(c.out), gold, ours)
		if ours.Arch() != "bitnet" || p.Runtime != format.RuntimeLlamaCpp {
			t.Errorf("%s: arch %q runtime %q", c.out, ours.Arch(), p.Runtime)
		}
		if a, _ := ours.String("bitnet.hidden_activation"); a != "silu" {
			t.Errorf("%s: hidden_activation %q", c.out, a)
		}
		if _, ok := ours.Get(format.LayoutKey); ok {
			t.Errorf("%s: TQ file carries %s", c.out, format.LayoutKey)
		}
	}
	// --token-embedding-type retypes it.
	out, _ := requant(t, in, RequantOptions{OutType: OutTQ2_0, TokenEmbeddingType: "Q8_0"})
	if ti, _ := openGGUF(t, out).Tensor("token_embd.weight"); ti.Type != gguf.TypeQ8_0 {
		t.Errorf("token_embd %s, want Q8_0", ti.Type)
	}
}

// TestRequantI2SToIQ is acceptance c (IQ): from our I2_S of b158-h512/hf,
// requant to IQ2_BN / IQ1_BN gives ik_llama.cpp's tensors: codes exactly,
// row scales within the bf16 rounding of the golden F32 file's scales (see
// TestIQOuttypesH512), and bytes equal to hf2gguf's own IQ output.
func TestRequantI2SToIQ(t *testing.T) {
	i2s := filepath.Join(t.TempDir(), "h512-i2_s.gguf")
	if _, err := ConvertDir(t.Context(), "../testdata/golden/b158-h512/hf", i2s, false, false, Options{ModelName: "tiny-b158-h512", TokenEmbeddingType: "F32"}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		out  OutType
		file string
	}{{OutIQ2BN, "tiny-b158-h512-iq2_bn.gguf"}, {OutIQ1BN, "tiny-b158-h512-iq1_bn.gguf"}} {
		out, _ := requant(t, i2s, RequantOptions{OutType: c.out})
		ours, gold := openGGUF(t, out), openGGUF(t, filepath.Join(ecoDir, c.file))
		direct := filepath.Join(t.TempDir(), "direct.gguf")
		if _, err := ConvertDir(t.Context(), "../testdata/golden/b158-h512/hf", direct, false, false, Options{OutType: c.out, ModelName: "tiny-b158-h512", TokenEmbeddingType: "F32"}); err != nil {
			t.Fatal(err)
		}
		sameTensors(t, "requant vs hf2gguf "+string(c.out), openGGUF(t, direct), ours)
		if ours.Arch() != "bitnet-b1.58" {
			t.Errorf("%s: arch %q", c.out, ours.Arch())
		}
		n := 0
		for _, g := range gold.Tensors {
			if !format.IsTernary(g.Type) {
				continue
			}
			o, ok := ours.Tensor(g.Name)
			if !ok || o.Type != g.Type {
				t.Fatalf("%s %s: %v", c.out, g.Name, o)
			}
			k, m := int(g.Ne[0]), int(g.Ne[1])
			f, _ := format.ForType(g.Type, format.LayoutX86, nil)
			gd, _ := gold.TensorData(g.Name)
			od, _ := ours.TensorData(g.Name)
			gc, oc := make([]int8, k*m), make([]int8, k*m)
			gs, _ := f.Decode(gc, gd, k, m)
			os, _ := f.Decode(oc, od, k, m)
			if !bytes.Equal(i8bytes(gc), i8bytes(oc)) {
				t.Errorf("%s %s: codes differ", c.out, g.Name)
			}
			for r := range gs {
				if d := gs[r] - os[r]; d > gs[r]/256 || d < -gs[r]/256 {
					t.Errorf("%s %s row %d: scale %v, golden %v", c.out, g.Name, r, os[r], gs[r])
					break
				}
			}
			n++
		}
		if n != 14 {
			t.Errorf("%s: %d tensors compared", c.out, n)
		}
	}
}

// TestRequantLayouts: golden I2_S (x86) → arm equals quantize_i2_s 16da220
// on aarch64; arm → x86-1x4 (--from-layout from the stored key) equals the
// 1×4 golden; x86-1x4 read with --from-layout (bitnet.cpp's file has no key)
// back to x86 gives the original golden codes and scale.
func TestRequantLayouts(t *testing.T) {
	arm, _ := requant(t, goldenDir+"/gguf/ggml-model-i2_s.gguf", RequantOptions{OutType: OutI2S, I2SLayout: format.LayoutARM})
	sameProjections(t, "x86 → arm", openGGUF(t, filepath.Join(ecoDir, "tiny-bitnet-i2_s-arm.gguf")), openGGUF(t, arm), nil)
	x14, _ := requant(t, arm, RequantOptions{OutType: OutI2S, I2SLayout: format.LayoutX86_1x4})
	sameProjections(t, "arm → x86-1x4", openGGUF(t, filepath.Join(ecoDir, "tiny-bitnet-i2_s-x86-1x4-16da220.gguf")), openGGUF(t, x14), nil)
	back, _ := requant(t, filepath.Join(ecoDir, "tiny-bitnet-i2_s-x86-1x4-16da220.gguf"), RequantOptions{OutType: OutI2S, FromLayout: format.LayoutX86_1x4})
	// The golden I2_S has stale bytes after each scale; compare n/4 + 4.
	sameProjections(t, "x86-1x4 → x86", openGGUF(t, goldenDir+"/gguf/ggml-model-i2_s.gguf"), openGGUF(t, back), func(b []byte) []byte { return b[:len(b)-28] })
}

func sameProjections(t *testing.T, what string, gold, ours interface {
	TensorData(string) ([]byte, error)
}, cut func([]byte) []byte) {
	t.Helper()
	n := 0
	for _, name := range goldenProjectionNames() {
		g, err1 := gold.TensorData(name)
		o, err2 := ours.TensorData(name)
		if err1 != nil || err2 != nil {
			t.Fatalf("%s %s: %v %v", what, name, err1, err2)
		}
		if cut != nil {
			g, o = cut(g), cut(o)
		}
		if !bytes.Equal(g, o) {
			t.Errorf("%s %s: bytes differ", what, name)
		}
		n++
	}
	if n != 14 {
		t.Errorf("%s: %d compared", what, n)
	}
}

func goldenProjectionNames() []string {
	var out []string
	for b := 0; b < 2; b++ {
		for _, p := range []string{"attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down"} {
			out = append(out, "blk."+string(rune('0'+b))+"."+p+".weight")
		}
	}
	return out
}

// TestRequantRoundTripFloat: the golden F32 file (ternary values) → I2_S
// equals the golden I2_S codes and scale, and I2_S → F32 restores the values.
func TestRequantRoundTripFloat(t *testing.T) {
	i2s, _ := requant(t, goldenDir+"/gguf/ggml-model-f32.gguf", RequantOptions{OutType: OutI2S})
	sameProjections(t, "f32 → i2_s", openGGUF(t, goldenDir+"/gguf/ggml-model-i2_s.gguf"), openGGUF(t, i2s), func(b []byte) []byte { return b[:len(b)-28] })
	f32, _ := requant(t, i2s, RequantOptions{OutType: OutF32})
	g, o := openGGUF(t, goldenDir+"/gguf/ggml-model-f32.gguf"), openGGUF(t, f32)
	for _, name := range goldenProjectionNames() {
		gd, _ := g.TensorData(name)
		od, _ := o.TensorData(name)
		// The golden F32 zeros keep the master weights' sign (−0.0); ours are
		// +0: compare values.
		for i := 0; i < len(gd); i += 4 {
			a, b := gd[i:i+4], od[i:i+4]
			if !bytes.Equal(a, b) && !(isZero(a) && isZero(b)) {
				t.Fatalf("%s element %d differs", name, i/4)
			}
		}
	}
}

func isZero(b []byte) bool { return b[0] == 0 && b[1] == 0 && b[2] == 0 && b[3]&0x7f == 0 }

// TestRequantRefusals is acceptance d for requant: rows that do not fit the
// target (the tiny model's K = 256 is below ik_llama.cpp's 512 for IQ*_BN)
// are refused naming the tensor, or written as F16 with --allow-fallback;
// the output file is never left behind; bad inputs name the file.
func TestRequantRefusals(t *testing.T) {
	in := goldenDir + "/gguf/ggml-model-i2_s.gguf"
	for _, ot := range []OutType{OutIQ2BN, OutIQ1BN} {
		out := filepath.Join(t.TempDir(), "o.gguf")
		_, err := RequantFile(t.Context(), in, out, false, false, RequantOptions{OutType: ot})
		if err == nil || !strings.Contains(err.Error(), "blk.0.") || !strings.Contains(err.Error(), "--allow-fallback") {
			t.Errorf("%s: err %v", ot, err)
		}
		if _, serr := os.Stat(out); serr == nil {
			t.Errorf("%s: refused requant left %s", ot, out)
		}
		o, p := requant(t, in, RequantOptions{OutType: ot, AllowFallback: true})
		ti, _ := openGGUF(t, o).Tensor("blk.0.attn_q.weight")
		if ti.Type != gguf.TypeF16 || len(p.Warnings) == 0 {
			t.Errorf("%s --allow-fallback: %s, warnings %q", ot, ti.Type, p.Warnings)
		}
	}
	// An ARM-layout read of an I2_S whose K is not a multiple of 64 is not
	// possible here; a wrong --from-layout on the x86 file gives other codes,
	// which the x86 → arm → x86 round trip above rules out for the right one.
	if _, err := RequantFile(t.Context(), "testdata-missing.gguf", filepath.Join(t.TempDir(), "o.gguf"), false, false, RequantOptions{OutType: OutTQ2_0}); err == nil || !strings.Contains(err.Error(), "testdata-missing.gguf") {
		t.Errorf("missing input: %v", err)
	}
}

// TestRequantTL: bitnet.cpp's golden TL1/TL2 files (with their
// kernel_config.ini) requantized to TQ2_0 give llama-quantize's TQ2_0
// projections, and I2_S → TL2 → I2_S keeps the golden codes and scale.
func TestRequantTL(t *testing.T) {
	gold := openGGUF(t, filepath.Join(ecoDir, "tiny-bitnet-tq2_0.gguf"))
	for _, arch := range []string{"tl1", "tl2"} {
		ini, err := os.ReadFile(goldenDir + "/gguf/kernel_config_" + arch + ".ini")
		if err != nil {
			t.Fatal(err)
		}
		out, _ := requant(t, goldenDir+"/gguf/ggml-model-"+arch+".gguf", RequantOptions{OutType: OutTQ2_0, KernelConfig: ini})
		sameProjections(t, arch+" → tq2_0", gold, openGGUF(t, out), nil)
	}
	tl2, _ := requant(t, goldenDir+"/gguf/ggml-model-i2_s.gguf", RequantOptions{OutType: OutTL2})
	back, _ := requant(t, tl2, RequantOptions{OutType: OutI2S})
	sameProjections(t, "i2_s → tl2 → i2_s", openGGUF(t, goldenDir+"/gguf/ggml-model-i2_s.gguf"), openGGUF(t, back), func(b []byte) []byte { return b[:len(b)-28] })
}

// bitnet.cpp's Q8_0-embedding file: token_embd keeps Q8_0 by default and is
// dequantized (q·d) to F16 with --token-embedding-type F16; Q6_K retyping
// round-trips through ggml's reference quantizer.
func TestRequantQ8Embedding(t *testing.T) {
	in := goldenDir + "/gguf/ggml-model-i2_s-q8embd.gguf"
	keep, _ := requant(t, in, RequantOptions{OutType: OutTQ2_0})
	if ti, _ := openGGUF(t, keep).Tensor("token_embd.weight"); ti.Type != gguf.TypeQ8_0 {
		t.Errorf("token_embd %s, want Q8_0 kept", ti.Type)
	}
	f16, _ := requant(t, in, RequantOptions{OutType: OutTQ2_0, TokenEmbeddingType: "F16"})
	src := openGGUF(t, in)
	ti, _ := src.Tensor("token_embd.weight")
	raw, _ := src.TensorData("token_embd.weight")
	n := int(ti.Ne[0] * ti.Ne[1])
	want := make([]float32, n)
	if err := decodeFloats(want, gguf.TypeQ8_0, raw); err != nil {
		t.Fatal(err)
	}
	got := make([]float32, n)
	gd, _ := openGGUF(t, f16).TensorData("token_embd.weight")
	if err := decodeFloats(got, gguf.TypeF16, gd); err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if w := quantize.F16ToF32(quantize.F32ToF16(want[i])); got[i] != w {
			t.Fatalf("element %d: F16 %v, Q8_0 value %v rounds to %v", i, got[i], want[i], w)
		}
	}
	q6, _ := requant(t, in, RequantOptions{OutType: OutI2S, TokenEmbeddingType: "q6_k"})
	if ti, _ := openGGUF(t, q6).Tensor("token_embd.weight"); ti.Type != gguf.TypeQ6_K {
		t.Errorf("token_embd %s, want Q6_K", ti.Type)
	}
}

// A NaN/Inf stored scale is refused, naming the tensor, and no output is
// left: a TQ1_0 block d of 0x7e00 requanted to TQ2_0, an IQ2_BN f32 row
// scale NaN requanted to TQ2_0 with --allow-fallback, a Q8_0 token_embd
// block d of 0x7c00 (+Inf) that requant would copy.
func TestRequantNonFiniteScale(t *testing.T) {
	tq1, _ := requant(t, goldenDir+"/gguf/ggml-model-i2_s.gguf", RequantOptions{OutType: OutTQ1_0})
	patch := func(in, tensor string, off int, v uint16) string { return patchU16(t, in, tensor, off, v) }
	for _, c := range []struct {
		name, in string
		opts     RequantOptions
		want     string
	}{
		{"TQ1_0 NaN d", patch(tq1, "blk.0.attn_q.weight", 54+52, 0x7e00), RequantOptions{OutType: OutTQ2_0}, "tensor blk.0.attn_q.weight: TQ1_0 block 1 scale is NaN"},
		{"IQ2_BN NaN row scale", patch(filepath.Join(ecoDir, "tiny-b158-h512-iq2_bn.gguf"), "blk.0.attn_q.weight", 2, 0x7fc0), RequantOptions{OutType: OutTQ2_0, AllowFallback: true}, "tensor blk.0.attn_q.weight: IQ2_BN scale 0 is NaN"},
		{"Q4_K token_embd Inf dmin", patch("../testdata/golden/q4k-embd/tiny-bitnet-i2_s-q4k-llamaquantize.gguf", "token_embd.weight", 144+2, 0x7c00), RequantOptions{OutType: OutTQ2_0}, "tensor token_embd.weight: Q4_K block 1 min scale dmin is +Inf"},
		{"Q8_0 token_embd Inf d", patch(goldenDir+"/gguf/ggml-model-i2_s-q8embd.gguf", "token_embd.weight", 0, 0x7c00), RequantOptions{OutType: OutTQ2_0}, "tensor token_embd.weight: Q8_0 block 0 scale is +Inf"},
	} {
		out := filepath.Join(t.TempDir(), "o.gguf")
		_, err := RequantFile(t.Context(), c.in, out, false, false, c.opts)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: err %v, want one line with %q", c.name, err, c.want)
		}
		if _, serr := os.Stat(out); serr == nil {
			t.Errorf("%s: refused requant left %s", c.name, out)
		}
	}
}

// TestRequantEmbeddingOutTypes: requant writes for a BitNet embedding model
// only what hf2gguf writes for it (F32, F16, BF16, I2_S: bitnet.cpp's
// embedding pipeline; no other runtime has their input norms). TQ2_0 and
// IQ2_BN are refused in one line naming the arch and the outtypes, and no
// output is left; F16 is written.
func TestRequantEmbeddingOutTypes(t *testing.T) {
	for _, s := range []embedfixture.Shape{embedfixture.Qwen3, embedfixture.Gemma3} {
		dir := t.TempDir()
		in := filepath.Join(dir, "in-i2_s.gguf")
		if _, err := ConvertDir(t.Context(), writeEmbedFixture(t, s, embedfixture.Options{}), in, false, false, Options{OutType: OutI2S, NoVocab: true}); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			ot   OutType
			want string
		}{
			{OutTQ2_0, "--outtype tq2_0 is not supported for arch "},
			{OutIQ2BN, "--outtype iq2_bn is not supported for arch "},
			{OutF16, ""},
		} {
			out := filepath.Join(dir, string(c.ot)+".gguf")
			_, err := RequantFile(t.Context(), in, out, false, false, RequantOptions{OutType: c.ot})
			if c.want == "" {
				if err != nil {
					t.Errorf("%s → %s: %v", in, c.ot, err)
				}
				continue
			}
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "(supported: f32, f16, bf16, i2_s)") || !strings.Contains(err.Error(), "in-i2_s.gguf") {
				t.Errorf("%s → %s: %v, want %q with the supported list", in, c.ot, err, c.want)
			}
			if _, serr := os.Stat(out); serr == nil {
				t.Errorf("%s: refused requant left a file", out)
			}
		}
		// The F16 token_embd's rows of 128 cannot be Q6_K: the error says
		// it is F16 already rather than offering an F16 fallback.
		if ti, _ := openGGUF(t, in).Tensor("token_embd.weight"); ti.Type != gguf.TypeF16 {
			t.Fatalf("token_embd is %s, want F16", ti.Type)
		}
		_, err := RequantFile(t.Context(), in, filepath.Join(dir, "q6.gguf"), false, false, RequantOptions{OutType: OutI2S, TokenEmbeddingType: "q6_k"})
		if want := "tensor token_embd.weight: row length 128 (ne [128 " + strconv.Itoa(s.Vocab) + "]) is not a multiple of 256 (the Q6_K block), so it cannot be Q6_K; it is F16 already: leave --token-embedding-type out to keep it as it is"; err == nil || !strings.HasSuffix(err.Error(), want) {
			t.Errorf("%s → Q6_K embedding: %v, want …%q", s.Arch, err, want)
		}
	}
}

// TestRequantRetypeQ4K: a Q4_K token_embd (bitnet.cpp's llama-quantize
// --token-embedding-type q4_k file, testdata/golden/q4k-embd) is decoded as
// ggml's dequantize_row_q4_K does and stored as F16 with
// --token-embedding-type f16: every value is the F16 rounding of the
// dequantized one.
func TestRequantRetypeQ4K(t *testing.T) {
	in := "../testdata/golden/q4k-embd/tiny-bitnet-i2_s-q4k-llamaquantize.gguf"
	out, _ := requant(t, in, RequantOptions{OutType: OutI2S, TokenEmbeddingType: "f16"})
	src, err := reader.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := reader.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	q, _ := src.TensorData("token_embd.weight")
	h, _ := dst.TensorData("token_embd.weight")
	ti, _ := dst.Tensor("token_embd.weight")
	want := make([]float32, len(q)/quantize.Q4KBytes*quantize.QKK)
	quantize.DequantizeQ4K(want, q)
	if ti.Type != gguf.TypeF16 || len(h) != 2*len(want) {
		t.Fatalf("token_embd %s, %d bytes; want F16 of %d values", ti.Type, len(h), len(want))
	}
	for i, v := range want {
		if got := binary.LittleEndian.Uint16(h[2*i:]); got != quantize.F32ToF16(v) {
			t.Fatalf("value %d: F16 %#04x, want %#04x (of %v)", i, got, quantize.F32ToF16(v), v)
		}
	}
}

// patchU16 copies the GGUF in with the little-endian uint16 at byte off of
// tensor's data set to v, and returns the copy's path.
func patchU16(t *testing.T, in, tensor string, off int, v uint16) string {
	t.Helper()
	f := openGGUF(t, in)
	ti, ok := f.Tensor(tensor)
	if !ok {
		t.Fatalf("%s: no %s", in, tensor)
	}
	b, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	at := int(f.DataOffset+ti.Offset) + off
	b[at], b[at+1] = byte(v), byte(v>>8)
	p := filepath.Join(t.TempDir(), "bad.gguf")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A finite input scale that the target's f16 scales cannot hold (beyond
// 65504) is refused naming the tensor, the row or block and the value, and
// no output is left: an IQ2_BN f32 row scale of 99840 (0x47c30000) to
// TQ2_0, TQ1_0 and IQ1_BN; an I2_S tensor scale of 99840 to TQ2_0; a Q4_K
// token_embd block d of 65504 (values up to 6.2e7) retyped to Q8_0, whose
// d = max/127 would be +Inf.
func TestRequantOutOfRangeScale(t *testing.T) {
	iq2 := patchU16(t, filepath.Join(ecoDir, "tiny-b158-h512-iq2_bn.gguf"), "blk.0.attn_q.weight", 2, 0x47c3)
	i2sIn := goldenDir + "/gguf/ggml-model-i2_s.gguf"
	ti, _ := openGGUF(t, i2sIn).Tensor("blk.0.attn_q.weight")
	at := int(ti.Ne[0]*ti.Ne[1]) / 4 // the f32 tensor scale after the codes
	i2s := patchU16(t, patchU16(t, i2sIn, "blk.0.attn_q.weight", at, 0), "blk.0.attn_q.weight", at+2, 0x47c3)
	q4k := patchU16(t, "../testdata/golden/q4k-embd/tiny-bitnet-i2_s-q4k-llamaquantize.gguf", "token_embd.weight", 0, 0x7bff)
	for _, c := range []struct {
		name, in string
		opts     RequantOptions
		want     string
	}{
		{"IQ2_BN → TQ2_0", iq2, RequantOptions{OutType: OutTQ2_0, AllowFallback: true}, "tensor blk.0.attn_q.weight: the scale of block 0 (row 0) is 99840, out of TQ2_0's range (f16 scales, max 65504)"},
		{"IQ2_BN → TQ1_0", iq2, RequantOptions{OutType: OutTQ1_0, AllowFallback: true}, "tensor blk.0.attn_q.weight: the scale of block 0 (row 0) is 99840, out of TQ1_0's range (f16 scales, max 65504)"},
		{"IQ2_BN → IQ1_BN", iq2, RequantOptions{OutType: OutIQ1BN, AllowFallback: true}, "tensor blk.0.attn_q.weight: the scale of row 0 is 99840, out of IQ1_BN's range (f16 scales, max 65504)"},
		{"I2_S → TQ2_0", i2s, RequantOptions{OutType: OutTQ2_0}, "tensor blk.0.attn_q.weight: the scale of row 0 is 99840, out of TQ2_0's range (f16 scales, max 65504)"},
		{"Q4_K → Q8_0", q4k, RequantOptions{OutType: OutI2S, TokenEmbeddingType: "q8_0"}, "tensor token_embd.weight: Q8_0 block 0 (elements 0…31): max |value| "},
		{"Q4_K → F16", q4k, RequantOptions{OutType: OutI2S, TokenEmbeddingType: "f16"}, "exceeds the F16 range (65504); keep this tensor F32 (or BF16) instead (--token-embedding-type f32 or bf16)"},
	} {
		out := filepath.Join(t.TempDir(), "o.gguf")
		_, err := RequantFile(t.Context(), c.in, out, false, false, c.opts)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: err %v, want one line with %q", c.name, err, c.want)
		}
		if err != nil && !strings.HasPrefix(err.Error(), c.in+": tensor ") {
			t.Errorf("%s: err %v: want the input file and the tensor first, not the writer's wrapping", c.name, err)
		}
		if err != nil && !strings.Contains(err.Error(), "; keep ") {
			t.Errorf("%s: err %v does not say what to do", c.name, err)
		}
		if _, serr := os.Stat(out); serr == nil {
			t.Errorf("%s: refused requant left %s", c.name, out)
		}
	}
}

// setArch sets general.architecture to arch (removes it when arch is
// "\x00none"), keeping every other key as it is.
func setArch(arch string) func([]gguf.KV) []gguf.KV {
	return func(kvs []gguf.KV) []gguf.KV {
		var out []gguf.KV
		for _, kv := range kvs {
			if kv.Key == "general.architecture" {
				if arch == "\x00none" {
					continue
				}
				kv.Value = gguf.String(arch)
			}
			out = append(out, kv)
		}
		return out
	}
}

// requant refuses a general.architecture it does not read (missing, empty,
// another case, trailing space, binary bytes, 1 MB) in one short line that
// lists the ones it reads, before any outtype rule (an embedding arch
// relabelled could otherwise be written as TL1); an arch label that
// contradicts the keys is refused naming the key every runtime needs; a
// token_embd whose rows contradict {arch}.vocab_size is refused naming the
// key. No output is left.
func TestRequantArchAndKeys(t *testing.T) {
	in := goldenDir + "/gguf/ggml-model-i2_s.gguf"
	known := "(bitnet, bitnet-25, bitnet-b1.58, gemma3, llama, qwen2, qwen3); fix the GGUF metadata"
	long := strings.Repeat("b", 1<<20)
	// the golden file's bitnet.vocab_size of 512 set to 256
	badVocab := func(kvs []gguf.KV) []gguf.KV {
		for i, kv := range kvs {
			if kv.Key == "bitnet.vocab_size" {
				kvs[i].Value = gguf.Uint32(256)
				return kvs
			}
		}
		t.Fatal("no bitnet.vocab_size")
		return nil
	}
	for _, c := range []struct {
		name, in string
		opts     RequantOptions
		want     string
	}{
		{"missing", testutil.WithKVs(t, in, "", setArch("\x00none")), RequantOptions{OutType: OutTL1}, "key general.architecture: missing (requant reads bitnet, bitnet-25, bitnet-b1.58, gemma3, llama, qwen2, qwen3); fix the GGUF metadata"},
		{"empty", testutil.WithKVs(t, in, "", setArch("")), RequantOptions{OutType: OutTQ2_0}, `general.architecture "" is not an architecture requant reads ` + known},
		{"upper case", testutil.WithKVs(t, in, "", setArch("BITNET")), RequantOptions{OutType: OutTQ2_0}, `general.architecture "BITNET" is not an architecture requant reads ` + known},
		{"trailing space", testutil.WithKVs(t, in, "", setArch("bitnet ")), RequantOptions{OutType: OutTQ2_0}, `general.architecture "bitnet " is not an architecture requant reads ` + known},
		{"NUL and 0xff", testutil.WithKVs(t, in, "", setArch("bit\x00n\xffet")), RequantOptions{OutType: OutTQ2_0}, `general.architecture "bit\x00n\xffet" is not an architecture requant reads ` + known},
		{"1 MB", testutil.WithKVs(t, in, "", setArch(long)), RequantOptions{OutType: OutTQ2_0}, `general.architecture "` + long[:64] + `"… (1048576 bytes) is not an architecture requant reads ` + known},
		{"bitnet keys as llama", testutil.WithKVs(t, in, "", setArch("llama")), RequantOptions{OutType: OutTQ2_0, AllowFallback: true}, "key llama.block_count: missing or 0; every runtime reads it"},
		{"bitnet keys as bitnet-25", testutil.WithKVs(t, in, "", setArch("bitnet-25")), RequantOptions{OutType: OutTQ2_0}, "key bitnet-25.block_count: missing or 0; every runtime reads it"},
		{"vocab_size", testutil.WithKVs(t, in, "", badVocab), RequantOptions{OutType: OutTQ2_0}, "tensor token_embd.weight: ne [256 512] contradicts key bitnet.vocab_size = 256 (ne[1] must be 256)"},
	} {
		out := filepath.Join(t.TempDir(), "o.gguf")
		_, err := RequantFile(t.Context(), c.in, out, false, false, c.opts)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") || len(err.Error()) > 400 {
			t.Errorf("%s: err %.400v, want one short line with %q", c.name, err, c.want)
		}
		if _, serr := os.Stat(out); serr == nil {
			t.Errorf("%s: refused requant left %s", c.name, out)
		}
	}
}
