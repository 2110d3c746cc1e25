package convert

import "github.com/bitnet-convert/bitnet-convert/tensormap"

// gemma3Embedding is BitNet embedding 270M: HF model_type gemma3_text,
// architectures Gemma3TextModel, GGUF arch gemma3 (spec §1.1 P5, §1.4, §5.5,
// §6). GELU(tanh)-gated FFN, post-attention and post-FFN norms, Gemma norms
// stored as w and written as 1 + w (never the *_norm_in weights).
var gemma3Embedding = &embedArch{
	modelType: "gemma3_text",
	arch:      "gemma3",
	hfArch:    "Gemma3TextModel",
	table:     tensormap.Gemma3Embedding,
	actKeys:   []string{"hidden_activation", "hidden_act"},
	act:       "gelu_pytorch_tanh",
	gemma:     true,
}

func init() {
	Register(gemma3Embedding.hfArch, newEmbedding(gemma3Embedding))
	Register("model_type:"+gemma3Embedding.modelType, newEmbedding(gemma3Embedding))
}
