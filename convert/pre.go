package convert

import (
	"fmt"

	"github.com/bitnet-convert/bitnet-convert/format"
	"github.com/bitnet-convert/bitnet-convert/gguf"
)

// Falcon pre-tokenizer names per output type.
//
// Falcon3 and Falcon-E tokenizers share one pre_tokenizer layout
// (Punctuation, ByteLevel with its regex, individual Digits), which
// hf2gguf detects as "falcon3" for every outtype (tokenizer/hfjson.go): it
// is the name every runtime we target knows and maps to the LLAMA3 rule —
// mainline llama.cpp and ik_llama.cpp list it with llama3/llama-bpe
// (src/llama-vocab.cpp, llm_load_vocab), and so do the bitnet.cpp builds
// that run Falcon3. bitnet.cpp's own converter writes "falcon_e" for
// Falcon-E (utils/convert-hf-to-gguf-bitnet.py, by tokenizer hash; TII's
// published GGUFs carry it), but only bitnet.cpp eb60fc3's llama.cpp fork
// knows that name: bitnet.cpp HEAD's submodule refuses it
// (microsoft/BitNet #622), mainline refuses it, ik_llama.cpp accepts it
// since PR #555 (as LLAMA3, the falcon3 rule). So:
//
//   - hf2gguf writes "falcon3" for I2_S/TL1/TL2, TQ1_0/TQ2_0/Q2_0,
//     IQ1_BN/IQ2_BN and the float types alike; `--pre falcon_e` (to match
//     TII's files) is accepted for bitnet.cpp and ik_llama.cpp outtypes and
//     the float types, and refused for the mainline ones (CheckPre);
//   - requant keeps the input's name, except "falcon_e" written for
//     mainline llama.cpp, which becomes "falcon3" with a notice
//     (retargetPre): TII's I2_S file requantized to TQ2_0 loads in mainline.
//
// Both names split text identically in this project's runtime
// (tokenizer/pretokenize.go).

// mainlinePre maps a tokenizer.ggml.pre only bitnet.cpp's fork knows to the
// name mainline llama.cpp knows with the same split rule.
var mainlinePre = map[string]string{"falcon_e": "falcon3"}

// CheckPre refuses --pre NAME for an outtype whose runtime does not know
// NAME: falcon_e for the mainline llama.cpp outtypes (TQ1_0, TQ2_0, Q2_0).
// The error is one line naming the flag, the runtime and the name to use;
// nil for every other pair. NewPlan applies it; hf2gguf checks it first as a
// usage error.
func CheckPre(pre string, o OutType) error {
	s, ok := format.Lookup(string(o))
	if !ok || s.Runtime != format.RuntimeLlamaCpp {
		return nil
	}
	if to, bad := mainlinePre[pre]; bad {
		return fmt.Errorf("--pre %s: --outtype %s is for mainline llama.cpp, which refuses the pre-tokenizer %q (unknown pre-tokenizer type); pass --pre %s, which splits identically", pre, o, pre, to)
	}
	return nil
}

// retargetPre returns kvs with a tokenizer.ggml.pre mainline llama.cpp
// does not know replaced by its mainline twin when runtime is mainline,
// with the notice to print ("" when nothing changed). kvs is modified in
// place.
func retargetPre(kvs []gguf.KV, runtime string) ([]gguf.KV, string) {
	if runtime != format.RuntimeLlamaCpp {
		return kvs, ""
	}
	for i, kv := range kvs {
		if kv.Key != "tokenizer.ggml.pre" {
			continue
		}
		from, _ := kv.Value.V.(string)
		if to, ok := mainlinePre[from]; ok {
			kvs[i].Value = gguf.String(to)
			return kvs, fmt.Sprintf("notice: tokenizer.ggml.pre %q is written as %q: mainline llama.cpp does not know %q, and %q selects the same split rule", from, to, from, to)
		}
	}
	return kvs, ""
}
