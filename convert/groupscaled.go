package convert

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/bitnet-convert/bitnet-convert/format"
	"github.com/bitnet-convert/bitnet-convert/hf"
	"github.com/bitnet-convert/bitnet-convert/quantize"
	"github.com/bitnet-convert/bitnet-convert/tensormap"
)

// Group-scaled ternary checkpoints (PrismML's Ternary Bonsai "-unpacked"
// repositories; shared/spec formats-2026.md §5 and table A3) are dense
// F16/BF16 checkpoints with no quantization_config whose projection rows are
// ternary times one scale per 128 inputs: within every run of 128 inputs of a
// row the values are {−d, 0, +d} for one d ≥ 0 (d differs between groups).
// They are recognised from the values (GroupTernary), never from a model
// name, and convert exactly to mainline Q2_0 (each group becomes two 64-weight
// blocks carrying the group's d as f16).

// GroupScaledQK is the input-group length of a group-scaled ternary
// checkpoint: 128 inputs of one row share one scale.
const GroupScaledQK = 128

// DenseCandidate is an optional Converter hook: an architecture that also
// accepts a dense float checkpoint without a quantization_config when every
// projection is group-scaled ternary (GroupTernary). DenseRefusal is the
// error for this checkpoint when its projections are not (the
// architecture's usual refusal of a non-BitNet checkpoint, one line naming
// config.json), or nil when the config itself makes the checkpoint
// convertible (a BitNet quantization_config) and no value scan is needed.
type DenseCandidate interface {
	DenseRefusal() error
}

// ConvertibleGroupScaled is Convertible for a checkpoint of config cfg
// whose projections are group-scaled ternary (dummy --group-scaled): nil
// when the architecture is a DenseCandidate without a config refusal of its
// own, else the error hf2gguf would give.
func ConvertibleGroupScaled(cfg *hf.Config) error {
	conv, err := converterFor(cfg)
	if err != nil {
		return err
	}
	if _, ok := conv.(DenseCandidate); !ok {
		return fmt.Errorf("%s: %s checkpoints without a BitNet quantization_config are not converted, group-scaled or not (not supported)", cfg.Path, conv.Arch())
	}
	return nil
}

// GroupTernary reports whether raw, the little-endian bytes of an HF
// [rows, cols] tensor of dtype dt (F16, BF16 or F32), is group-scaled
// ternary: cols is a positive multiple of GroupScaledQK, len(raw) holds a
// whole number of rows, and in every run of GroupScaledQK inputs of a row
// every value is ±0 or has the same magnitude (bit pattern with the sign bit
// cleared) as the run's other nonzero values, and no value is an infinity or
// a NaN. The comparison is on bits, so two magnitudes one ulp apart are two
// magnitudes. bad is the index of the first element that breaks the rule
// (the whole length when the shape does not fit, -1 when ternary).
// nonzero reports a group with d ≠ 0.
func GroupTernary(raw []byte, dt hf.DType, cols int) (ok, nonzero bool, bad int) {
	es := int(dt.Size())
	if !dt.IsFloat() || es == 0 || cols <= 0 || cols%GroupScaledQK != 0 || len(raw)%(es*cols) != 0 {
		return false, false, len(raw) / max(es, 1)
	}
	var signMask, expMask uint32
	switch dt {
	case hf.F16:
		signMask, expMask = 0x8000, 0x7c00
	case hf.BF16:
		signMask, expMask = 0x8000, 0x7f80
	default:
		signMask, expMask = 0x80000000, 0x7f800000
	}
	n := len(raw) / es
	for g := 0; g < n; g += GroupScaledQK {
		var d uint32
		for i := g; i < g+GroupScaledQK; i++ {
			var v uint32
			if es == 2 {
				v = uint32(binary.LittleEndian.Uint16(raw[2*i:]))
			} else {
				v = binary.LittleEndian.Uint32(raw[4*i:])
			}
			m := v &^ signMask
			switch {
			case m&expMask == expMask:
				return false, nonzero, i // Inf or NaN
			case m == 0:
			case d == 0:
				d = m
				nonzero = true
			case m != d:
				return false, nonzero, i
			}
		}
	}
	return true, nonzero, -1
}

// f16Exact reports whether f16 holds d exactly (no overflow, no loss in
// f16's subnormal range, no precision beyond f16's 11 bits).
func f16Exact(d float32) bool { return quantize.F16ToF32(quantize.F32ToF16(d)) == d }

// holdsGroupScales reports whether the ternary format f stores the scales of
// a group-scaled projection with rows of k inputs exactly: f16 block scales
// whose block divides GroupScaledQK (Q2_0's 64). I2_S, TL1 and TL2 (one
// scale per tensor), TQ1_0 and TQ2_0 (one per 256 weights) and IQ1_BN and
// IQ2_BN (one per row) do not.
func holdsGroupScales(f format.Format, k int) bool {
	s, ok := format.SpecOf(f.Type())
	g := f.ScaleGroup(k)
	return ok && s.Scale == format.ScaleF16Block && g > 0 && GroupScaledQK%g == 0
}

// scaleGranularity says in words how format f stores scales, for refusals.
func scaleGranularity(f format.Format, k int) string {
	switch g := f.ScaleGroup(k); {
	case g == 0:
		return "one scale per tensor"
	case g == k:
		return "one scale per row"
	default:
		return fmt.Sprintf("one scale per %d weights", g)
	}
}

// planGroupScaled is NewPlan's step for a DenseCandidate checkpoint: every
// projection must be a float tensor that GroupTernary accepts, else the
// checkpoint is refused with refusal (packed tensors and weight_scale
// tensors belong to BitNet checkpoints, which have a quantization_config).
// It reads every projection once (a scan of the bits, no copy), marks them
// GroupScaled and records the first group scale f16 cannot hold exactly,
// which assignTypes refuses for a Q2_0 output. With masters (--ternarize)
// a checkpoint whose projections are not all group-scaled is not refused:
// its float projections are master weights, ternarized as any bf16 master.
func (p *Plan) planGroupScaled(ckpt *hf.Checkpoint, refusal error, masters bool) error {
	if err := p.scanGroupScaled(ckpt, refusal); err != nil {
		if !masters || !errors.Is(err, refusal) {
			return err
		}
		for i := range p.Tensors {
			p.Tensors[i].GroupScaled = false
			p.Tensors[i].scaleErr = ""
		}
	}
	return nil
}

// scanGroupScaled is planGroupScaled's scan: refusal when a projection is
// not group-scaled ternary.
func (p *Plan) scanGroupScaled(ckpt *hf.Checkpoint, refusal error) error {
	found, seen := false, 0
	for i := range p.Tensors {
		t := &p.Tensors[i]
		if t.Class != tensormap.Projection {
			continue
		}
		if t.Packed || t.Scale.Name != "" || len(t.HFShape) != 2 || !t.Source.DType.IsFloat() {
			return refusal
		}
		d, err := ckpt.Read(t.Source)
		if err != nil {
			return err
		}
		cols := int(t.HFShape[1])
		ok, nonzero, bad := GroupTernary(d.Raw, t.Source.DType, cols)
		if ok {
			t.scaleErr = firstInexactScale(d.Raw, t.Source.DType, cols)
		}
		d.Release()
		if !ok {
			if seen > 0 {
				// Earlier projections were group-scaled: name the one
				// that breaks the pattern, which is likely damage.
				return fmt.Errorf("%w (%d projection(s) before it are group-scaled ternary, but %s is not, at element %d: one scale per %d inputs, one magnitude per group, finite)", refusal, seen, t.HFName, bad, GroupScaledQK)
			}
			return refusal
		}
		seen++
		t.GroupScaled = true
		found = found || nonzero
	}
	if !found {
		return refusal // no projection, or every weight zero: nothing says ternary
	}
	kept := "Q2_0 keeps codes and group scales exactly"
	switch p.OutType {
	case "q2_0":
		kept = "codes and group scales are kept exactly"
	case OutF32:
		kept = "F32 keeps every value exactly"
	case OutF16, OutBF16:
		kept = fmt.Sprintf("%s rounds the values as the type does (--outtype q2_0 keeps codes and group scales exactly)", strings.ToUpper(string(p.OutType)))
	}
	p.Warnings = append(p.Warnings, fmt.Sprintf("dense checkpoint without quantization_config: every projection is group-scaled ternary (one scale per %d inputs); %s", GroupScaledQK, kept))
	return nil
}

// firstInexactScale returns a description of the first group scale of a
// GroupTernary tensor that f16 cannot hold exactly ("" when all fit).
func firstInexactScale(raw []byte, dt hf.DType, cols int) string {
	es := int(dt.Size())
	var v [1]float32
	for g := 0; g*GroupScaledQK*es < len(raw); g++ {
		for i := g * GroupScaledQK; i < (g+1)*GroupScaledQK; i++ {
			hf.DecodeFloats(v[:], raw[i*es:(i+1)*es], dt)
			d := float32(math.Abs(float64(v[0])))
			if d == 0 {
				continue
			}
			if !f16Exact(d) {
				return fmt.Sprintf("group scale %g (row %d, inputs %d..%d) is not an f16 value (f16 would store %g)", d, i/cols, g*GroupScaledQK%cols, g*GroupScaledQK%cols+GroupScaledQK-1, quantize.F16ToF32(quantize.F32ToF16(d)))
			}
			break
		}
	}
	return ""
}

// groupScaled returns the codes (HF [out, in] row-major), the per-group
// scales (one per GroupScaledQK inputs, row-major) and the decoded values x
// of a GroupScaled projection: code sign(x), scale |x| of the group's
// nonzero values. A value off its group's magnitude or a scale f16 cannot
// hold (for an f16-scaled output) is an error naming the tensor. The
// slices are reused by the next call, except scales.
func (c *converter) groupScaled(ctx context.Context, t *PlannedTensor, d *hf.TensorData) (codes []int8, scales, x []float32, err error) {
	x, err = c.decode(ctx, t, d)
	if err != nil {
		return nil, nil, nil, err
	}
	cols := int(t.HFShape[1])
	if cols%GroupScaledQK != 0 {
		return nil, nil, nil, fmt.Errorf("tensor %s: row length %d is not a multiple of %d (internal error)", t.HFName, cols, GroupScaledQK)
	}
	c.codes = grow(c.codes, len(x))
	codes = c.codes
	scales = make([]float32, len(x)/GroupScaledQK)
	needF16 := t.Format != nil
	for g := range scales {
		var s float32
		for i := g * GroupScaledQK; i < (g+1)*GroupScaledQK; i++ {
			v := x[i]
			a := float32(math.Abs(float64(v)))
			switch {
			case a == 0:
				codes[i] = 0
				continue
			case s == 0:
				s = a
			case a != s:
				return nil, nil, nil, fmt.Errorf("tensor %s: element %d (%g) is not ±%g like the rest of its %d-input group; the checkpoint changed since it was planned", t.HFName, i, v, s, GroupScaledQK)
			}
			codes[i] = 1
			if v < 0 {
				codes[i] = -1
			}
		}
		if needF16 && !f16Exact(s) {
			return nil, nil, nil, fmt.Errorf("tensor %s: group scale %g (row %d) is not an f16 value, so %s cannot keep it exactly; not supported", t.HFName, s, g*GroupScaledQK/cols, t.Type)
		}
		scales[g] = s
	}
	return codes, scales, x, nil
}

// groupScaledProjection encodes a GroupScaled projection: in its ternary
// format with every group scale (Q2_0: each of the group's two 64-weight
// blocks gets its d, or 0 when all its codes are 0, which is what mainline's
// quantize_row_q2_0_ref (d = block amax) makes of the same values, so the
// bytes equal llama-quantize Q2_0 of our F32 file; shared/spec
// formats-2026.md §5), or in a float type as the original values (x, rows in
// GGUF order).
func (c *converter) groupScaledProjection(ctx context.Context, t *PlannedTensor, d *hf.TensorData) ([]byte, error) {
	codes, scales, x, err := c.groupScaled(ctx, t, d)
	if err != nil {
		return nil, err
	}
	if codes, x, err = c.ropeOrder(t, codes, x); err != nil {
		return nil, err
	}
	if scales, err = c.ropeScales(t, scales); err != nil {
		return nil, err
	}
	rows, cols := int(t.HFShape[0]), int(t.HFShape[1])
	f := t.Format
	if f == nil {
		return c.encodeFloat(ctx, t, len(x), func(i int) float32 { return x[i] })
	}
	blocks, err := format.Regroup(codes, scales, GroupScaledQK, f.ScaleGroup(cols))
	if err != nil {
		return nil, fmt.Errorf("tensor %s: %w", t.GGUFName, err)
	}
	c.out = grow(c.out, int(t.Bytes))
	if err := format.EncodeParallel(f, c.out, codes, blocks, cols, rows, c.threads); err != nil {
		return nil, fmt.Errorf("tensor %s: %w", t.GGUFName, err)
	}
	t.scaleNote = fmt.Sprintf(", %d group scales kept (f16)", len(scales))
	return c.out, nil
}

// groupScaledType is assignTypes' rule for a GroupScaled projection t going
// to the ternary format f (rows of k inputs): kept when f holds its group
// scales exactly (a scale f16 cannot hold is refused naming the tensor);
// else refused with one line suggesting --outtype q2_0, unless
// opts.Ternarize asks for the lossy per-tensor abs-mean re-ternarization
// (t is then a plain master weight; its GGUF name is added to relossed).
func groupScaledType(t *PlannedTensor, f format.Format, k int, opts Options, relossed *[]string) error {
	if !t.GroupScaled {
		return nil
	}
	switch {
	case holdsGroupScales(f, k):
		if t.scaleErr != "" {
			return fmt.Errorf("tensor %s (%s): %s; %s stores f16 scales, so this checkpoint cannot be converted exactly (not supported)", t.GGUFName, t.HFName, t.scaleErr, f.Name())
		}
		return nil
	case opts.Ternarize:
		t.GroupScaled = false
		*relossed = append(*relossed, t.GGUFName)
		return nil
	}
	return fmt.Errorf("tensor %s (%s) is group-scaled ternary (one scale per %d inputs) and %s has %s, so its scales cannot be kept: use --outtype q2_0 (exact), or --ternarize to re-ternarize with one abs-mean scale per tensor (lossy)", t.GGUFName, t.HFName, GroupScaledQK, f.Name(), scaleGranularity(f, k))
}

// ropeScales returns the group scales of projection t ([rows, cols/128])
// in the GGUF's row order: the scales of a row move with it when ropeOrder
// interleaves the rows.
func (c *converter) ropeScales(t *PlannedTensor, scales []float32) ([]float32, error) {
	rp, ok := c.plan.Converter.(RopePermuter)
	if !ok || rp.RopeHeads(t.GGUFName) <= 0 {
		return scales, nil
	}
	rows, cols := int(t.HFShape[0]), int(t.HFShape[1])
	perm := make([]float32, len(scales))
	if err := permuteRopeRows(perm, scales, rows, cols/GroupScaledQK, rp.RopeHeads(t.GGUFName)); err != nil {
		return nil, fmt.Errorf("tensor %s: %w", t.HFName, err)
	}
	return perm, nil
}
