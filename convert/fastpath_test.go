package convert

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/quantize"
)

// TestBF16ToF16Table: the table path gives the generic path's bits for every
// finite bf16 value that fits F16, flags the first non-finite value and any
// value beyond 65504.
func TestBF16ToF16Table(t *testing.T) {
	raw := make([]byte, 2<<16)
	for b := 0; b < 1<<16; b++ {
		binary.LittleEndian.PutUint16(raw[2*b:], uint16(b))
	}
	out := make([]byte, len(raw))
	for b := 0; b < 1<<16; b++ {
		i, of := encodeBF16ToF16(out[2*b:2*b+2], raw[2*b:2*b+2])
		v := quantize.BF16ToF32(uint16(b))
		finite := !math.IsNaN(float64(v)) && !math.IsInf(float64(v), 0)
		switch {
		case !finite:
			if i != 0 {
				t.Fatalf("bf16 %#04x (%v) not flagged non-finite", b, v)
			}
		case math.Abs(float64(v)) > 65504:
			if !of || i >= 0 {
				t.Fatalf("bf16 %#04x (%v): overflow %v bad %d", b, v, of, i)
			}
		default:
			if i >= 0 || of {
				t.Fatalf("bf16 %#04x (%v) flagged (bad %d, overflow %v)", b, v, i, of)
			}
			if got, want := binary.LittleEndian.Uint16(out[2*b:]), quantize.F32ToF16(v); got != want {
				t.Fatalf("bf16 %#04x: f16 %#04x, want %#04x", b, got, want)
			}
		}
	}
}

// TestBF16ToF16Whole converts every in-range bf16 pattern in one call (the
// vector path of internal/kernels) and compares with the table; then one
// value out of range anywhere must give the loop's answer.
func TestBF16ToF16Whole(t *testing.T) {
	var raw []byte
	for b := 0; b < 1<<16; b++ {
		if b&0x7fff < bf16F16Limit {
			raw = binary.LittleEndian.AppendUint16(raw, uint16(b))
		}
	}
	out := make([]byte, len(raw))
	if i, of := encodeBF16ToF16(out, raw); i >= 0 || of {
		t.Fatalf("in-range patterns flagged (bad %d, overflow %v)", i, of)
	}
	lut := bf16ToF16()
	for k := 0; k < len(raw); k += 2 {
		b := binary.LittleEndian.Uint16(raw[k:])
		if got := binary.LittleEndian.Uint16(out[k:]); got != lut[b] {
			t.Fatalf("bf16 %#04x: f16 %#04x, want %#04x", b, got, lut[b])
		}
	}
	binary.LittleEndian.PutUint16(raw[1000:], 0x7fc0) // NaN at value 500
	binary.LittleEndian.PutUint16(raw[3000:], 0xc780) // -65536 after it
	if i, of := encodeBF16ToF16(out, raw); i != 500 || of {
		t.Errorf("NaN at 500: bad %d overflow %v", i, of)
	}
	binary.LittleEndian.PutUint16(raw[1000:], 0)
	if i, of := encodeBF16ToF16(out, raw); i != -1 || !of {
		t.Errorf("-65536: bad %d overflow %v", i, of)
	}
}

// TestUnpackPackedRange: any split of the byte range gives
// quantize.UnpackPackedU8's codes.
func TestUnpackPackedRange(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	rows, cols := 37, 129
	packed := make([]byte, rows*cols)
	for i := range packed {
		packed[i] = byte(r.Uint32())
	}
	want := make([]int8, 4*len(packed))
	quantize.UnpackPackedU8(want, packed, rows, cols)
	got := make([]int8, len(want))
	for lo := 0; lo < len(packed); {
		hi := min(len(packed), lo+1+r.IntN(500))
		unpackPackedRange(got, packed, lo, hi)
		lo = hi
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("code %d: %d, want %d", i, got[i], want[i])
		}
	}
}
