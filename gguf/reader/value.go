package reader

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"github.com/bitnet-convert/bitnet-convert/gguf"
)

// value reads a u32 value type and the value it announces.
func (d *decoder) value() (gguf.Value, error) {
	t, err := d.u32()
	if err != nil {
		return gguf.Value{}, fmt.Errorf("value type: %w", err)
	}
	vt := gguf.ValueType(t)
	if vt == gguf.ValueArray {
		return d.array()
	}
	x, err := d.scalar(vt)
	if err != nil {
		return gguf.Value{}, fmt.Errorf("%s value: %w", vt, err)
	}
	return gguf.Value{Type: vt, V: x}, nil
}

// scalar reads one non-array value of type vt as its Go type.
func (d *decoder) scalar(vt gguf.ValueType) (any, error) {
	switch vt {
	case gguf.ValueUint8:
		return d.u8()
	case gguf.ValueInt8:
		x, err := d.u8()
		return int8(x), err
	case gguf.ValueUint16:
		return d.u16()
	case gguf.ValueInt16:
		x, err := d.u16()
		return int16(x), err
	case gguf.ValueUint32:
		return d.u32()
	case gguf.ValueInt32:
		x, err := d.u32()
		return int32(x), err
	case gguf.ValueFloat32:
		x, err := d.u32()
		return math.Float32frombits(x), err
	case gguf.ValueBool:
		// Any non-zero byte is true, as in C readers.
		x, err := d.u8()
		return x != 0, err
	case gguf.ValueString:
		return d.str()
	case gguf.ValueUint64:
		return d.u64()
	case gguf.ValueInt64:
		x, err := d.u64()
		return int64(x), err
	case gguf.ValueFloat64:
		x, err := d.u64()
		return math.Float64frombits(x), err
	}
	return nil, fmt.Errorf("%w %d", gguf.ErrValueType, uint32(vt))
}

// array reads an element type, a count and the elements into the matching Go
// slice. The count is bounded by the remaining bytes before allocating.
func (d *decoder) array() (gguf.Value, error) {
	t, err := d.u32()
	if err != nil {
		return gguf.Value{}, fmt.Errorf("array element type: %w", err)
	}
	et := gguf.ValueType(t)
	n, err := d.u64()
	if err != nil {
		return gguf.Value{}, fmt.Errorf("array of %s: count: %w", et, err)
	}
	size, fixed := et.Size()
	switch {
	case fixed:
	case et == gguf.ValueString:
		size = 8 // at least the length of each string
	case et == gguf.ValueArray:
		return gguf.Value{}, fmt.Errorf("%w: nested array", gguf.ErrValueType)
	default:
		return gguf.Value{}, fmt.Errorf("array element: %w %d", gguf.ErrValueType, t)
	}
	if n > d.remaining()/size {
		return gguf.Value{}, fmt.Errorf("array of %d %s: %w: %d bytes remain", n, et, ErrTruncated, d.remaining())
	}
	v := gguf.Value{Type: gguf.ValueArray, Elem: et}
	if et == gguf.ValueString {
		v.V, err = d.strs(n)
		return v, err
	}
	p, _ := d.take(n * size) // bounded above
	le := binary.LittleEndian
	switch et {
	case gguf.ValueUint8:
		v.V = append(make([]uint8, 0, n), p...)
	case gguf.ValueInt8:
		v.V = decodeSlice(p, 1, func(b []byte) int8 { return int8(b[0]) })
	case gguf.ValueBool:
		out := make([]bool, n)
		for i, b := range p {
			out[i] = b != 0
		}
		v.V = out
	case gguf.ValueUint16:
		v.V = decodeSlice(p, 2, le.Uint16)
	case gguf.ValueInt16:
		v.V = decodeSlice(p, 2, func(b []byte) int16 { return int16(le.Uint16(b)) })
	case gguf.ValueUint32:
		v.V = decodeSlice(p, 4, le.Uint32)
	case gguf.ValueInt32:
		v.V = decodeSlice(p, 4, func(b []byte) int32 { return int32(le.Uint32(b)) })
	case gguf.ValueFloat32:
		v.V = decodeSlice(p, 4, func(b []byte) float32 { return math.Float32frombits(le.Uint32(b)) })
	case gguf.ValueUint64:
		v.V = decodeSlice(p, 8, le.Uint64)
	case gguf.ValueInt64:
		v.V = decodeSlice(p, 8, func(b []byte) int64 { return int64(le.Uint64(b)) })
	case gguf.ValueFloat64:
		v.V = decodeSlice(p, 8, func(b []byte) float64 { return math.Float64frombits(le.Uint64(b)) })
	}
	return v, nil
}

func decodeSlice[T any](p []byte, size int, f func([]byte) T) []T {
	out := make([]T, len(p)/size)
	for i := range out {
		out[i] = f(p[i*size : (i+1)*size])
	}
	return out
}

// strs reads n strings. They share one backing allocation (a 128k-token
// vocabulary would otherwise cost 128k allocations): a first pass checks the
// lengths, a second slices one string holding all the bytes.
func (d *decoder) strs(n uint64) ([]string, error) {
	start := d.pos
	var total uint64
	for i := uint64(0); i < n; i++ {
		l, err := d.u64()
		if err == nil {
			_, err = d.take(l)
		}
		if err != nil {
			return nil, fmt.Errorf("array of %d string: element %d: %w", n, i, err)
		}
		total += l // bounded by the input length
	}
	end := d.pos
	var sb strings.Builder
	sb.Grow(int(total))
	d.pos = start
	for d.pos < end {
		l, _ := d.u64()
		p, _ := d.take(l)
		sb.Write(p)
	}
	all := sb.String()
	out := make([]string, n)
	var off uint64
	d.pos = start
	for i := range out {
		l, _ := d.u64()
		d.pos += l
		out[i] = all[off : off+l]
		off += l
	}
	return out, nil
}
