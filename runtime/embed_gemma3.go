package runtime

import (
	"math"
	"slices"
)

// Gemma3 (BitNet embedding 270M): GELU(tanh)-gated FFN, token embedding
// scaled by √hidden, post-attention and post-FFN RMSNorms (HF
// Gemma3TextModel). The GGUF norms already hold 1 + w, so they multiply like
// Qwen3's; the attention scale is 1/√head_dim unless attention.scale says
// otherwise (= 1/√query_pre_attn_scalar, see EmbeddingParams.AttnScale).
func init() {
	embedArchs["gemma3"] = embedArchSpec{act: embGELUTanh, actNames: []string{"gelu_pytorch_tanh", "gelu"}, embedScale: true, postNorms: true, vectors: append(slices.Clone(embedNorms), gemmaPostNorms...)}
}

// embGELUTanh is HF's gelu_pytorch_tanh: 0.5·x·(1 + tanh(√(2/π)·(x +
// 0.044715·x³))), computed in float64 and rounded once.
func embGELUTanh(x float32) float32 {
	v := float64(x)
	return float32(0.5 * v * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(v+0.044715*v*v*v))))
}
