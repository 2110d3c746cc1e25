package convert

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/dummy"
	"github.com/bitnet-convert/bitnet-convert/format"
	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/hf"
	"github.com/bitnet-convert/bitnet-convert/internal/testutil"
	"github.com/bitnet-convert/bitnet-convert/quantize"
	"github.com/bitnet-convert/bitnet-convert/tensormap"
)

// groupLlamaConfig is a small LlamaForCausalLM config with no
// quantization_config (a group-scaled dense checkpoint is plain
// Qwen3/Llama: shared/spec formats-2026.md §5 and table A3): hidden 256, 4
// heads of 64, 2 KV heads, FFN 512.
func groupLlamaConfig() map[string]any {
	c := nc15Config()
	delete(c, "quantization_config")
	c["vocab_size"] = 512
	c["num_hidden_layers"] = 1
	return c
}

// groupValues draws an [rows, cols] group-scaled ternary matrix: per
// 128-input group one d = 2^e·(1 + m/8) (e in [−12, 2], exact in f16 and
// bf16) and codes in {−1, 0, +1}; one group in 16 is all zero, one in 8 has
// its first 64 inputs zero (a Q2_0 block with d = 0), and zeros are −0 half
// the time.
func groupValues(seed uint64, rows, cols int) []float32 {
	r := rand.New(rand.NewPCG(seed, uint64(rows*cols)))
	v := make([]float32, rows*cols)
	for g := 0; g < len(v); g += GroupScaledQK {
		kind := r.IntN(16)
		d := float32(math.Ldexp(1+float64(r.IntN(8))/8, r.IntN(15)-12))
		for i := g; i < g+GroupScaledQK; i++ {
			c := r.IntN(3) - 1
			if kind == 0 || (kind <= 2 && i-g < 64) {
				c = 0
			}
			switch {
			case c != 0:
				v[i] = float32(c) * d
			case r.IntN(2) == 0:
				v[i] = float32(math.Copysign(0, -1))
			}
		}
	}
	return v
}

// encodeAs returns v in dtype dt (values exact in dt).
func encodeAs(v []float32, dt hf.DType) []byte {
	switch dt {
	case hf.F16:
		b := make([]byte, 2*len(v))
		for i, f := range v {
			binary.LittleEndian.PutUint16(b[2*i:], quantize.F32ToF16(f))
		}
		return b
	case hf.BF16:
		return testutil.BF16Bytes(v)
	}
	return f32Bytes(v)
}

// groupFixture writes a one-layer group-scaled dense LlamaForCausalLM
// checkpoint of dtype dt into a new directory and returns it with the
// projection values by HF name. edit, when set, changes a projection's
// values before they are written.
func groupFixture(t *testing.T, dt hf.DType, edit func(name string, v []float32)) (string, map[string][]float32) {
	t.Helper()
	dir := t.TempDir()
	testutil.WriteJSON(t, filepath.Join(dir, "config.json"), groupLlamaConfig())
	ts := []hf.WriteTensor{randomBF16("model.embed_tokens.weight", 1, 512, 256), onesBF16("model.norm.weight", 256), randomBF16("lm_head.weight", 2, 512, 256)}
	vals := map[string][]float32{}
	p := "model.layers.0."
	ts = append(ts, onesBF16(p+"input_layernorm.weight", 256), onesBF16(p+"post_attention_layernorm.weight", 256))
	for i, pr := range []struct {
		name       string
		rows, cols int
	}{
		{"self_attn.q_proj", 256, 256}, {"self_attn.k_proj", 128, 256}, {"self_attn.v_proj", 128, 256}, {"self_attn.o_proj", 256, 256},
		{"mlp.gate_proj", 512, 256}, {"mlp.up_proj", 512, 256}, {"mlp.down_proj", 256, 512},
	} {
		name := p + pr.name + ".weight"
		v := groupValues(uint64(10+i), pr.rows, pr.cols)
		if edit != nil {
			edit(name, v)
		}
		vals[name] = v
		ts = append(ts, hf.WriteTensor{Name: name, DType: dt, Shape: []uint64{uint64(pr.rows), uint64(pr.cols)}, Data: hf.RawData(encodeAs(v, dt))})
	}
	if err := hf.WriteSafetensors(filepath.Join(dir, "model.safetensors"), ts, map[string]string{"format": "pt"}); err != nil {
		t.Fatal(err)
	}
	return dir, vals
}

// groupGGUFNames maps the fixture's projections to their GGUF names and
// rope head counts (llama interleaves q and k rows).
var groupGGUFNames = map[string]struct {
	gguf  string
	heads int
}{
	"self_attn.q_proj": {"attn_q", 4}, "self_attn.k_proj": {"attn_k", 2}, "self_attn.v_proj": {"attn_v", 0},
	"self_attn.o_proj": {"attn_output", 0}, "mlp.gate_proj": {"ffn_gate", 0}, "mlp.up_proj": {"ffn_up", 0}, "mlp.down_proj": {"ffn_down", 0},
}

// ggufRows returns v ([rows, cols], HF order) in the GGUF row order: with
// heads > 0, GGUF row h·d + 2i + j is HF row h·d + j·d/2 + i (bitnet.cpp
// LlamaModel.permute), written out here independently of permuteRopeRows.
func ggufRows(v []float32, rows, cols, heads int) []float32 {
	if heads == 0 {
		return v
	}
	out := make([]float32, len(v))
	d := rows / heads
	for r := 0; r < rows; r++ {
		h, rem := r/d, r%d
		src := h*d + (rem%2)*(d/2) + rem/2
		copy(out[r*cols:(r+1)*cols], v[src*cols:(src+1)*cols])
	}
	return out
}

// f16Bits is the IEEE binary16 pattern of a value that binary16 holds
// exactly as a normal number or zero (the fixture's scales), derived from
// the float32 fields (sign, exponent rebiased 127 → 15, top 10 mantissa
// bits); it panics on any other value, so it cannot hide a rounding.
func f16Bits(f float32) uint16 {
	b := math.Float32bits(f)
	if b&0x7fffffff == 0 {
		return 0
	}
	e := int(b>>23&0xff) - 127 + 15
	if e < 1 || e > 30 || b&0x1fff != 0 {
		panic("f16Bits: " + strconv.FormatFloat(float64(f), 'g', -1, 32) + " is not a normal f16")
	}
	return uint16(b>>16&0x8000) | uint16(e)<<10 | uint16(b>>13&0x3ff)
}

// expectQ2_0 is the Q2_0 encoding of v ([rows, cols], GGUF row order)
// computed from the definition (ggml-common.h block_q2_0,
// quantize_row_q2_0_ref): per 64 weights the f16 of the block's largest
// magnitude, then code w/d + 1 (0, 1, 2) of element j at byte j/4, bits
// 2·(j%4).
func expectQ2_0(v []float32) []byte {
	out := make([]byte, 0, len(v)/64*18)
	for b := 0; b < len(v); b += 64 {
		var d float32
		for _, w := range v[b : b+64] {
			d = max(d, float32(math.Abs(float64(w))))
		}
		out = binary.LittleEndian.AppendUint16(out, f16Bits(d))
		qs := make([]byte, 16)
		for j, w := range v[b : b+64] {
			c := byte(1)
			if w > 0 {
				c = 2
			} else if w < 0 {
				c = 0
			}
			qs[j/4] |= c << (2 * (j % 4))
		}
		out = append(out, qs...)
	}
	return out
}

// TestGroupScaledQ2_0Exact (acceptance c): a dense LlamaForCausalLM
// checkpoint without quantization_config whose projections are ternary times
// one scale per 128 inputs (F16 as Ternary Bonsai ships, and BF16) converts
// to Q2_0, every projection byte-equal to the encoding computed from the
// definition (codes and the f16 d of each 64-block, rows interleaved for
// llama's rope), and format's Q2_0 decoder gives back every original value
// bit for bit, except that a −0 weight reads back as +0 (Q2_0 code 1 is
// (1 − 1)·d; the same value).
func TestGroupScaledQ2_0Exact(t *testing.T) {
	for _, dt := range []hf.DType{hf.F16, hf.BF16} {
		t.Run(string(dt), func(t *testing.T) {
			dir, vals := groupFixture(t, dt, nil)
			out := filepath.Join(t.TempDir(), "q2.gguf")
			plan, err := ConvertDir(context.Background(), dir, out, false, false, Options{OutType: "q2_0", NoVocab: true})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(strings.Join(plan.Warnings, "\n"), "group-scaled ternary") {
				t.Errorf("no group-scaled notice in %q", plan.Warnings)
			}
			_, f := ggufTable(t, out)
			for stem, g := range groupGGUFNames {
				hfName := "model.layers.0." + stem + ".weight"
				name := "blk.0." + g.gguf + ".weight"
				info, ok := f.Tensor(name)
				if !ok || info.Type != gguf.TypeQ2_0 {
					t.Fatalf("%s: %v, want Q2_0", name, info.Type)
				}
				k, m := int(info.Ne[0]), int(info.Ne[1])
				want := ggufRows(vals[hfName], m, k, g.heads)
				data, err := f.TensorData(name)
				if err != nil {
					t.Fatal(err)
				}
				exp := expectQ2_0(want)
				if len(data) != len(exp) {
					t.Fatalf("%s: %d bytes, want %d", name, len(data), len(exp))
				}
				for i := range exp {
					if data[i] != exp[i] {
						t.Fatalf("%s: byte %d (block %d) is %#02x, want %#02x", name, i, i/18, data[i], exp[i])
					}
				}
				codes := make([]int8, k*m)
				scales, err := format.Q2_0{}.Decode(codes, data, k, m)
				if err != nil {
					t.Fatal(err)
				}
				zeros := 0
				for i, w := range want {
					got := float32(codes[i]) * scales[i/64]
					if w == 0 {
						zeros++
						if math.Float32bits(got) != 0 {
							t.Fatalf("%s: element %d decodes to %v, want +0", name, i, got)
						}
						continue
					}
					if math.Float32bits(got) != math.Float32bits(w) {
						t.Fatalf("%s: element %d decodes to %v (%#08x), want %v (%#08x)", name, i, got, math.Float32bits(got), w, math.Float32bits(w))
					}
				}
				if zeros == 0 || zeros == len(want) {
					t.Errorf("%s: %d zeros of %d: the fixture does not exercise both codes", name, zeros, len(want))
				}
			}
		})
	}
}

// TestGroupScaledF32Values: --outtype f32 writes a group-scaled projection
// as its original values, −0 included, rows in rope order.
func TestGroupScaledF32Values(t *testing.T) {
	dir, vals := groupFixture(t, hf.F16, nil)
	out := filepath.Join(t.TempDir(), "f32.gguf")
	if _, err := ConvertDir(context.Background(), dir, out, false, false, Options{OutType: OutF32, NoVocab: true}); err != nil {
		t.Fatal(err)
	}
	_, f := ggufTable(t, out)
	for _, stem := range []string{"self_attn.q_proj", "mlp.down_proj"} {
		g := groupGGUFNames[stem]
		info, _ := f.Tensor("blk.0." + g.gguf + ".weight")
		data, err := f.TensorData(info.Name)
		if err != nil {
			t.Fatal(err)
		}
		want := f32Bytes(ggufRows(vals["model.layers.0."+stem+".weight"], int(info.Ne[1]), int(info.Ne[0]), g.heads))
		if string(data) != string(want) {
			t.Errorf("%s: F32 bytes differ from the checkpoint's values", info.Name)
		}
	}
}

// TestGroupScaledRefusals: an outtype without per-group scales is refused
// with one line naming the tensor and suggesting --outtype q2_0 (I2_S is
// the default); --ternarize makes it the lossy abs-mean conversion, with a
// warning.
func TestGroupScaledRefusals(t *testing.T) {
	dir, _ := groupFixture(t, hf.F16, nil)
	for _, ot := range []OutType{OutTQ2_0, OutTQ1_0, OutI2S, OutTL2, OutIQ1BN, OutIQ2BN, ""} {
		_, err := ConvertDir(context.Background(), dir, filepath.Join(t.TempDir(), "x.gguf"), false, true, Options{OutType: ot, NoVocab: true, AllowFallback: true})
		if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "--outtype q2_0") ||
			!strings.Contains(err.Error(), "blk.0.") || !strings.Contains(err.Error(), "group-scaled") {
			t.Errorf("%q: error %v, want one line naming the tensor and suggesting --outtype q2_0", ot, err)
		}
	}
	out := filepath.Join(t.TempDir(), "tq2.gguf")
	plan, err := ConvertDir(context.Background(), dir, out, false, false, Options{OutType: OutTQ2_0, NoVocab: true, Ternarize: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(plan.Warnings, "\n"), "--ternarize: 7 group-scaled projection(s) re-ternarized") {
		t.Errorf("warnings %q", plan.Warnings)
	}
	got, _ := ggufTable(t, out)
	if got["blk.0.ffn_down.weight"] != "TQ2_0[512 256]" {
		t.Errorf("ffn_down %s", got["blk.0.ffn_down.weight"])
	}
	plan, err = ConvertDir(context.Background(), dir, filepath.Join(t.TempDir(), "q.gguf"), false, true, Options{OutType: "q2_0", NoVocab: true, Ternarize: true})
	if err != nil {
		t.Fatalf("q2_0 --ternarize: %v", err)
	}
	if !strings.Contains(strings.Join(plan.Warnings, "\n"), "--ternarize has no effect: q2_0 keeps the group-scaled projections exactly") {
		t.Errorf("q2_0 --ternarize: warnings %q", plan.Warnings)
	}
}

// TestGroupScaledNearMisses: a dense checkpoint that is not group-scaled
// ternary keeps today's refusal of a non-BitNet LlamaForCausalLM, for every
// way of missing by a little: one value one ulp off its group's magnitude,
// a third magnitude, a per-tensor ternary model with noise, ordinary float
// weights, an Inf, a NaN, and all-zero projections.
func TestGroupScaledNearMisses(t *testing.T) {
	const target = "model.layers.0.mlp.up_proj.weight"
	// last is the index of the last nonzero value of a group that has
	// another one before it (so the changed value is not the one the
	// detector compares the others with).
	last := func(v []float32) int {
		for g := 0; g < len(v); g += GroupScaledQK {
			n, at := 0, -1
			for i, w := range v[g : g+GroupScaledQK] {
				if w != 0 {
					n, at = n+1, g+i
				}
			}
			if n >= 2 {
				return at
			}
		}
		panic("no group with two nonzero values")
	}
	cases := []struct {
		name string
		dt   hf.DType
		edit func(v []float32)
	}{
		{"one f32 ulp up", hf.F32, func(v []float32) { i := last(v); v[i] = math.Float32frombits(math.Float32bits(v[i]) + 1) }},
		{"one f32 ulp down", hf.F32, func(v []float32) { i := last(v); v[i] = math.Float32frombits(math.Float32bits(v[i]) - 1) }},
		{"one f16 ulp", hf.F16, func(v []float32) { i := last(v); v[i] = quantize.F16ToF32(quantize.F32ToF16(v[i]) + 1) }},
		{"one bf16 ulp", hf.BF16, func(v []float32) { i := last(v); v[i] = math.Float32frombits(math.Float32bits(v[i]) + 1<<16) }},
		{"three magnitudes", hf.F16, func(v []float32) {
			for i := range v[:GroupScaledQK] {
				v[i] = float32(i%3+1) * 0.25
			}
		}},
		{"noisy per-tensor ternary", hf.F16, func(v []float32) {
			r := rand.New(rand.NewPCG(1, 2))
			for i := range v {
				v[i] = quantize.F16ToF32(quantize.F32ToF16(float32(r.IntN(3)-1)*0.5 + float32(r.NormFloat64()*1e-3)))
			}
		}},
		{"ordinary weights", hf.BF16, func(v []float32) {
			r := rand.New(rand.NewPCG(3, 4))
			for i := range v {
				v[i] = float32(r.NormFloat64() * 0.02)
			}
		}},
		{"inf", hf.F16, func(v []float32) { v[5] = float32(math.Inf(-1)) }},
		{"nan", hf.F32, func(v []float32) { v[5] = float32(math.NaN()) }},
		{"all zero", hf.F16, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir, _ := groupFixture(t, tc.dt, func(name string, v []float32) {
				switch {
				case tc.edit == nil:
					clear(v)
				case name == target:
					tc.edit(v)
				}
			})
			_, err := ConvertDir(context.Background(), dir, filepath.Join(t.TempDir(), "x.gguf"), false, true, Options{OutType: "q2_0", NoVocab: true})
			if err == nil || !errors.Is(err, ErrUnknownArch) || !strings.Contains(err.Error(), `LlamaForCausalLM without quantization_config.quant_method "bitnet" is not a BitNet checkpoint`) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %v, want today's one-line refusal", err)
			}
			if tc.edit != nil && !strings.Contains(err.Error(), target+" is not, at element") {
				t.Errorf("error %v does not name %s, the projection that breaks the pattern", err, target)
			}
		})
	}
}

// TestGroupScaledF16Scale: a group scale f16 cannot hold exactly (bf16
// overflow past 65504, a bf16 value in f16's subnormal range with bits f16
// lacks, an f32 value with more precision than f16) refuses the Q2_0
// conversion with one line naming the tensor and the scale; F32 output
// keeps such values.
func TestGroupScaledF16Scale(t *testing.T) {
	const target = "model.layers.0.self_attn.v_proj.weight"
	for _, tc := range []struct {
		name string
		dt   hf.DType
		d    float32
	}{
		{"bf16 overflow", hf.BF16, 131072},
		{"bf16 subnormal loss", hf.BF16, float32(math.Ldexp(1+1.0/128, -20))},
		{"f32 precision", hf.F32, 1 + 1.0/4096},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, _ := groupFixture(t, tc.dt, func(name string, v []float32) {
				if name != target {
					return
				}
				for i := 256 + 128; i < 256+256; i++ { // row 1, second group
					v[i] = tc.d * float32(i%3-1)
				}
			})
			_, err := ConvertDir(context.Background(), dir, filepath.Join(t.TempDir(), "x.gguf"), false, true, Options{OutType: "q2_0", NoVocab: true})
			if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "blk.0.attn_v.weight") ||
				!strings.Contains(err.Error(), "row 1, inputs 128..255") || !strings.Contains(err.Error(), "not an f16 value") {
				t.Errorf("error %v, want one line naming attn_v and its scale", err)
			}
			if _, err := ConvertDir(context.Background(), dir, filepath.Join(t.TempDir(), "f32.gguf"), false, false, Options{OutType: OutF32, NoVocab: true}); err != nil {
				t.Errorf("f32: %v", err)
			}
		})
	}
}

// TestGroupScaledConvertible: dummy's check (Convertible) still refuses a
// LlamaForCausalLM config without quantization_config, since the config
// alone does not say the values are group-scaled; another quant_method is
// refused by the config as before.
func TestGroupScaledConvertible(t *testing.T) {
	cfg, err := hf.ParseConfig([]byte(`{"architectures":["LlamaForCausalLM"],"hidden_size":256}`), "config.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := Convertible(cfg); err == nil || !strings.Contains(err.Error(), "is not a BitNet checkpoint") {
		t.Errorf("Convertible: %v", err)
	}
	cfg, _ = hf.ParseConfig([]byte(`{"architectures":["LlamaForCausalLM"],"quantization_config":{"quant_method":"gptq"}}`), "config.json")
	if _, err := converterFor(cfg); err == nil || !strings.Contains(err.Error(), "is not a BitNet checkpoint") {
		t.Errorf("gptq: %v", err)
	}
}

// TestGroupTernary: the detector on hand-made groups.
func TestGroupTernary(t *testing.T) {
	group := func(f func(i int) float32) []float32 {
		v := make([]float32, 2*GroupScaledQK)
		for i := range v {
			v[i] = f(i)
		}
		return v
	}
	for _, tc := range []struct {
		name        string
		v           []float32
		dt          hf.DType
		cols        int
		ok, nonzero bool
		bad         int
	}{
		{"two scales", group(func(i int) float32 { return float32(i%3-1) * float32(1+i/128) }), hf.F16, 256, true, true, -1},
		{"all zero", group(func(int) float32 { return 0 }), hf.BF16, 128, true, false, -1},
		{"negative zeros", group(func(i int) float32 { return float32(math.Copysign(0, -1)) * float32(i%2) }), hf.F32, 128, true, false, -1},
		{"one ulp", group(func(i int) float32 {
			if i == 200 {
				return math.Nextafter32(0.5, 1)
			}
			return 0.5 * float32(i%2)
		}), hf.F32, 256, false, true, 200},
		{"row not a multiple of 128", group(func(int) float32 { return 1 }), hf.F16, 64, false, false, 256},
		{"rows do not fit", group(func(int) float32 { return 1 })[:192], hf.F16, 128, false, false, 192},
	} {
		ok, nz, bad := GroupTernary(encodeAs(tc.v, tc.dt), tc.dt, tc.cols)
		if ok != tc.ok || nz != tc.nonzero || bad != tc.bad {
			t.Errorf("%s: GroupTernary = %v %v %d, want %v %v %d", tc.name, ok, nz, bad, tc.ok, tc.nonzero, tc.bad)
		}
	}
	if ok, _, _ := GroupTernary(make([]byte, 256), hf.U8, 128); ok {
		t.Error("U8 accepted")
	}
}

// FuzzGroupTernary checks the detector against a float64 restatement of the
// rule (at most one nonzero magnitude per 128 inputs, all finite) and, when
// it accepts, that sign·d reconstructs every value.
func FuzzGroupTernary(f *testing.F) {
	f.Add(encodeAs(groupValues(1, 1, 256), hf.F16), uint8(0), uint16(256))
	f.Add(encodeAs(groupValues(2, 2, 128), hf.BF16), uint8(1), uint16(128))
	f.Add(encodeAs(groupValues(3, 1, 128), hf.F32), uint8(2), uint16(128))
	f.Fuzz(func(t *testing.T, raw []byte, sel uint8, cols16 uint16) {
		dt := []hf.DType{hf.F16, hf.BF16, hf.F32}[int(sel)%3]
		cols := int(cols16)
		ok, nonzero, bad := GroupTernary(raw, dt, cols)
		es := int(dt.Size())
		fits := cols > 0 && cols%GroupScaledQK == 0 && len(raw)%(es*cols) == 0
		if !fits {
			if ok {
				t.Fatalf("accepted %d bytes with cols %d", len(raw), cols)
			}
			return
		}
		v := make([]float32, len(raw)/es)
		hf.DecodeFloats(v, raw, dt)
		want, wantNZ, wantBad := true, false, -1
		for g := 0; g < len(v) && want; g += GroupScaledQK {
			d := 0.0
			for i := g; i < g+GroupScaledQK; i++ {
				a := math.Abs(float64(v[i]))
				switch {
				case math.IsNaN(a) || math.IsInf(a, 0) || (d != 0 && a != 0 && a != d):
					want, wantBad = false, i
				case a != 0:
					d, wantNZ = a, true
				}
				if !want {
					break
				}
			}
		}
		if ok != want || bad != wantBad || (ok && nonzero != wantNZ) {
			t.Fatalf("GroupTernary = %v %v %d, restatement %v %v %d", ok, nonzero, bad, want, wantNZ, wantBad)
		}
		if !ok {
			return
		}
		for g := 0; g < len(v); g += GroupScaledQK {
			var d float32
			for _, w := range v[g : g+GroupScaledQK] {
				d = max(d, float32(math.Abs(float64(w))))
			}
			for i, w := range v[g : g+GroupScaledQK] {
				s := float32(0)
				if w > 0 {
					s = 1
				} else if w < 0 {
					s = -1
				}
				if s*d != w {
					t.Fatalf("element %d: sign·d = %v, value %v", g+i, s*d, w)
				}
			}
		}
	})
}

// TestGroupScaledDummy: a `dummy --group-scaled` checkpoint (the Ternary
// Bonsai -unpacked layout at reduced size) is recognised and converts to
// Q2_0 whose decoded values equal the checkpoint's F16 values bit for bit
// (zeros as +0), rows in rope order; Convertible refuses the config alone
// while ConvertibleGroupScaled accepts it.
func TestGroupScaledDummy(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "hf")
	res, err := dummy.Generate(context.Background(), dir, dummy.Options{Config: nc15Config(), GroupScaled: true, VocabSize: 300, Layers: 1, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res.Config)
	cfg, _ := hf.ParseConfig(b, "config.json")
	if Convertible(cfg) == nil || ConvertibleGroupScaled(cfg) != nil {
		t.Errorf("Convertible %v, ConvertibleGroupScaled %v", Convertible(cfg), ConvertibleGroupScaled(cfg))
	}
	out := filepath.Join(t.TempDir(), "q2.gguf")
	if _, err := ConvertDir(context.Background(), dir, out, false, false, Options{OutType: "q2_0", NoVocab: true}); err != nil {
		t.Fatal(err)
	}
	ck, err := hf.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ck.Close()
	_, f := ggufTable(t, out)
	for stem, g := range groupGGUFNames {
		ref, _ := ck.Lookup("model.layers.0." + stem + ".weight")
		d, err := ck.Read(ref)
		if err != nil {
			t.Fatal(err)
		}
		v, err := d.Float32s(nil)
		d.Release()
		if err != nil {
			t.Fatal(err)
		}
		rows, cols := int(ref.Shape[0]), int(ref.Shape[1])
		want := ggufRows(v, rows, cols, g.heads)
		data, err := f.TensorData("blk.0." + g.gguf + ".weight")
		if err != nil {
			t.Fatal(err)
		}
		if string(data) != string(expectQ2_0(want)) {
			t.Errorf("%s: bytes differ from the expected Q2_0 encoding", g.gguf)
		}
		codes := make([]int8, len(v))
		scales, err := format.Q2_0{}.Decode(codes, data, cols, rows)
		if err != nil {
			t.Fatal(err)
		}
		for i, w := range want {
			got := float32(codes[i]) * scales[i/64]
			if w == 0 {
				w = 0 // −0 reads back as +0
			}
			if math.Float32bits(got) != math.Float32bits(w) {
				t.Fatalf("%s: element %d decodes to %v, want %v", g.gguf, i, got, w)
			}
		}
	}
}

// TestGroupScaledSource: the Source verify reads gives a group-scaled
// projection's codes with one scale per 128 inputs (rows and their scales
// in rope order), Float32 the checkpoint's values bit for bit (−0 kept),
// and TernaryView, which has room for one scale, refuses it.
func TestGroupScaledSource(t *testing.T) {
	dir, vals := groupFixture(t, hf.BF16, nil)
	src, err := OpenSource(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	g := groupGGUFNames["self_attn.q_proj"]
	want := ggufRows(vals["model.layers.0.self_attn.q_proj.weight"], 256, 256, g.heads)
	codes, scales, group, err := src.TernaryGroupsView("blk.0.attn_q.weight")
	if err != nil || group != GroupScaledQK || len(scales) != len(want)/GroupScaledQK {
		t.Fatalf("TernaryGroupsView: %d scales, group %d, %v", len(scales), group, err)
	}
	for i, w := range want {
		if got := float32(codes[i]) * scales[i/group]; got != w {
			t.Fatalf("element %d: code %d × scale %v, want %v", i, codes[i], scales[i/group], w)
		}
	}
	f32, err := src.Float32("blk.0.attn_q.weight")
	if err != nil {
		t.Fatal(err)
	}
	if string(f32Bytes(f32)) != string(f32Bytes(want)) {
		t.Error("Float32 differs from the checkpoint's values")
	}
	if _, _, err := src.TernaryView("blk.0.attn_q.weight"); err == nil || !strings.Contains(err.Error(), "group-scaled") {
		t.Errorf("TernaryView: %v", err)
	}
}

// TestGroupScaledQwen3: Ternary Bonsai's own architecture,
// Qwen3ForCausalLM without quantization_config (head_dim 128 > hidden/heads
// as Qwen3 has it), dense F16 group-scaled (dummy --group-scaled): → Q2_0
// byte-equal to the definition (q/k rows in HF order: NEOX rope) with every
// group scale; → TQ2_0 refused in one line naming the tensor; the same
// config with ordinary bf16 weights keeps the not-BitNet refusal.
func TestGroupScaledQwen3(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "hf")
	if _, err := dummy.Generate(context.Background(), dir, dummy.Options{Config: qwen3Config(), GroupScaled: true, Seed: 7}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "q2.gguf")
	plan, err := ConvertDir(context.Background(), dir, out, false, false, Options{OutType: "q2_0", NoVocab: true})
	if err != nil {
		t.Fatal(err)
	}
	if plan.Arch != "qwen3" {
		t.Errorf("arch %s", plan.Arch)
	}
	ck, err := hf.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ck.Close()
	_, f := ggufTable(t, out)
	n := 0
	for _, pt := range plan.Tensors {
		if pt.Class != tensormap.Projection {
			continue
		}
		n++
		d, err := ck.Read(pt.Source)
		if err != nil {
			t.Fatal(err)
		}
		v, err := d.Float32s(nil)
		d.Release()
		if err != nil {
			t.Fatal(err)
		}
		data, err := f.TensorData(pt.GGUFName)
		if err != nil {
			t.Fatal(err)
		}
		if pt.Type != gguf.TypeQ2_0 || string(data) != string(expectQ2_0(v)) {
			t.Errorf("%s: %s, bytes differ from the expected Q2_0 encoding", pt.GGUFName, pt.Type)
		}
	}
	if n != 14 {
		t.Errorf("%d projections, want 14", n)
	}
	_, err = ConvertDir(context.Background(), dir, filepath.Join(t.TempDir(), "t.gguf"), false, true, Options{OutType: OutTQ2_0, NoVocab: true})
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "tensor blk.") || !strings.Contains(err.Error(), "TQ2_0 has one scale per 256 weights") || !strings.Contains(err.Error(), "--outtype q2_0") {
		t.Errorf("tq2_0: %v", err)
	}
	// requant of the exact Q2_0 file: a type with coarser scale groups is
	// refused naming the file and the tensor and saying what keeps the
	// values; f16 dequantizes and is labelled for mainline llama.cpp
	// (bitnet.cpp has no qwen3 graph).
	for _, ot := range []OutType{OutTQ2_0, OutTQ1_0} {
		rq := filepath.Join(t.TempDir(), "r.gguf")
		_, err = RequantFile(t.Context(), out, rq, false, false, RequantOptions{OutType: ot})
		if err == nil || strings.Contains(err.Error(), "\n") || !strings.HasPrefix(err.Error(), out+": tensor blk.") ||
			!strings.Contains(err.Error(), "one scale per 64 inputs") || !strings.Contains(err.Error(), "keep this file's type, or requant to f16") {
			t.Errorf("requant q2_0 → %s: %v", ot, err)
		}
		if _, serr := os.Stat(rq); serr == nil {
			t.Errorf("requant q2_0 → %s left %s", ot, rq)
		}
	}
	rp, err := RequantFile(t.Context(), out, filepath.Join(t.TempDir(), "f.gguf"), false, false, RequantOptions{OutType: OutF16})
	if err != nil {
		t.Fatal(err)
	}
	if got := rp.RuntimeLabel(); got != "llama.cpp" {
		t.Errorf("requant qwen3 → f16 labelled %q, want llama.cpp", got)
	}
	cfg := qwen3Config()
	delete(cfg, "quantization_config")
	plain := filepath.Join(t.TempDir(), "plain")
	if _, err := dummy.Generate(context.Background(), plain, dummy.Options{Config: cfg, Seed: 7}); err != nil {
		t.Fatal(err)
	}
	_, err = ConvertDir(context.Background(), plain, filepath.Join(t.TempDir(), "p.gguf"), false, true, Options{OutType: "q2_0", NoVocab: true})
	if err == nil || !strings.Contains(err.Error(), `Qwen3ForCausalLM without quantization_config.quant_method "bitnet" is not a BitNet checkpoint`) {
		t.Errorf("plain Qwen3: %v", err)
	}
}

// TestGroupScaledNotice: the notice says what the outtype keeps — exact
// only for Q2_0 (codes and scales) and F32 (values); F16/BF16 round as the
// type does (a BF16 file of F16 ternary values is not exact).
func TestGroupScaledNotice(t *testing.T) {
	dir, _ := groupFixture(t, hf.F16, nil)
	for _, c := range []struct {
		ot   OutType
		want string
	}{
		{"q2_0", "codes and group scales are kept exactly"},
		{OutF32, "F32 keeps every value exactly"},
		{OutBF16, "BF16 rounds the values as the type does"},
		{OutF16, "F16 rounds the values as the type does"},
	} {
		plan, err := ConvertDir(context.Background(), dir, filepath.Join(t.TempDir(), "x.gguf"), false, true, Options{OutType: c.ot, NoVocab: true})
		if err != nil {
			t.Fatal(err)
		}
		if w := strings.Join(plan.Warnings, "\n"); !strings.Contains(w, c.want) {
			t.Errorf("%s: notice %q, want %q", c.ot, w, c.want)
		}
	}
}
