package quantize_test

import "github.com/bitnet-convert/bitnet-convert/format"

// The x86 I2_S packing lives in the format layer (format.I2S); these helpers
// let the ternarization tests check their codes against bitnet.cpp's bytes.

func packI2S(dst []byte, codes []int8) {
	out := i2sBytes(codes, 1)
	copy(dst, out[:len(codes)/4])
}

func unpackI2S(dst []int8, packed []byte) {
	data := append(append([]byte(nil), packed...), make([]byte, format.I2STailBytes)...)
	data[len(packed)] = 0
	data[len(packed)+3] = 0x3f // scale 0.5: nonzero, so the codes are kept
	if _, err := (format.I2S{}).Decode(dst, data, len(dst), 1); err != nil {
		panic(err)
	}
}

func i2sBytes(codes []int8, scale float32) []byte {
	out := make([]byte, len(codes)/4+format.I2STailBytes)
	if err := (format.I2S{}).Encode(out, codes, []float32{scale}, len(codes), 1); err != nil {
		panic(err)
	}
	return out
}
