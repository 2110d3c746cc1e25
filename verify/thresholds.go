package verify

import (
	"fmt"
	"math"
	"strings"

	"github.com/bitnet-convert/bitnet-convert/gguf"
)

// This file is verify's error model: the logit limits of a causal LM are
// derived, per file, from what the runtime's arithmetic can change against
// the float64 reference (reference.go) instead of being one constant.
//
// Every weight type runs in one kernel family (Family). A family changes a
// projection's product in two ways: it rounds the activation row (int8 with
// an absmax scale per block of the family's size, or to f16) and it stores
// the weight scale (or the weights) with a rounding of its own (f16 scales,
// bf16 values, Q8_0/Q6_K/Q4_K codes). Both are relative errors ρ of the
// product. The activation part is measured, not assumed: the reference sees
// every projection's input row x and the model computes the rounding noise
// the family's quantizer gives that very row, Σ_blocks n_b·(amax_b/127)²/12
// over Σ x², so the bound scales with the model's activations (their
// outliers, hidden size, the FFN activation). The weight part is the
// format's stored rounding. Summed over the projections a token passes
// (7 per layer, the squared-ReLU gate counted twice: relu²'s relative
// error is twice its input's), plus the F16 KV cache (K and V rounded to f16
// per layer) and the output head, that gives r, the relative rms error of
// the logits. The logits' own size is the reference's: σ, the largest
// standard deviation of a position's logits. Then
//
//	typical |Δlogit| = K·r·σ                (K = errorModelK, the allowance)
//	max |Δlogit|     = z·K·r·σ,  z = √(2·ln(vocab·positions))
//	mean KL          = ½·(K·r·σ)²
//	perplexity ratio = exp(2·K·r·σ) − 1
//	top-1            = share of positions whose reference top-1 margin
//	                   exceeds 2·max |Δlogit| (those cannot flip)
//
// z is the expected largest of vocab·positions Gaussian deviations; the
// allowance K covers what the first-order model leaves out (errors grown
// through later layers and the attention softmax, heavier than Gaussian
// tails). The mutation corpus (mutation_test.go, docs/reliability.md)
// shows both sides: every unmutated default conversion of the bundled and
// full-size models passes, and every mutant whose logits move by more than
// the bound from the unmutated file's fails.

// Family is the kernel family a weight type runs in: how the runtime
// rounds a projection's activations and how the format stores the weights.
// FamilyOf gives a type's family.
type Family uint8

// The kernel families.
const (
	// FamilyF32: float activations, exact weights.
	FamilyF32 Family = iota
	// FamilyF16: activations rounded to f16 (ggml's vec_dot_f16), weights
	// (ternary code·scale) rounded to f16.
	FamilyF16
	// FamilyBF16: float activations, weights rounded to bf16.
	FamilyBF16
	// FamilyI2S: I2_S, TL1, TL2 — bitnet.cpp's kernels; the activation row
	// quantized to int8 with one absmax scale for the whole row
	// (quantize_row_i8_s), weights exact with one f32 scale per tensor.
	FamilyI2S
	// FamilyTQ: TQ1_0, TQ2_0 — ggml's Q8_K activations (one absmax scale per
	// block of 256), weights with one f16 scale per 256.
	FamilyTQ
	// FamilyIQBN: IQ1_BN, IQ2_BN — ik_llama.cpp's Q8_K64 activations (four
	// absmax scales per row, element e in group (e mod 16)/4), one row scale
	// (f16 in IQ1_BN, f32 in IQ2_BN).
	FamilyIQBN
	// FamilyQ2_0: mainline ggml's Q2_0 (type 42: 64-weight blocks, one f16
	// d each) — Q8_0 activations, one absmax scale per block of 32 stored as
	// f16.
	FamilyQ2_0
	// FamilyKQuant: Q8_0, Q6_K, Q4_K weights (an embedding or output head
	// retyped by --token-embedding-type): lossy weights, activations
	// quantized as Q8_0 or Q8_K.
	FamilyKQuant
)

// FamilyOf returns the kernel family of weight type t, and false for a
// type the runtime does not compute.
func FamilyOf(t gguf.Type) (Family, bool) {
	switch t {
	case gguf.TypeF32:
		return FamilyF32, true
	case gguf.TypeF16:
		return FamilyF16, true
	case gguf.TypeBF16:
		return FamilyBF16, true
	case gguf.TypeI2S, gguf.TypeTL1, gguf.TypeTL2:
		return FamilyI2S, true
	case gguf.TypeTQ1_0, gguf.TypeTQ2_0:
		return FamilyTQ, true
	case gguf.TypeIQ1BN, gguf.TypeIQ2BN:
		return FamilyIQBN, true
	case gguf.TypeQ2_0:
		return FamilyQ2_0, true
	case gguf.TypeQ8_0, gguf.TypeQ6_K, gguf.TypeQ4_K:
		return FamilyKQuant, true
	}
	return 0, false
}

// String names the family as the report does.
func (f Family) String() string {
	switch f {
	case FamilyF32:
		return "F32"
	case FamilyF16:
		return "F16"
	case FamilyBF16:
		return "BF16"
	case FamilyI2S:
		return "I2_S/TL"
	case FamilyTQ:
		return "TQ"
	case FamilyIQBN:
		return "IQ*_BN"
	case FamilyQ2_0:
		return "Q2_0"
	case FamilyKQuant:
		return "Q8_0/Q6_K/Q4_K"
	}
	return fmt.Sprintf("family(%d)", uint8(f))
}

// actQuant is how a family rounds an activation row.
type actQuant uint8

const (
	actNone   actQuant = iota // float32 as is
	actF16                    // each element rounded to f16
	actRow                    // int8, one absmax scale for the row (I2_S)
	actBlocks                 // int8, one absmax scale per block
	actQ8K64                  // int8, four strided groups per row
)

// Unit roundoffs (half an ulp, relative) of the stored float formats.
const (
	uF16  = 0x1p-11
	uBF16 = 0x1p-9
)

// familyRule is one family's error sources.
type familyRule struct {
	act   actQuant
	block int // actBlocks: elements per activation block
	// actScaleRel is the relative rounding of each activation block's
	// scale (Q8_0 stores it as f16), coherent over the block.
	actScaleRel float64
	// weightRel is the relative rounding of the stored weights against the
	// source (a scale stored as f16 or bf16), coherent over a row.
	weightRel float64
	// why explains the rule in the -v report.
	why string
}

// rules is the error model per family (see the file comment).
var rules = map[Family]familyRule{
	FamilyF32:  {act: actNone, why: "float activations, exact weights"},
	FamilyF16:  {act: actF16, weightRel: uF16, why: "activations rounded to f16, weights to f16 (2⁻¹¹)"},
	FamilyBF16: {act: actNone, weightRel: uBF16, why: "float activations, weights rounded to bf16 (2⁻⁹)"},
	FamilyI2S:  {act: actRow, why: "int8 activations, one absmax scale per row; exact f32 weight scale"},
	FamilyTQ:   {act: actBlocks, block: 256, weightRel: uF16, why: "Q8_K activations (int8, absmax per 256); f16 weight scale per 256 (2⁻¹¹)"},
	FamilyIQBN: {act: actQ8K64, weightRel: uF16, why: "Q8_K64 activations (int8, four absmax groups per row); row scale f16 (IQ1_BN) or f32 (IQ2_BN), 2⁻¹¹ counted"},
	FamilyQ2_0: {act: actBlocks, block: 32, actScaleRel: uF16, weightRel: uF16, why: "Q8_0 activations (int8, absmax per 32, f16 scale); f16 weight scale per 64 (2⁻¹¹)"},
	// Q8_0 and Q4_K/Q6_K weights: the activations as Q8_0 / Q8_K; the
	// weights' own rounding is weightNoise's.
	FamilyKQuant: {act: actBlocks, block: 32, actScaleRel: uF16, why: "Q8_0/Q8_K activations; the weights' own quantization (Q8_0 half a step of 127 per 32, Q6_K of 31 per 16, Q4_K of 15 per 32)"},
}

// errorModelK is the allowance K of the file comment, one number for every
// family and model.
const errorModelK = 2

// actNoise2 returns the squared relative rounding noise of family rule ru
// on the activation row x (noise energy over signal energy).
func actNoise2(ru familyRule, x []float64) float64 {
	var sig float64
	for _, v := range x {
		sig += v * v
	}
	if sig == 0 {
		return 0
	}
	var noise float64
	blockNoise := func(amax float64, n int) {
		step := amax / 127
		noise += float64(n) * step * step / 12
	}
	switch ru.act {
	case actNone:
		return 0
	case actF16:
		return uF16 * uF16 / 3
	case actRow:
		blockNoise(absMax(x, 0, len(x), 1), len(x))
	case actBlocks:
		for lo := 0; lo < len(x); lo += ru.block {
			hi := min(lo+ru.block, len(x))
			blockNoise(absMax(x, lo, hi, 1), hi-lo)
		}
	case actQ8K64:
		var mx [4]float64
		var n [4]int
		for e, v := range x {
			g := e % 16 / 4
			mx[g] = math.Max(mx[g], math.Abs(v))
			n[g]++
		}
		for g := range mx {
			blockNoise(mx[g], n[g])
		}
	}
	return noise / sig
}

func absMax(x []float64, lo, hi, stride int) float64 {
	var m float64
	for i := lo; i < hi; i += stride {
		m = math.Max(m, math.Abs(x[i]))
	}
	return m
}

// weightNoise2 is the squared relative error of stored weights of type t
// against the source values: the coherent scale rounding of the family,
// or, for Q8_0/Q6_K/Q4_K, half a quantization step of a Gaussian block
// (crest √(2·ln 2n) for a block of n) over its rms, uniform rounding.
func weightNoise2(t gguf.Type, fam Family) float64 {
	lossy := func(levels float64, n int) float64 {
		crest := math.Sqrt(2 * math.Log(2*float64(n)))
		step := crest / levels
		return step * step / 12
	}
	switch t {
	case gguf.TypeQ8_0:
		return lossy(127, 32)
	case gguf.TypeQ6_K:
		return lossy(31, 16)
	case gguf.TypeQ4_K:
		return lossy(7.5, 32) // 15 levels over max − min ≈ 2·crest
	}
	w := rules[fam].weightRel
	return w * w
}

// errorModel accumulates r² over the projections the reference computes.
type errorModel struct {
	types  func(name string) (gguf.Type, bool) // the file's tensor types
	relu2  bool
	layers int
	r2     float64
	// pendingQK is the current layer's q/k share, scaled by the attention
	// score gain once the layer's scores are seen (observeScores).
	pendingQK float64
	maxGain   float64
	// parts are r²'s components by family, for the report.
	parts    map[Family]float64
	families map[Family]bool
	head     gguf.Type
	headSeen bool
	unknown  []string
}

func newErrorModel(types func(string) (gguf.Type, bool), g refGeometry) *errorModel {
	return &errorModel{types: types, relu2: g.relu2, layers: g.layers, parts: map[Family]float64{}, families: map[Family]bool{}}
}

// observe is refGeometry.observe: the input in ([rows, inDim] row-major)
// of the projection name.
func (m *errorModel) observe(name string, in []float64, inDim int) {
	t, ok := m.types(name)
	if !ok {
		return
	}
	fam, ok := FamilyOf(t)
	if !ok {
		m.unknown = append(m.unknown, name+" ("+t.String()+")")
		return
	}
	if name == "output.weight" || name == "token_embd.weight" {
		m.head, m.headSeen = t, true
	} else {
		m.families[fam] = true
	}
	ru := rules[fam]
	if t == gguf.TypeQ6_K || t == gguf.TypeQ4_K {
		ru = familyRule{act: actBlocks, block: 256}
	}
	var act float64
	rows := 0
	for lo := 0; lo+inDim <= len(in); lo += inDim {
		act += actNoise2(ru, in[lo:lo+inDim])
		rows++
	}
	if rows > 0 {
		act /= float64(rows)
	}
	act += ru.actScaleRel * ru.actScaleRel
	e := act + weightNoise2(t, fam)
	if m.relu2 && strings.HasSuffix(name, "ffn_gate.weight") {
		e *= 4 // relu²: twice the relative error of its input
	}
	m.parts[fam] += e
	if strings.HasSuffix(name, "attn_q.weight") || strings.HasSuffix(name, "attn_k.weight") {
		m.pendingQK += e
		return
	}
	m.r2 += e
}

// observeScores is refGeometry.observeScores: a relative error ρ of q or k
// moves a score s by about ρ·|s|, and the softmax turns that into a
// relative change of the attention output of the same size, so the q/k
// share of the layer (and the f16 rounding of the cached K) counts with
// the gain 1 + S², S the rms of the layer's scaled scores; the cached V
// counts once.
func (m *errorModel) observeScores(rms float64) {
	gain := 1 + rms*rms
	m.maxGain = math.Max(m.maxGain, gain)
	m.r2 += (m.pendingQK+uF16*uF16/3)*gain + uF16*uF16/3
	m.pendingQK = 0
}

// Bound is the error model's result for one file: the thresholds and the
// figures they come from (printed by verify -v, in --json as "bound").
type Bound struct {
	Families []string `json:"families"`       // the projections' kernel families
	Head     string   `json:"head,omitempty"` // the output head's type
	// RelErr is r, the relative rms error of the logits the model expects.
	RelErr float64 `json:"rel_err"`
	// LogitStd is σ, the largest standard deviation of a position's
	// reference logits.
	LogitStd float64 `json:"logit_std"`
	// Z is √(2·ln(vocab·positions)).
	Z float64 `json:"z"`
	// K is the allowance.
	K float64 `json:"k"`
	// Why explains the rule, one line per family.
	Why []string `json:"why"`
}

// thresholds derives the limits from the accumulated model and the
// reference logits ref ([positions, vocab] row-major); minSpread and
// minCosine are kept from base.
func (m *errorModel) thresholds(ref []float64, positions int, base Thresholds) (Thresholds, *Bound) {
	vocab := len(ref) / max(positions, 1)
	r := math.Sqrt(m.r2 + m.pendingQK)
	var sigma float64
	for p := 0; p < positions; p++ {
		row := ref[p*vocab : (p+1)*vocab]
		var mean, ss float64
		for _, v := range row {
			mean += v
		}
		mean /= float64(vocab)
		for _, v := range row {
			ss += (v - mean) * (v - mean)
		}
		sigma = math.Max(sigma, math.Sqrt(ss/float64(vocab)))
	}
	z := math.Sqrt(2 * math.Log(float64(max(vocab*positions, 2))))
	typ := errorModelK * r * sigma
	th := base
	th.MaxDelta = z * typ
	th.MaxKL = typ * typ / 2
	th.MaxPPLRel = math.Expm1(2 * typ)
	safe := 0
	for p := 0; p < positions; p++ {
		if topMargin(ref[p*vocab:(p+1)*vocab]) > 2*th.MaxDelta {
			safe++
		}
	}
	th.MinTop1 = float64(safe) / float64(max(positions, 1))
	b := &Bound{RelErr: r, LogitStd: sigma, Z: z, K: errorModelK}
	for f := FamilyF32; f <= FamilyKQuant; f++ {
		if m.families[f] {
			b.Families = append(b.Families, f.String())
			b.Why = append(b.Why, fmt.Sprintf("%s projections: %s; r² share %.3g", f, rules[f].why, m.parts[f]))
		}
	}
	if m.headSeen {
		b.Head = m.head.String()
		b.Why = append(b.Why, fmt.Sprintf("output head %s: %s", m.head, rules[mustFamily(m.head)].why))
	}
	b.Why = append(b.Why,
		fmt.Sprintf("attention: q, k and the F16 K cache (2⁻¹¹) count with the score gain 1 + S² (largest %.3g), the F16 V cache once; %d layers", m.maxGain, m.layers),
		fmt.Sprintf("r = %.4g (relative rms error of the logits), σ = %.4g (largest std of a position's reference logits), z = %.3g, K = %d", r, sigma, z, errorModelK),
		fmt.Sprintf("max |Δlogit| ≤ z·K·r·σ = %.4g; mean KL ≤ (K·r·σ)²/2 = %.3g; perplexity within exp(2·K·r·σ) − 1 = %.3g; top-1 ≥ %.3f (positions whose reference margin exceeds 2·max |Δlogit|)", th.MaxDelta, th.MaxKL, th.MaxPPLRel, th.MinTop1))
	if len(m.unknown) > 0 {
		b.Why = append(b.Why, "no family rule for "+strings.Join(m.unknown, ", ")+" (not counted)")
	}
	return th, b
}

func mustFamily(t gguf.Type) Family {
	f, _ := FamilyOf(t)
	return f
}

// topMargin is the difference between the largest and the second largest
// value of x.
func topMargin(x []float64) float64 {
	a, b := math.Inf(-1), math.Inf(-1)
	for _, v := range x {
		if v > a {
			a, b = v, a
		} else if v > b {
			b = v
		}
	}
	return a - b
}
