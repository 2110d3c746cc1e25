package convert

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/format"
	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/hf"
	"github.com/bitnet-convert/bitnet-convert/internal/testutil"
	"github.com/bitnet-convert/bitnet-convert/quantize"
)

func convertDir(t *testing.T, dir string, opts Options) (string, *Plan, error) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out.gguf")
	if opts.ModelName == "" {
		opts.ModelName = "test"
	}
	p, err := ConvertDir(context.Background(), dir, out, false, false, opts)
	if err != nil {
		if _, serr := os.Stat(out); serr == nil {
			t.Errorf("failed conversion left %s behind", out)
		}
	}
	return out, p, err
}

// tensorSection returns the file bytes from the data section on.
func tensorSection(t *testing.T, path string) []byte {
	t.Helper()
	f := openGGUF(t, path)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b[f.DataOffset:]
}

// BR-01: BitNetForCausalLM and BitnetForCausalLM convert identically; an
// unknown architecture is one error naming it and listing the supported ones.
func TestBR01ArchitectureNames(t *testing.T) {
	var sections [][]byte
	for _, arch := range []string{"BitNetForCausalLM", "BitnetForCausalLM"} {
		dir := copyGolden(t)
		testutil.EditConfig(t, dir, func(c map[string]any) { c["architectures"] = []any{arch} })
		out, p, err := convertDir(t, dir, Options{})
		if err != nil {
			t.Fatalf("%s: %v", arch, err)
		}
		if p.Arch != "bitnet" {
			t.Errorf("%s: arch %q, want bitnet", arch, p.Arch)
		}
		sections = append(sections, tensorSection(t, out))
	}
	if !bytes.Equal(sections[0], sections[1]) {
		t.Error("tensor sections differ between the two spellings")
	}
	dir := copyGolden(t)
	testutil.EditConfig(t, dir, func(c map[string]any) { c["architectures"] = []any{"LlamaModel"} })
	_, _, err := convertDir(t, dir, Options{})
	if !errors.Is(err, ErrUnknownArch) {
		t.Fatalf("LlamaModel: err = %v, want ErrUnknownArch", err)
	}
	msg := err.Error()
	for _, want := range []string{`"LlamaModel"`, "BitNetForCausalLM", "BitnetForCausalLM"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not mention %s", msg, want)
		}
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("error is not one line: %q", msg)
	}
}

// The hidden_act rule (spec §1.2): relu2 → bitnet-b1.58, silu/absent →
// bitnet, anything else an error.
func TestArchFromActivation(t *testing.T) {
	for _, tc := range []struct {
		act  any
		want string
	}{{"relu2", "bitnet-b1.58"}, {"silu", "bitnet"}, {nil, "bitnet"}, {"gelu", ""}} {
		dir := copyGolden(t)
		testutil.EditConfig(t, dir, func(c map[string]any) {
			if tc.act == nil {
				delete(c, "hidden_act")
			} else {
				c["hidden_act"] = tc.act
			}
		})
		ck, err := hf.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		p, err := NewPlan(ck, Options{NoVocab: true})
		ck.Close()
		if tc.want == "" {
			if err == nil || !strings.Contains(err.Error(), "gelu") {
				t.Errorf("hidden_act gelu: err = %v, want an error naming it", err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%v: %v", tc.act, err)
		}
		if p.Arch != tc.want {
			t.Errorf("hidden_act %v: arch %q, want %q", tc.act, p.Arch, tc.want)
		}
	}
}

// packGolden writes a packed pre-quantized copy of the golden checkpoint:
// each projection ternarized as the master path does, packed 4 rows per byte
// along axis 0 (spec §2.4) with a weight_scale that means the same W under
// the given linear_class.
func packGolden(t *testing.T, linearClass string) (string, map[string]float32) {
	t.Helper()
	ck, refs, raw := goldenTensors(t)
	dir := copyGolden(t)
	os.Remove(filepath.Join(dir, "model.safetensors"))
	testutil.EditConfig(t, dir, func(c map[string]any) {
		c["quantization_config"] = map[string]any{"quant_method": "bitnet", "linear_class": linearClass, "quantization_mode": "offline"}
	})
	scales := map[string]float32{}
	var ts []hf.WriteTensor
	for _, ref := range refs {
		b := raw[ref.Name]
		if !strings.HasSuffix(ref.Name, "_proj.weight") {
			ts = append(ts, hf.WriteTensor{Name: ref.Name, DType: ref.DType, Shape: ref.Shape, Data: hf.RawData(b)})
			continue
		}
		d, _ := ck.Read(ref)
		x, err := d.Float32s(nil)
		if err != nil {
			t.Fatal(err)
		}
		codes := make([]int8, len(x))
		scale, _ := quantize.Ternarize(codes, x)
		scales[ref.Name] = scale
		m, k := int(ref.Shape[0]), int(ref.Shape[1])
		r := m / 4
		packed := make([]byte, r*k)
		for i := 0; i < 4; i++ {
			for row := 0; row < r; row++ {
				for c := 0; c < k; c++ {
					packed[row*k+c] |= byte(codes[(i*r+row)*k+c]+1) << (2 * i)
				}
			}
		}
		ws := scale
		if linearClass == "bitlinear" {
			ws = 1 / scale
		}
		base := strings.TrimSuffix(ref.Name, ".weight")
		ts = append(ts,
			hf.WriteTensor{Name: ref.Name, DType: hf.U8, Shape: []uint64{uint64(r), uint64(k)}, Data: hf.RawData(packed)},
			hf.WriteTensor{Name: base + ".weight_scale", DType: hf.F32, Shape: []uint64{}, Data: hf.RawData(f32Bytes([]float32{ws}))})
	}
	if err := hf.WriteSafetensors(filepath.Join(dir, "model.safetensors"), ts, nil); err != nil {
		t.Fatal(err)
	}
	return dir, scales
}

func i2sScale(d []byte) float32 {
	return math.Float32frombits(binary.LittleEndian.Uint32(d[len(d)-32:]))
}

// Acceptance (issue 2, b): a packed pre-quantized copy of the golden
// checkpoint, with linear_class autobitlinear and bitlinear, converts to the
// same I2_S codes as the master checkpoint, and its F32 and I2_S outputs
// dequantize to the same numbers. No weight_scale tensor is written.
func TestPackedGolden(t *testing.T) {
	master := openGGUF(t, convertGolden(t, OutI2S))
	for _, lc := range []string{"autobitlinear", "bitlinear"} {
		t.Run(lc, func(t *testing.T) {
			dir, _ := packGolden(t, lc)
			i2sPath, plan, err := convertDir(t, dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]WeightScaleRule{"autobitlinear": RuleMultiply, "bitlinear": RuleDivide}[lc]
			if plan.WeightScaleRule != want {
				t.Errorf("rule %q, want %q", plan.WeightScaleRule, want)
			}
			f32Path, _, err := convertDir(t, dir, Options{OutType: OutF32})
			if err != nil {
				t.Fatal(err)
			}
			i2s, f32 := openGGUF(t, i2sPath), openGGUF(t, f32Path)
			if len(i2s.Tensors) != len(master.Tensors) {
				t.Fatalf("%d tensors, master %d", len(i2s.Tensors), len(master.Tensors))
			}
			for _, ti := range i2s.Tensors {
				if strings.Contains(ti.Name, "scale") {
					t.Errorf("tensor %s written", ti.Name)
				}
				if ti.Type != gguf.TypeI2S {
					continue
				}
				od, _ := i2s.TensorData(ti.Name)
				md, _ := master.TensorData(ti.Name)
				n := len(od) - 32
				if !bytes.Equal(od[:n], md[:n]) {
					t.Errorf("%s: codes differ from the master conversion", ti.Name)
				}
				codes := make([]int8, n*4)
				unpackI2S(codes, od)
				s := i2sScale(od)
				fd, _ := f32.TensorData(ti.Name)
				for i, c := range codes {
					got := math.Float32frombits(binary.LittleEndian.Uint32(fd[4*i:]))
					if got != float32(c)*s {
						t.Fatalf("%s[%d]: F32 %v, I2_S dequantized %v", ti.Name, i, got, float32(c)*s)
					}
				}
			}
		})
	}
}

// A packed checkpoint without quantization_config is an error that suggests
// --weight-scale; with the flag it converts.
func TestPackedWithoutQuantizationConfig(t *testing.T) {
	dir, _ := packGolden(t, "autobitlinear")
	testutil.EditConfig(t, dir, func(c map[string]any) { delete(c, "quantization_config") })
	_, _, err := convertDir(t, dir, Options{})
	if err == nil || !strings.Contains(err.Error(), "--weight-scale") {
		t.Fatalf("err = %v, want a hint at --weight-scale", err)
	}
	if _, p, err := convertDir(t, dir, Options{WeightScale: RuleMultiply}); err != nil || p.WeightScaleRule != RuleMultiply {
		t.Fatalf("with --weight-scale multiply: %v", err)
	}
}

// unpackI2S decodes the x86 I2_S codes of a whole tensor's data (codes,
// scale and pad) through the format layer.
func unpackI2S(dst []int8, data []byte) {
	if _, err := (format.I2S{}).Decode(dst, data, len(dst), 1); err != nil {
		panic(err)
	}
}
