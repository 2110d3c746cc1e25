package convert

import (
	"bytes"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/format"
	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
)

const ecoDir = "../testdata/golden/ecosystems"

// TestGoldenTQOuttypes is acceptance a through hf2gguf: --outtype tq2_0 and
// tq1_0 of the tiny checkpoint give every tensor bitnet.cpp's llama-quantize
// wrote from the golden F32 file (same names, types, ne and bytes: the 14
// projections, token_embd F16 and the F32 norms), arch bitnet, file_type
// 37/36 and the hidden_activation key.
func TestGoldenTQOuttypes(t *testing.T) {
	for _, c := range []struct {
		out  OutType
		file string
		ft   uint64
	}{{OutTQ2_0, "tiny-bitnet-tq2_0.gguf", 37}, {OutTQ1_0, "tiny-bitnet-tq1_0.gguf", 36}} {
		ours := openGGUF(t, convertGolden(t, c.out))
		gold := openGGUF(t, filepath.Join(ecoDir, c.file))
		sameTensors(t, string(c.out), gold, ours)
		if ours.Arch() != "bitnet" {
			t.Errorf("%s: arch %q", c.out, ours.Arch())
		}
		if ft, _ := ours.Uint("general.file_type"); ft != c.ft {
			t.Errorf("%s: file_type %d, want %d", c.out, ft, c.ft)
		}
		if a, _ := ours.String("bitnet.hidden_activation"); a != "silu" {
			t.Errorf("%s: bitnet.hidden_activation %q, want silu", c.out, a)
		}
	}
}

// sameTensors checks every tensor of gold is in ours with the same type, ne
// and bytes.
func sameTensors(t *testing.T, what string, gold, ours *reader.File) {
	t.Helper()
	if len(gold.Tensors) != len(ours.Tensors) {
		t.Errorf("%s: %d tensors, golden %d", what, len(ours.Tensors), len(gold.Tensors))
	}
	for _, g := range gold.Tensors {
		o, ok := ours.Tensor(g.Name)
		if !ok {
			t.Errorf("%s: %s missing", what, g.Name)
			continue
		}
		if o.Type != g.Type || !equalNe(o.Ne, g.Ne) {
			t.Errorf("%s %s: %s %v, golden %s %v", what, g.Name, o.Type, o.Ne, g.Type, g.Ne)
			continue
		}
		gd, _ := gold.TensorData(g.Name)
		od, _ := ours.TensorData(g.Name)
		if !bytes.Equal(gd, od) {
			t.Errorf("%s %s: bytes differ", what, g.Name)
		}
	}
}

func equalNe(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestIQOuttypesH512: --outtype iq2_bn / iq1_bn of b158-h512/hf (with
// --token-embedding-type F32, as the golden files were made) give the
// ternary codes of ik_llama.cpp's files exactly, and row scales within the
// bf16 rounding the golden F32 file applied to the abs-mean (its README: the
// golden projections hold t × bf16(abs-mean); we ternarize the master
// weights in f32). Arch stays bitnet-b1.58 (ik_llama.cpp runs it), file_type
// 137/136, relu2 recorded.
func TestIQOuttypesH512(t *testing.T) {
	for _, c := range []struct {
		out  OutType
		file string
		ft   uint64
	}{{OutIQ2BN, "tiny-b158-h512-iq2_bn.gguf", 137}, {OutIQ1BN, "tiny-b158-h512-iq1_bn.gguf", 136}} {
		path := filepath.Join(t.TempDir(), "out.gguf")
		if _, err := ConvertDir(t.Context(), "../testdata/golden/b158-h512/hf", path, false, false, Options{OutType: c.out, ModelName: "tiny-b158-h512", TokenEmbeddingType: "F32"}); err != nil {
			t.Fatal(err)
		}
		ours, gold := openGGUF(t, path), openGGUF(t, filepath.Join(ecoDir, c.file))
		if ours.Arch() != "bitnet-b1.58" {
			t.Errorf("%s: arch %q", c.out, ours.Arch())
		}
		if ft, _ := ours.Uint("general.file_type"); ft != c.ft {
			t.Errorf("%s: file_type %d, want %d", c.out, ft, c.ft)
		}
		if a, _ := ours.String("bitnet-b1.58.hidden_activation"); a != "relu2" {
			t.Errorf("%s: hidden_activation %q", c.out, a)
		}
		n := 0
		for _, g := range gold.Tensors {
			o, ok := ours.Tensor(g.Name)
			if !ok || o.Type != g.Type || !equalNe(o.Ne, g.Ne) {
				t.Errorf("%s %s: %v, golden %s %v", c.out, g.Name, o, g.Type, g.Ne)
				continue
			}
			if !format.IsTernary(g.Type) {
				continue
			}
			n++
			k, m := int(g.Ne[0]), int(g.Ne[1])
			f, _ := format.ForType(g.Type, format.LayoutX86, nil)
			gd, _ := gold.TensorData(g.Name)
			od, _ := ours.TensorData(g.Name)
			gc, oc := make([]int8, k*m), make([]int8, k*m)
			gs, err1 := f.Decode(gc, gd, k, m)
			os, err2 := f.Decode(oc, od, k, m)
			if err1 != nil || err2 != nil || !bytes.Equal(i8bytes(gc), i8bytes(oc)) {
				t.Errorf("%s %s: codes differ (%v %v)", c.out, g.Name, err1, err2)
				continue
			}
			for r := range gs {
				if math.Abs(float64(gs[r]-os[r])) > float64(gs[r])/256 {
					t.Errorf("%s %s row %d: scale %v, golden %v (beyond bf16 rounding)", c.out, g.Name, r, os[r], gs[r])
					break
				}
			}
		}
		if n != 14 {
			t.Errorf("%s: %d ternary tensors compared", c.out, n)
		}
	}
}

func i8bytes(c []int8) []byte {
	b := make([]byte, len(c))
	for i, v := range c {
		b[i] = byte(v)
	}
	return b
}

// TestTQRelu2Notice: a relu² model written for mainline llama.cpp gets arch
// bitnet with every {arch}.* key renamed, bitnet.hidden_activation = relu2,
// and the notice that a loader without the fix runs SiLU.
func TestTQRelu2Notice(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.gguf")
	p, err := ConvertDir(t.Context(), "../testdata/golden/b158-h512/hf", path, false, false, Options{OutType: OutTQ2_0})
	if err != nil {
		t.Fatal(err)
	}
	f := openGGUF(t, path)
	if f.Arch() != "bitnet" {
		t.Errorf("arch %q, want bitnet", f.Arch())
	}
	for _, kv := range f.KVs {
		if strings.HasPrefix(kv.Key, "bitnet-b1.58.") {
			t.Errorf("key %s not renamed", kv.Key)
		}
	}
	if a, _ := f.String("bitnet.hidden_activation"); a != "relu2" {
		t.Errorf("bitnet.hidden_activation %q, want relu2", a)
	}
	if n, ok := f.Uint("bitnet.embedding_length"); !ok || n != 512 {
		t.Errorf("bitnet.embedding_length %d %v", n, ok)
	}
	if !containsWarning(p, "relu²") {
		t.Errorf("no relu² notice in %q", p.Warnings)
	}
}

// TestI2SLayoutKV: --i2s-layout arm writes the ARM layout (the codes of the
// x86 file re-packed, so the file equals bitnet.cpp 16da220's aarch64
// quantize_i2_s output tensor for tensor) and records the layout.
func TestI2SLayoutKV(t *testing.T) {
	x86 := openGGUF(t, convertGolden(t, OutI2S))
	arm := openGGUF(t, convertGolden(t, OutI2S, func(o *Options) { o.I2SLayout = format.LayoutARM }))
	if l, _ := x86.String(format.LayoutKey); l != "x86" {
		t.Errorf("x86 file records layout %q", l)
	}
	if l, _ := arm.String(format.LayoutKey); l != "arm" {
		t.Errorf("arm file records layout %q", l)
	}
	gold := openGGUF(t, filepath.Join(ecoDir, "tiny-bitnet-i2_s-arm.gguf"))
	for _, ti := range gold.Tensors {
		if ti.Type != gguf.TypeI2S {
			continue
		}
		gd, _ := gold.TensorData(ti.Name)
		od, _ := arm.TensorData(ti.Name)
		if !bytes.Equal(gd, od) {
			t.Errorf("%s: ARM bytes differ from quantize_i2_s (aarch64, 16da220)", ti.Name)
		}
	}
}

// TestRowRefusalEveryType is acceptance d: a projection whose row length
// does not fit the type's block (K = 320: not a multiple of 64, 128 or 256)
// is refused naming the tensor and K for every ternary outtype, and written
// as F16 (and listed) with --allow-fallback. Also Q6_K/Q8_0 embeddings whose
// rows do not fit.
func TestRowRefusalEveryType(t *testing.T) {
	dir := t.TempDir()
	bitnetFixture(t, dir, llamaLayout{hidden: 256, ff: 320, heads: 4, kv: 4, vocab: 64, layers: 1}, nil)
	for _, ot := range []OutType{OutI2S, OutTQ1_0, OutTQ2_0, OutIQ1BN, OutIQ2BN} {
		_, _, err := convertDir(t, dir, Options{OutType: ot, NoVocab: true})
		if err == nil || !strings.Contains(err.Error(), "blk.0.ffn_down.weight") || !strings.Contains(err.Error(), "320") || !strings.Contains(err.Error(), "--allow-fallback") {
			t.Errorf("%s: err = %v, want one naming ffn_down, K=320 and --allow-fallback", ot, err)
			continue
		}
		out, p, err := convertDir(t, dir, Options{OutType: ot, NoVocab: true, AllowFallback: true})
		if err != nil {
			t.Errorf("%s --allow-fallback: %v", ot, err)
			continue
		}
		ti, _ := openGGUF(t, out).Tensor("blk.0.ffn_down.weight")
		if ti.Type != gguf.TypeF16 || !containsWarning(p, "written as F16: blk.0.ffn_down.weight") {
			t.Errorf("%s: ffn_down %v, warnings %q", ot, ti.Type, p.Warnings)
		}
	}
	// hidden 320: Q6_K needs rows of 256.
	dir = t.TempDir()
	bitnetFixture(t, dir, llamaLayout{hidden: 320, ff: 512, heads: 4, kv: 4, vocab: 64, layers: 1}, nil)
	if _, _, err := convertDir(t, dir, Options{OutType: OutF16, NoVocab: true, TokenEmbeddingType: "q6_k"}); err == nil || !strings.Contains(err.Error(), "token_embd") {
		t.Errorf("Q6_K embedding of hidden 320: err = %v", err)
	}
	if _, _, err := convertDir(t, dir, Options{OutType: OutF16, NoVocab: true, TokenEmbeddingType: "Q8_0"}); err != nil {
		t.Errorf("Q8_0 embedding of hidden 320: %v", err)
	}
}
