package runtime

import "math"

// Qwen3 (BitNet embedding 0.6B): SiLU-gated FFN, plain RMSNorm weights, no
// embedding scale, no post norms (HF Qwen3Model).
func init() {
	embedArchs["qwen3"] = embedArchSpec{act: embSiLU, actNames: []string{"silu"}, vectors: embedNorms}
}

// embSiLU is x·σ(x), computed in float64 and rounded once.
func embSiLU(x float32) float32 {
	v := float64(x)
	return float32(v / (1 + math.Exp(-v)))
}
