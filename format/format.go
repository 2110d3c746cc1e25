package format

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/quantize"
)

// Format is one ternary GGUF weight encoding. Tensors are 2-D with GGUF
// ne = [k, m] (HF [out, in] = [m, k]); codes are the ternary values −1, 0, +1
// in HF row-major order (element r·k + c); scales hold one float32 per scale
// group (see ScaleGroup), in element order.
type Format interface {
	// Name is the user-facing name: "I2_S" (x86 layout), "I2_S/arm",
	// "I2_S/x86-1x4", "TL1", "TL2", "TQ1_0", "TQ2_0", "IQ1_BN", "IQ2_BN".
	Name() string
	// Type is the ggml type id written in the tensor info.
	Type() gguf.Type
	// ScaleGroup is the number of consecutive elements sharing one scale for
	// a row length k: 0 means one scale for the whole tensor.
	ScaleGroup(k int) int
	// StoredScale is a scale s as Encode stores it and Decode returns it
	// (f16-rounded for TQ1_0, TQ2_0 and IQ1_BN, unchanged where the format
	// stores float32), so that a checker can derive the expected scales of
	// a tensor without an Encode/Decode round of the whole matrix.
	StoredScale(s float32) float32
	// Check returns nil when an [m, k] weight can be stored in this format,
	// else the reason (naming the row length or shape and the rule), for a
	// "tensor X: reason" error or an --allow-fallback note.
	Check(k, m int) error
	// Bytes is the tensor's data size in the file (gguf.NBytes).
	Bytes(k, m int) (int, error)
	// Encode writes the tensor data for codes and scales into dst (len
	// Bytes(k, m)), with the format's own rounding of the scales (f16 for
	// TQ and IQ1_BN). It fails when Check fails or when a length disagrees.
	Encode(dst []byte, codes []int8, scales []float32, k, m int) error
	// Decode reads data (at least Bytes(k, m) long) into codes (len k·m) and
	// returns the scales widened to float32. Codes of a group whose scale is
	// 0 are returned as 0. Errors: bad shape, short data, invalid bytes.
	Decode(codes []int8, data []byte, k, m int) ([]float32, error)
	// Scales reads only the scales of a stored tensor (what Decode returns,
	// without the codes; TL needs no tiling for it), for inspect.
	Scales(data []byte, k, m int) ([]float32, error)
}

// tailScale reads the per-tensor f32 scale at byte off after the size check.
func tailScale(f Format, data []byte, k, m, off int) ([]float32, error) {
	nb, err := f.Bytes(k, m)
	if err != nil {
		return nil, err
	}
	if len(data) < nb || off+4 > len(data) {
		return nil, fmt.Errorf("%s: %d bytes for [M=%d, K=%d], want %d", f.Name(), len(data), m, k, nb)
	}
	return []float32{math.Float32frombits(binary.LittleEndian.Uint32(data[off:]))}, nil
}

// strideScales reads one scale every stride bytes starting at off (f16 when
// half), for the block and row formats.
func strideScales(f Format, data []byte, k, m, n, stride, off int, half bool) ([]float32, error) {
	if k <= 0 || m <= 0 || f.Check(k, m) != nil {
		return nil, fmt.Errorf("%s: shape [M=%d, K=%d] does not fit the format", f.Name(), m, k)
	}
	if len(data) < n*stride {
		return nil, fmt.Errorf("%s: %d bytes for [M=%d, K=%d], want %d", f.Name(), len(data), m, k, n*stride)
	}
	out := make([]float32, n)
	for i := range out {
		p := data[i*stride+off:]
		if half {
			out[i] = quantize.F16ToF32(binary.LittleEndian.Uint16(p))
		} else {
			out[i] = math.Float32frombits(binary.LittleEndian.Uint32(p))
		}
	}
	return out, nil
}

// RuntimeChecker is implemented by formats whose target runtime refuses some
// shapes the layout itself can hold (IQ1_BN/IQ2_BN: rows shorter than 512).
// Writers refuse such tensors (or fall back) like a failed Check.
type RuntimeChecker interface {
	RuntimeCheck(k, m int) error
}

// CheckWrite is Check followed by RuntimeCheck when f has one: the rule a
// converter applies before writing an [m, k] tensor in f.
func CheckWrite(f Format, k, m int) error {
	if err := f.Check(k, m); err != nil {
		return err
	}
	if rc, ok := f.(RuntimeChecker); ok {
		return rc.RuntimeCheck(k, m)
	}
	return nil
}

// numGroups returns the number of scale groups of an [m, k] tensor in f.
func numGroups(f Format, k, m int) int {
	g := f.ScaleGroup(k)
	if g == 0 {
		return 1
	}
	return k * m / g
}

// NumScales returns how many scales Encode expects and Decode returns for an
// [m, k] tensor in f.
func NumScales(f Format, k, m int) int { return numGroups(f, k, m) }

// Regroup converts per-group scales from one granularity to another without
// touching the codes, the way ggml's quantizers see dequantized ternary
// weights: the scale of a destination group is the largest source scale of
// its elements whose code is not 0 (the group's max |w|), or 0 when every code
// of the group is 0. It returns an error naming the element when two nonzero
// codes of one destination group have different source scales (the codes
// could not be kept: a per-block TQ file of a non-ternary model, say).
// Groups are given in elements (0 = the whole tensor of n = len(codes)).
func Regroup(codes []int8, src []float32, srcGroup, dstGroup int) ([]float32, error) {
	n := len(codes)
	if srcGroup == 0 {
		srcGroup = n
	}
	if dstGroup == 0 {
		dstGroup = n
	}
	if n == 0 || srcGroup <= 0 || dstGroup <= 0 || n%srcGroup != 0 || n%dstGroup != 0 || len(src) != n/srcGroup {
		return nil, fmt.Errorf("format: Regroup: %d codes do not split into groups of %d (%d scales) and %d", n, srcGroup, len(src), dstGroup)
	}
	if srcGroup == dstGroup {
		return append([]float32(nil), src...), nil
	}
	dst := make([]float32, n/dstGroup)
	for g := range dst {
		lo, hi := g*dstGroup, (g+1)*dstGroup
		var s float32
		set := false
		// Walk the source groups overlapping [lo, hi).
		for sg := lo / srcGroup; sg*srcGroup < hi; sg++ {
			a, b := max(lo, sg*srcGroup), min(hi, (sg+1)*srcGroup)
			if !anyNonzero(codes[a:b]) {
				continue
			}
			v := src[sg]
			if !set {
				s, set = v, true
			} else if v != s {
				return nil, &ScaleConflictError{First: lo, Other: a, Scale: s, OtherScale: v}
			}
		}
		dst[g] = abs32(s)
	}
	return dst, nil
}

// ScaleConflictError is Regroup's refusal: two nonzero codes that one scale
// of the target's grouping would cover carry different scales in the source
// (a group-scaled input, one scale per 128 inputs, into a type with one scale
// per 256 or per row). First and Other are element indexes of the flattened
// tensor; Scale and OtherScale their source scales.
type ScaleConflictError struct {
	First, Other      int
	Scale, OtherScale float32
}

func (e *ScaleConflictError) Error() string {
	return fmt.Sprintf("elements %d and %d share a scale in the target format but have scales %g and %g; the ternary codes cannot be kept", e.First, e.Other, e.Scale, e.OtherScale)
}

func anyNonzero(c []int8) bool {
	for _, v := range c {
		if v != 0 {
			return true
		}
	}
	return false
}

func abs32(f float32) float32 {
	if f < 0 {
		return -f
	}
	return f
}

// checkLens validates the common Encode/Decode arguments.
func checkLens(f Format, codes int, data int, k, m int, scales int) error {
	if k <= 0 || m <= 0 {
		return fmt.Errorf("%s: shape [M=%d, K=%d] must be positive", f.Name(), m, k)
	}
	if err := f.Check(k, m); err != nil {
		return fmt.Errorf("%s: %w", f.Name(), err)
	}
	if codes != k*m {
		return fmt.Errorf("%s: %d codes for [M=%d, K=%d]", f.Name(), codes, m, k)
	}
	nb, err := f.Bytes(k, m)
	if err != nil {
		return err
	}
	if data < nb {
		return fmt.Errorf("%s: %d bytes for [M=%d, K=%d], want %d", f.Name(), data, m, k, nb)
	}
	if scales >= 0 && scales != numGroups(f, k, m) {
		return fmt.Errorf("%s: %d scales for [M=%d, K=%d], want %d", f.Name(), scales, m, k, numGroups(f, k, m))
	}
	return nil
}

// nbytes is gguf.NBytes for a 2-D [m, k] tensor of type t.
func nbytes(t gguf.Type, k, m int) (int, error) {
	n, err := gguf.NBytes(t, []uint64{uint64(k), uint64(m)})
	if err != nil {
		return 0, err
	}
	if n > uint64(int(^uint(0)>>1)) {
		return 0, gguf.ErrOverflow
	}
	return int(n), nil
}

// zeroCodesOfZeroScales sets the codes of every group whose scale is 0 to 0.
func zeroCodesOfZeroScales(codes []int8, scales []float32, group int) {
	if group == 0 {
		group = len(codes)
	}
	for g, s := range scales {
		if s == 0 {
			clear(codes[g*group : (g+1)*group])
		}
	}
}
