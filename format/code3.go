package format

import (
	"encoding/binary"
	"fmt"
)

// code3Lanes is set at the low bit of every 2-bit code of a 64-bit word.
const code3Lanes = 0x5555555555555555

// firstCode3 returns the index of the first byte of packed 2-bit codes that
// holds code 3 (both bits set), or −1.
func firstCode3(src []byte) int {
	i := 0
	for ; i+8 <= len(src); i += 8 {
		v := binary.LittleEndian.Uint64(src[i:])
		if v&(v>>1)&code3Lanes != 0 {
			break
		}
	}
	for ; i < len(src); i++ {
		if v := src[i]; v&(v>>1)&0x55 != 0 {
			return i
		}
	}
	return -1
}

// countCode3 counts the 2-bit codes 3 in packed bytes.
func countCode3(src []byte) int {
	n := 0
	for _, v := range src {
		n += popcount8(v & (v >> 1) & 0x55)
	}
	return n
}

// code3Error is the error of a tensor holding code 3 in row r.
func code3Error(name, where string, row int) error {
	return fmt.Errorf("%s %s (row %d) holds code 3, which is not ternary", name, where, row)
}

// checkCode3 returns the error naming the first code 3 of an I2_S tensor's
// packed codes (n/4 bytes), or nil.
func (f I2S) checkCode3(packed []byte, k int) error {
	i := firstCode3(packed)
	if i < 0 {
		return nil
	}
	row := i * 4 / k
	if f.layout() == LayoutX86_1x4 {
		// Byte g·K + c holds row 4g + s at bits 6 − 2s.
		v, s := packed[i], 0
		for ; s < 3 && v>>(6-2*s)&3 != 3; s++ {
		}
		row = 4*(i/k) + s
	}
	return code3Error(f.Name(), fmt.Sprintf("byte %d", i), row)
}

// Code3 counts the elements of an I2_S tensor ([m, k], any layout) holding
// code 3, which is not ternary, for inspect.
func (f I2S) Code3(data []byte, k, m int) (int, error) {
	nb, err := f.Bytes(k, m)
	if err != nil || len(data) < nb {
		return 0, fmt.Errorf("%s: %d bytes do not hold [M=%d, K=%d]", f.Name(), len(data), m, k)
	}
	return countCode3(data[:k*m/4]), nil
}

// Code3 counts the elements of a TQ2_0 tensor ([m, k]) holding code 3,
// which is not ternary, for inspect.
func (f TQ2_0) Code3(data []byte, k, m int) (int, error) {
	nb, err := f.Bytes(k, m)
	if err != nil || f.Check(k, m) != nil || len(data) < nb {
		return 0, fmt.Errorf("TQ2_0: %d bytes do not hold [M=%d, K=%d]", len(data), m, k)
	}
	n := 0
	for b := 0; b+66 <= nb; b += 66 {
		n += countCode3(data[b : b+64])
	}
	return n, nil
}
