package tokenizer

// hfEOTTokens are the end-of-turn tokens of the chat families we know, in
// order of preference; the first one the vocabulary holds as an added
// (CONTROL or USER_DEFINED) token becomes tokenizer.ggml.eot_token_id.
var hfEOTTokens = []string{
	"<|eot_id|>",      // Llama 3
	"<|im_end|>",      // Qwen (ChatML)
	"<end_of_turn>",   // Gemma
	"<|end_of_turn|>", // OpenChat style
}

// setEOT sets v.EOT from hfEOTTokens when it is still unset.
func setEOT(v *Vocab) {
	if v.EOT != NoToken {
		return
	}
	for _, want := range hfEOTTokens {
		for id, tok := range v.Tokens {
			if tok == want && (v.Types[id] == TypeControl || v.Types[id] == TypeUserDefined) {
				v.EOT = int32(id)
				return
			}
		}
	}
}
