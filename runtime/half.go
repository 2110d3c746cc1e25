package runtime

import (
	"math"

	"github.com/x448/float16"
)

// f16Table maps every IEEE binary16 bit pattern to its float32 value (exact).
var f16Table = func() *[1 << 16]float32 {
	var t [1 << 16]float32
	for i := range t {
		t[i] = float16.Frombits(uint16(i)).Float32()
	}
	return &t
}()

// f16ToF32 widens an IEEE binary16 value (exact).
func f16ToF32(h uint16) float32 { return f16Table[h] }

// f32ToF16 rounds f to binary16, round-half-to-even, as ggml's
// GGML_FP32_TO_FP16 does on F16C hardware (_cvtss_sh with mode 0).
func f32ToF16(f float32) uint16 { return float16.Fromfloat32(f).Bits() }

// roundF16 returns f rounded to binary16 and widened back to float32.
func roundF16(f float32) float32 { return f16Table[f32ToF16(f)] }

// bf16ToF32 widens a bfloat16 value (exact).
func bf16ToF32(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }
