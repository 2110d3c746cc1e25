package writer

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"

	"github.com/bitnet-convert/bitnet-convert/gguf"
)

// CheckValue reports whether v can be encoded: its Type must be a known GGUF
// value type and V must hold the matching Go type (uint8 for ValueUint8, …,
// string for ValueString); for ValueArray, Elem must be a known non-array
// type and V the slice of its Go type ([]string, []int32, []float32, []uint8,
// []bool, …). Errors wrap gguf.ErrValueType and name the expected Go type.
func CheckValue(v gguf.Value) error {
	if v.Type == gguf.ValueArray {
		if v.Elem == gguf.ValueArray {
			return fmt.Errorf("%w: nested arrays are not supported", gguf.ErrValueType)
		}
		if !matchesSlice(v.Elem, v.V) {
			return fmt.Errorf("%w: array of %s holds Go %T, want %s", gguf.ErrValueType, v.Elem, v.V, goSliceName(v.Elem))
		}
		return nil
	}
	if !matchesScalar(v.Type, v.V) {
		return fmt.Errorf("%w: %s value holds Go %T", gguf.ErrValueType, v.Type, v.V)
	}
	return nil
}

func matchesScalar(t gguf.ValueType, x any) bool {
	switch x.(type) {
	case uint8:
		return t == gguf.ValueUint8
	case int8:
		return t == gguf.ValueInt8
	case uint16:
		return t == gguf.ValueUint16
	case int16:
		return t == gguf.ValueInt16
	case uint32:
		return t == gguf.ValueUint32
	case int32:
		return t == gguf.ValueInt32
	case float32:
		return t == gguf.ValueFloat32
	case bool:
		return t == gguf.ValueBool
	case string:
		return t == gguf.ValueString
	case uint64:
		return t == gguf.ValueUint64
	case int64:
		return t == gguf.ValueInt64
	case float64:
		return t == gguf.ValueFloat64
	}
	return false
}

func matchesSlice(t gguf.ValueType, x any) bool {
	switch x.(type) {
	case []uint8:
		return t == gguf.ValueUint8
	case []int8:
		return t == gguf.ValueInt8
	case []uint16:
		return t == gguf.ValueUint16
	case []int16:
		return t == gguf.ValueInt16
	case []uint32:
		return t == gguf.ValueUint32
	case []int32:
		return t == gguf.ValueInt32
	case []float32:
		return t == gguf.ValueFloat32
	case []bool:
		return t == gguf.ValueBool
	case []string:
		return t == gguf.ValueString
	case []uint64:
		return t == gguf.ValueUint64
	case []int64:
		return t == gguf.ValueInt64
	case []float64:
		return t == gguf.ValueFloat64
	}
	return false
}

var goSliceNames = map[gguf.ValueType]string{
	gguf.ValueUint8: "[]uint8", gguf.ValueInt8: "[]int8", gguf.ValueUint16: "[]uint16", gguf.ValueInt16: "[]int16",
	gguf.ValueUint32: "[]uint32", gguf.ValueInt32: "[]int32", gguf.ValueFloat32: "[]float32", gguf.ValueBool: "[]bool",
	gguf.ValueString: "[]string", gguf.ValueUint64: "[]uint64", gguf.ValueInt64: "[]int64", gguf.ValueFloat64: "[]float64",
}

func goSliceName(t gguf.ValueType) string {
	if s, ok := goSliceNames[t]; ok {
		return s
	}
	return "a known element type"
}

func appendString(b []byte, s string) []byte {
	b = binary.LittleEndian.AppendUint64(b, uint64(len(s)))
	return append(b, s...)
}

// Element encoders, one per GGUF scalar type (little-endian).
func appendU8(b []byte, x uint8) []byte   { return append(b, x) }
func appendI8(b []byte, x int8) []byte    { return append(b, byte(x)) }
func appendU16(b []byte, x uint16) []byte { return binary.LittleEndian.AppendUint16(b, x) }
func appendI16(b []byte, x int16) []byte  { return binary.LittleEndian.AppendUint16(b, uint16(x)) }
func appendU32(b []byte, x uint32) []byte { return binary.LittleEndian.AppendUint32(b, x) }
func appendI32(b []byte, x int32) []byte  { return binary.LittleEndian.AppendUint32(b, uint32(x)) }
func appendF32(b []byte, x float32) []byte {
	return binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
}
func appendU64(b []byte, x uint64) []byte { return binary.LittleEndian.AppendUint64(b, x) }
func appendI64(b []byte, x int64) []byte  { return binary.LittleEndian.AppendUint64(b, uint64(x)) }
func appendF64(b []byte, x float64) []byte {
	return binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
}
func appendBool(b []byte, x bool) []byte {
	if x {
		return append(b, 1)
	}
	return append(b, 0)
}

// headerChunk is about how many header bytes headerWriter collects before
// writing them.
const headerChunk = 64 << 10

// headerWriter collects encoded header bytes in b and writes them to w
// whenever headerChunk bytes have accumulated (spill) and at the end
// (flush). n counts the bytes written; the first write error is kept in err
// and later writes are skipped.
type headerWriter struct {
	w   io.Writer
	b   []byte
	n   uint64
	err error
}

// spill writes b once it holds headerChunk bytes or more.
func (h *headerWriter) spill() {
	if len(h.b) >= headerChunk {
		h.flush()
	}
}

// flush writes b and empties it.
func (h *headerWriter) flush() {
	if h.err == nil && len(h.b) > 0 {
		_, h.err = h.w.Write(h.b)
		h.n += uint64(len(h.b))
	}
	h.b = h.b[:0]
}

// appendArray encodes an array body: u64 count, then each element with enc,
// spilling to the writer as the body grows.
func appendArray[T any](h *headerWriter, xs []T, enc func([]byte, T) []byte) {
	h.b = binary.LittleEndian.AppendUint64(h.b, uint64(len(xs)))
	for i, x := range xs {
		h.b = enc(h.b, x)
		if i&1023 == 1023 {
			h.spill()
		}
	}
}

// appendValue encodes v (without its type tag) into h; v must have passed
// CheckValue.
func appendValue(h *headerWriter, v gguf.Value) {
	if b, ok := appendScalar(h.b, v); ok {
		h.b = b
		return
	}
	// Arrays: element type, then the body.
	h.b = appendU32(h.b, uint32(v.Elem))
	switch x := v.V.(type) {
	case []uint8:
		h.b = binary.LittleEndian.AppendUint64(h.b, uint64(len(x)))
		for len(x) > 0 { // in pieces: a byte array may be large
			k := min(len(x), headerChunk)
			h.b = append(h.b, x[:k]...)
			x = x[k:]
			h.spill()
		}
	case []int8:
		appendArray(h, x, appendI8)
	case []uint16:
		appendArray(h, x, appendU16)
	case []int16:
		appendArray(h, x, appendI16)
	case []uint32:
		appendArray(h, x, appendU32)
	case []int32:
		appendArray(h, x, appendI32)
	case []float32:
		appendArray(h, x, appendF32)
	case []bool:
		appendArray(h, x, appendBool)
	case []string:
		appendArray(h, x, appendString)
	case []uint64:
		appendArray(h, x, appendU64)
	case []int64:
		appendArray(h, x, appendI64)
	case []float64:
		appendArray(h, x, appendF64)
	default:
		panic("gguf/writer: appendValue of unchecked value") // programmer error: CheckValue first
	}
}

// appendScalar appends a scalar v and reports true, or reports false for an
// array.
func appendScalar(b []byte, v gguf.Value) ([]byte, bool) {
	switch x := v.V.(type) {
	case uint8:
		return appendU8(b, x), true
	case int8:
		return appendI8(b, x), true
	case uint16:
		return appendU16(b, x), true
	case int16:
		return appendI16(b, x), true
	case uint32:
		return appendU32(b, x), true
	case int32:
		return appendI32(b, x), true
	case float32:
		return appendF32(b, x), true
	case bool:
		return appendBool(b, x), true
	case string:
		return appendString(b, x), true
	case uint64:
		return appendU64(b, x), true
	case int64:
		return appendI64(b, x), true
	case float64:
		return appendF64(b, x), true
	}
	return b, false
}
