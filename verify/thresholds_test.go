package verify

import (
	"math"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/gguf"
)

// TestFamilyOf: every type the runtime computes has a family, mainline's
// Q2_0 (type 42) included; other types have none.
func TestFamilyOf(t *testing.T) {
	for typ, want := range map[gguf.Type]Family{
		gguf.TypeF32: FamilyF32, gguf.TypeF16: FamilyF16, gguf.TypeBF16: FamilyBF16,
		gguf.TypeI2S: FamilyI2S, gguf.TypeTL1: FamilyI2S, gguf.TypeTL2: FamilyI2S,
		gguf.TypeTQ1_0: FamilyTQ, gguf.TypeTQ2_0: FamilyTQ,
		gguf.TypeIQ1BN: FamilyIQBN, gguf.TypeIQ2BN: FamilyIQBN,
		gguf.Type(42): FamilyQ2_0,
		gguf.TypeQ8_0: FamilyKQuant, gguf.TypeQ6_K: FamilyKQuant, gguf.TypeQ4_K: FamilyKQuant,
	} {
		if got, ok := FamilyOf(typ); !ok || got != want {
			t.Errorf("%s: %v %v, want %v", typ, got, ok, want)
		}
		if _, ok := rules[want]; !ok {
			t.Errorf("family %v has no rule", want)
		}
	}
	if _, ok := FamilyOf(gguf.TypeQ4_0); ok {
		t.Error("Q4_0 has a family")
	}
}

// TestActNoise: the rounding noise of one int8 block is (max|x|/127)²/12
// per element over the row's energy, so a block structure that isolates an
// outlier is quieter than one absmax scale for the row; f16 rounding is
// u²/3 whatever the row; float activations add nothing.
func TestActNoise(t *testing.T) {
	x := make([]float64, 256)
	for i := range x {
		x[i] = 1
	}
	x[0] = 100 // one outlier
	var energy float64
	for _, v := range x {
		energy += v * v
	}
	row := actNoise2(rules[FamilyI2S], x)
	if want := 256 * (100.0 / 127) * (100.0 / 127) / 12 / energy; math.Abs(row-want) > 1e-12*want {
		t.Errorf("I2_S row: %v, want %v", row, want)
	}
	q2 := actNoise2(rules[FamilyQ2_0], x)
	want := (32*(100.0/127)*(100.0/127) + 224*(1.0/127)*(1.0/127)) / 12 / energy
	if math.Abs(q2-want) > 1e-12*want {
		t.Errorf("Q2_0 (blocks of 32): %v, want %v", q2, want)
	}
	if tq := actNoise2(rules[FamilyTQ], x); tq != row {
		t.Errorf("TQ, one block of 256 = the row: %v, want %v", tq, row)
	}
	iq := actNoise2(rules[FamilyIQBN], x)
	wantIQ := (64*(100.0/127)*(100.0/127) + 192*(1.0/127)*(1.0/127)) / 12 / energy
	if math.Abs(iq-wantIQ) > 1e-12*wantIQ {
		t.Errorf("IQ*_BN (four groups of 64): %v, want %v", iq, wantIQ)
	}
	if f := actNoise2(rules[FamilyF16], x); f != uF16*uF16/3 {
		t.Errorf("F16: %v", f)
	}
	if f := actNoise2(rules[FamilyF32], x); f != 0 {
		t.Errorf("F32: %v", f)
	}
}

// TestBoundFormula: the thresholds follow the documented formula from r,
// σ and z, and top-1 counts the positions whose margin exceeds twice the
// max |Δlogit| bound.
func TestBoundFormula(t *testing.T) {
	m := &errorModel{types: func(string) (gguf.Type, bool) { return 0, false }, parts: map[Family]float64{}, families: map[Family]bool{}, r2: 0.01}
	// two positions, vocab 4: one decided row (margin 10), one tie
	ref := []float64{10, 0, 0, 0, 1, 1, 0, 0}
	th, b := m.thresholds(ref, 2, Thresholds{MinFiniteSpread: 1e-3})
	sigma := math.Sqrt(75.0 / 4) // row 0: mean 2.5, Σ(x−mean)² = 75
	z := math.Sqrt(2 * math.Log(8))
	typ := errorModelK * 0.1 * sigma
	if math.Abs(b.LogitStd-sigma) > 1e-12 || math.Abs(b.Z-z) > 1e-12 || math.Abs(b.RelErr-0.1) > 1e-12 {
		t.Errorf("bound %+v", b)
	}
	if math.Abs(th.MaxDelta-z*typ) > 1e-12 || math.Abs(th.MaxKL-typ*typ/2) > 1e-12 || math.Abs(th.MaxPPLRel-math.Expm1(2*typ)) > 1e-12 {
		t.Errorf("thresholds %+v", th)
	}
	// 2·max |Δ| ≈ 3.5: position 0 (margin 10) cannot flip, position 1 (a tie) can
	if th.MinTop1 != 0.5 {
		t.Errorf("top-1 %v, want 0.5 (max |Δ| %v)", th.MinTop1, th.MaxDelta)
	}
	if th.MinFiniteSpread != 1e-3 {
		t.Errorf("MinFiniteSpread not kept: %v", th.MinFiniteSpread)
	}
}
