package convert

import "github.com/bitnet-convert/bitnet-convert/archtab"

// qwen3Embedding is BitNet embedding 0.6B: HF model_type qwen3,
// architectures Qwen3Model, GGUF arch qwen3 (spec §1.1 P5, §1.4, §5.5).
// SiLU-gated FFN, q/k head norms, plain RMSNorm weights (no Gemma fix).
var qwen3Embedding = &embedArch{
	modelType: archtab.Qwen3Embedding.ModelType,
	arch:      archtab.Qwen3Embedding.GGUF,
	hfArch:    archtab.Qwen3Embedding.HF[0],
	table:     archtab.Qwen3Embedding.Table,
	actKeys:   []string{"hidden_act"},
	act:       string(archtab.Qwen3Embedding.FFN),
	eosText:   "<|endoftext|>",
}

func init() {
	Register(qwen3Embedding.hfArch, newEmbedding(qwen3Embedding))
	Register("model_type:"+qwen3Embedding.modelType, newEmbedding(qwen3Embedding))
}
