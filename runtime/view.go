package runtime

import (
	"encoding/binary"
	"math"
	"unsafe"
)

// littleEndianHost is true when the CPU stores numbers little-endian, as
// GGUF does; then aligned tensor bytes can be used as numbers in place.
var littleEndianHost = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// viewF32 returns the first n little-endian float32 values of data without
// copying them when the host is little-endian and data is 4-byte aligned
// (GGUF aligns tensor data to 32 bytes, so a mapped file qualifies): the
// Matrix then reads the weights straight from the mapped file, and the
// process holds one copy of them, in the page cache. Otherwise it decodes a
// copy. data must hold 4·n bytes.
func viewF32(data []byte, n int) []float32 {
	data = data[:4*n]
	if n > 0 && littleEndianHost && uintptr(unsafe.Pointer(&data[0]))%4 == 0 {
		return unsafe.Slice((*float32)(unsafe.Pointer(&data[0])), n)
	}
	v := make([]float32, n)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
	}
	return v
}

// viewU16 is viewF32 for 16-bit values (F16 and BF16 bits).
func viewU16(data []byte, n int) []uint16 {
	data = data[:2*n]
	if n > 0 && littleEndianHost && uintptr(unsafe.Pointer(&data[0]))%2 == 0 {
		return unsafe.Slice((*uint16)(unsafe.Pointer(&data[0])), n)
	}
	v := make([]uint16, n)
	for i := range v {
		v[i] = binary.LittleEndian.Uint16(data[2*i:])
	}
	return v
}
