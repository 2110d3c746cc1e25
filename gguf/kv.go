package gguf

import (
	"fmt"
)

// KV is one GGUF metadata pair. Writers keep KVs in the order given; readers
// return them in file order.
type KV struct {
	Key   string
	Value Value
}

// Value is a typed GGUF metadata value. V holds the Go value matching Type:
// uint8, int8, uint16, int16, uint32, int32, float32, bool, string, uint64,
// int64, float64; for ValueArray, V is a slice of the element's Go type
// ([]string, []int32, []float32, []uint8, …) and Elem names the element type.
// Nested arrays are not supported (no GGUF producer we meet writes them).
type Value struct {
	Type ValueType
	Elem ValueType
	V    any
}

// Uint8 returns a scalar Value of GGUF type uint8. The constructors below
// set the GGUF type from the Go type, so a Value always matches its V.
func Uint8(v uint8) Value { return Value{Type: ValueUint8, V: v} }

// Int8 returns a scalar Value of GGUF type int8.
func Int8(v int8) Value { return Value{Type: ValueInt8, V: v} }

// Uint16 returns a scalar Value of GGUF type uint16.
func Uint16(v uint16) Value { return Value{Type: ValueUint16, V: v} }

// Int16 returns a scalar Value of GGUF type int16.
func Int16(v int16) Value { return Value{Type: ValueInt16, V: v} }

// Uint32 returns a scalar Value of GGUF type uint32.
func Uint32(v uint32) Value { return Value{Type: ValueUint32, V: v} }

// Int32 returns a scalar Value of GGUF type int32.
func Int32(v int32) Value { return Value{Type: ValueInt32, V: v} }

// Float32 returns a scalar Value of GGUF type float32.
func Float32(v float32) Value { return Value{Type: ValueFloat32, V: v} }

// Bool returns a scalar Value of GGUF type bool.
func Bool(v bool) Value { return Value{Type: ValueBool, V: v} }

// String returns a scalar Value of GGUF type string.
func String(v string) Value { return Value{Type: ValueString, V: v} }

// Uint64 returns a scalar Value of GGUF type uint64.
func Uint64(v uint64) Value { return Value{Type: ValueUint64, V: v} }

// Int64 returns a scalar Value of GGUF type int64.
func Int64(v int64) Value { return Value{Type: ValueInt64, V: v} }

// Float64 returns a scalar Value of GGUF type float64.
func Float64(v float64) Value { return Value{Type: ValueFloat64, V: v} }

// Strings returns an array Value of string elements (token lists, merges).
func Strings(v []string) Value { return Value{Type: ValueArray, Elem: ValueString, V: v} }

// Int32s returns an array Value of int32 elements (GGUF value type int32 inside an array).
func Int32s(v []int32) Value { return Value{Type: ValueArray, Elem: ValueInt32, V: v} }

// Float32s returns an array Value of float32 elements (GGUF value type float32 inside an array).
func Float32s(v []float32) Value { return Value{Type: ValueArray, Elem: ValueFloat32, V: v} }

// Uint8s returns an array Value of uint8 elements (GGUF value type uint8 inside an array).
func Uint8s(v []uint8) Value { return Value{Type: ValueArray, Elem: ValueUint8, V: v} }

// Uint32s returns an array Value of uint32 elements (GGUF value type uint32 inside an array).
func Uint32s(v []uint32) Value { return Value{Type: ValueArray, Elem: ValueUint32, V: v} }

// Uint reports v as a uint64 when it is a non-negative integer scalar of any
// width, and false otherwise (readers use it for counts written as u32 by one
// tool and u64 or i32 by another).
func (v Value) Uint() (uint64, bool) {
	switch x := v.V.(type) {
	case uint8:
		return uint64(x), true
	case uint16:
		return uint64(x), true
	case uint32:
		return uint64(x), true
	case uint64:
		return x, true
	case int8:
		return uint64(x), x >= 0
	case int16:
		return uint64(x), x >= 0
	case int32:
		return uint64(x), x >= 0
	case int64:
		return uint64(x), x >= 0
	}
	return 0, false
}

// Float reports v as a float64 when it is a float or integer scalar.
func (v Value) Float() (float64, bool) {
	switch x := v.V.(type) {
	case float32:
		return float64(x), true
	case float64:
		return x, true
	}
	if u, ok := v.Uint(); ok {
		return float64(u), true
	}
	return 0, false
}

// String formats v for people (inspect, errors); arrays are shortened.
func (v Value) String() string {
	if v.Type == ValueArray {
		return fmt.Sprintf("[%s array]", v.Elem)
	}
	return fmt.Sprint(v.V)
}

// Lookup returns the value of key in kvs and whether it was found.
func Lookup(kvs []KV, key string) (Value, bool) {
	for _, kv := range kvs {
		if kv.Key == key {
			return kv.Value, true
		}
	}
	return Value{}, false
}

// TensorInfo is one entry of a GGUF tensor-info table. Ne is in GGUF order
// (ne[0] fastest; a Hugging Face [out, in] matrix has Ne = [in, out]). Offset
// is relative to the start of the aligned data section; writers compute it.
type TensorInfo struct {
	Name   string
	Type   Type
	Ne     []uint64
	Offset uint64
}

// NBytes returns the data size of the tensor (see the package-level NBytes).
func (ti TensorInfo) NBytes() (uint64, error) { return NBytes(ti.Type, ti.Ne) }
