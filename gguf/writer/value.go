package writer

import (
	"encoding/binary"
	"fmt"
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

// appendValue encodes v (without its type tag); v must have passed
// CheckValue.
func appendValue(b []byte, v gguf.Value) []byte {
	le := binary.LittleEndian
	switch x := v.V.(type) {
	case uint8:
		return append(b, x)
	case int8:
		return append(b, byte(x))
	case uint16:
		return le.AppendUint16(b, x)
	case int16:
		return le.AppendUint16(b, uint16(x))
	case uint32:
		return le.AppendUint32(b, x)
	case int32:
		return le.AppendUint32(b, uint32(x))
	case float32:
		return le.AppendUint32(b, math.Float32bits(x))
	case bool:
		if x {
			return append(b, 1)
		}
		return append(b, 0)
	case string:
		return appendString(b, x)
	case uint64:
		return le.AppendUint64(b, x)
	case int64:
		return le.AppendUint64(b, uint64(x))
	case float64:
		return le.AppendUint64(b, math.Float64bits(x))
	}
	// Arrays.
	b = le.AppendUint32(b, uint32(v.Elem))
	switch x := v.V.(type) {
	case []uint8:
		b = le.AppendUint64(b, uint64(len(x)))
		return append(b, x...)
	case []int8:
		b = le.AppendUint64(b, uint64(len(x)))
		for _, e := range x {
			b = append(b, byte(e))
		}
	case []uint16:
		b = le.AppendUint64(b, uint64(len(x)))
		for _, e := range x {
			b = le.AppendUint16(b, e)
		}
	case []int16:
		b = le.AppendUint64(b, uint64(len(x)))
		for _, e := range x {
			b = le.AppendUint16(b, uint16(e))
		}
	case []uint32:
		b = le.AppendUint64(b, uint64(len(x)))
		for _, e := range x {
			b = le.AppendUint32(b, e)
		}
	case []int32:
		b = le.AppendUint64(b, uint64(len(x)))
		for _, e := range x {
			b = le.AppendUint32(b, uint32(e))
		}
	case []float32:
		b = le.AppendUint64(b, uint64(len(x)))
		for _, e := range x {
			b = le.AppendUint32(b, math.Float32bits(e))
		}
	case []bool:
		b = le.AppendUint64(b, uint64(len(x)))
		for _, e := range x {
			if e {
				b = append(b, 1)
			} else {
				b = append(b, 0)
			}
		}
	case []string:
		b = le.AppendUint64(b, uint64(len(x)))
		for _, e := range x {
			b = appendString(b, e)
		}
	case []uint64:
		b = le.AppendUint64(b, uint64(len(x)))
		for _, e := range x {
			b = le.AppendUint64(b, e)
		}
	case []int64:
		b = le.AppendUint64(b, uint64(len(x)))
		for _, e := range x {
			b = le.AppendUint64(b, uint64(e))
		}
	case []float64:
		b = le.AppendUint64(b, uint64(len(x)))
		for _, e := range x {
			b = le.AppendUint64(b, math.Float64bits(e))
		}
	default:
		panic("gguf/writer: appendValue of unchecked value") // programmer error: CheckValue first
	}
	return b
}
