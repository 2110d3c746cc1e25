package convert

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/hf"
	"github.com/bitnet-convert/bitnet-convert/internal/testutil"
)

// convertBothPaths converts dir to I2_S with the fused bf16 → I2_S path and
// with the general one (fusedOff) and returns both files' bytes, plans and
// errors.
func convertBothPaths(t *testing.T, dir string) (fused, general []byte, pf, pg *Plan, ef, eg error) {
	t.Helper()
	read := func(off bool) ([]byte, *Plan, error) {
		fusedOff = off
		defer func() { fusedOff = false }()
		out, p, err := convertDir(t, dir, Options{OutType: OutI2S})
		if err != nil {
			return nil, p, err
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		return b, p, nil
	}
	fused, pf, ef = read(false)
	general, pg, eg = read(true)
	return
}

// TestFusedI2SMatchesGeneralPath: the golden tiny checkpoint (bf16 master
// weights; every one of its 14 projections takes the fused path) converts
// to the same bytes both ways, and so do projections that are all zero
// (abs-mean floor), all equal (every code +1), or hold ties at exactly
// ±0.5 of the scale; a NaN or an abs-mean that overflows gives the general
// path's error, and the warnings are the same.
func TestFusedI2SMatchesGeneralPath(t *testing.T) {
	ck, refs, raw := goldenTensors(t)
	p, err := NewPlan(ck, Options{OutType: OutI2S})
	if err != nil {
		t.Fatal(err)
	}
	c := &converter{ckpt: ck, plan: p, threads: 2}
	eligible := 0
	for i := range p.Tensors {
		pt := &p.Tensors[i]
		d, err := ck.Read(pt.Source)
		if err != nil {
			t.Fatal(err)
		}
		if c.fusedI2S(pt, d) {
			eligible++
		}
	}
	if eligible != 14 {
		t.Fatalf("%d projections take the fused path, want 14", eligible)
	}

	edited := func(t *testing.T, edit map[string]func(v []float32)) string {
		dir := copyGolden(t)
		var ts []hf.WriteTensor
		for _, r := range refs {
			b := raw[r.Name]
			if f, ok := edit[r.Name]; ok {
				n := len(b) / 2
				v := make([]float32, n)
				for i := range v {
					v[i] = math.Float32frombits(uint32(b[2*i])<<16 | uint32(b[2*i+1])<<24)
				}
				f(v)
				b = testutil.BF16Bytes(v)
			}
			ts = append(ts, hf.WriteTensor{Name: r.Name, DType: r.DType, Shape: r.Shape, Data: hf.RawData(b)})
		}
		if err := hf.WriteSafetensors(filepath.Join(dir, "model.safetensors"), ts, nil); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	fill := func(x float32) func(v []float32) {
		return func(v []float32) {
			for i := range v {
				v[i] = x
			}
		}
	}
	ok := []struct {
		name     string
		edit     map[string]func(v []float32)
		warnings int
	}{
		{"golden", nil, 0},
		{"zero, constant and tied projections", map[string]func(v []float32){
			"model.layers.0.self_attn.q_proj.weight": fill(0),
			"model.layers.0.self_attn.k_proj.weight": fill(-0.25),
			// |x| ∈ {1, 0.5, 0.25, 0.25}: abs-mean 0.5 exactly, so ±0.5 is a tie
			"model.layers.1.mlp.up_proj.weight": func(v []float32) {
				for i := range v {
					v[i] = [8]float32{1, -0.5, 0.25, -0.25, -1, 0.5, -0.25, 0.25}[i%8]
				}
			},
		}, 3},
	}
	for _, tc := range ok {
		dir := goldenHF
		if tc.edit != nil {
			dir = edited(t, tc.edit)
		}
		f, g, pf, pg, ef, eg := convertBothPaths(t, dir)
		if ef != nil || eg != nil {
			t.Fatalf("%s: fused error %v, general error %v", tc.name, ef, eg)
		}
		if !bytes.Equal(f, g) {
			t.Errorf("%s: the fused path wrote different bytes", tc.name)
		}
		if !slices.Equal(pf.Warnings, pg.Warnings) || len(pf.Warnings) != tc.warnings {
			t.Errorf("%s: warnings %q, general path %q; want %d", tc.name, pf.Warnings, pg.Warnings, tc.warnings)
		}
	}
	bad := map[string]map[string]func(v []float32){
		"NaN": {"model.layers.1.mlp.down_proj.weight": func(v []float32) { v[len(v)-3] = float32(math.NaN()) }},
		"Inf": {"model.layers.0.mlp.gate_proj.weight": func(v []float32) { v[700] = float32(math.Inf(-1)) }},
		"overflow": {"model.layers.0.self_attn.o_proj.weight": func(v []float32) {
			for i := range v {
				v[i] = 3e38
			}
		}},
	}
	for name, e := range bad {
		_, _, _, _, ef, eg := convertBothPaths(t, edited(t, e))
		if ef == nil || eg == nil || ef.Error() != eg.Error() {
			t.Errorf("%s: fused error %v, general error %v", name, ef, eg)
		}
	}
}
