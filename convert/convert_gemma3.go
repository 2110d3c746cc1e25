package convert

import "github.com/bitnet-convert/bitnet-convert/archtab"

// gemma3Embedding is BitNet embedding 270M: HF model_type gemma3_text,
// architectures Gemma3TextModel, GGUF arch gemma3 (spec §1.1 P5, §1.4, §5.5,
// §6). GELU(tanh)-gated FFN, post-attention and post-FFN norms, Gemma norms
// stored as w and written as 1 + w (never the *_norm_in weights).
var gemma3Embedding = &embedArch{
	modelType: archtab.Gemma3Embedding.ModelType,
	arch:      archtab.Gemma3Embedding.GGUF,
	hfArch:    archtab.Gemma3Embedding.HF[0],
	table:     archtab.Gemma3Embedding.Table,
	actKeys:   []string{"hidden_activation", "hidden_act"},
	act:       string(archtab.Gemma3Embedding.FFN),
	gemma:     true,
}

func init() {
	Register(gemma3Embedding.hfArch, newEmbedding(gemma3Embedding))
	Register("model_type:"+gemma3Embedding.modelType, newEmbedding(gemma3Embedding))
}
