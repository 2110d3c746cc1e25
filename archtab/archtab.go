package archtab

import (
	"slices"

	"github.com/bitnet-convert/bitnet-convert/tensormap"
)

// Runtime is a target runtime family, named as format.Runtime* names it
// ("bitnet.cpp", "llama.cpp", "ik_llama.cpp").
type Runtime string

// The target runtimes.
const (
	BitnetCpp Runtime = "bitnet.cpp"
	Mainline  Runtime = "llama.cpp"
	IK        Runtime = "ik_llama.cpp"
)

// Activation is the FFN activation of a graph, as {arch}.hidden_activation
// spells it.
type Activation string

// FFN activations.
const (
	SiLU  Activation = "silu"  // gate·silu, llama's FFN
	ReLU2 Activation = "relu2" // squared ReLU, BitNet 2B-4T's FFN
	// GELUTanh is Gemma's gelu_pytorch_tanh.
	GELUTanh Activation = "gelu_pytorch_tanh"
)

// Rope is how a graph pairs the dimensions rope rotates.
type Rope int

// Rope pairings (ggml's rope modes).
const (
	// RopeNeox rotates the two halves of each head (HF rotate_half,
	// ggml LLAMA_ROPE_TYPE_NEOX): q/k rows are stored in HF order.
	RopeNeox Rope = iota + 1
	// RopeNorm rotates adjacent pairs (ggml LLAMA_ROPE_TYPE_NORM): the
	// converter interleaves q/k rows (LlamaModel.permute of the reference
	// converters) so HF's rotate_half becomes adjacent pairs.
	RopeNorm
)

// HParam is one row of a hyper-parameter key set: the GGUF key suffix
// (after "{arch}."), the config.json keys tried in order (first found
// wins), whether the value is a float32 (else a uint32), and whether it is
// required.
type HParam struct {
	Key      string
	CfgKeys  []string
	Float    bool
	Required bool
}

// LlamaHParams is the key set of the causal archs in bitnet.cpp's
// Model.set_gguf_parameters write order (spec conversion.md §1.2); mainline's
// TextModel.set_gguf_parameters (ggml-org/llama.cpp convert_hf_to_gguf.py)
// writes the same keys for llama, qwen2 and qwen3. feed_forward_length is
// required although the Python converters treat intermediate_size as
// optional: llama.cpp's loader needs the key, so a file without it cannot
// run anywhere, and our reference (verify --hf) sizes the FFN from it.
var LlamaHParams = []HParam{
	{Key: "block_count", CfgKeys: []string{"n_layers", "num_hidden_layers", "n_layer"}, Float: false, Required: true},
	{Key: "context_length", CfgKeys: []string{"max_position_embeddings", "n_ctx"}, Float: false, Required: false},
	{Key: "embedding_length", CfgKeys: []string{"hidden_size", "n_embd"}, Float: false, Required: true},
	{Key: "feed_forward_length", CfgKeys: []string{"intermediate_size", "n_inner"}, Float: false, Required: true},
	{Key: "attention.head_count", CfgKeys: []string{"num_attention_heads", "n_head"}, Float: false, Required: true},
	{Key: "attention.head_count_kv", CfgKeys: []string{"num_key_value_heads"}, Float: false, Required: false},
	{Key: "rope.freq_base", CfgKeys: []string{"rope_theta"}, Float: true, Required: false},
	{Key: "attention.layer_norm_rms_epsilon", CfgKeys: []string{"rms_norm_eps"}, Float: true, Required: true},
	{Key: "attention.layer_norm_epsilon", CfgKeys: []string{"layer_norm_eps", "layer_norm_epsilon", "norm_epsilon"}, Float: true, Required: false},
}

// Arch is one row of the table: a GGUF architecture and the Hugging Face
// classes converted to it.
type Arch struct {
	// GGUF is general.architecture as our converter writes it (for
	// bitnet.cpp when it has the graph) and the prefix of its KVs.
	GGUF string
	// HF are the config.json architectures[0] values converted to this
	// row; the first is the class gguf2hf writes back. Empty for a name
	// only read (AliasOf).
	HF []string
	// ModelType is config.json model_type for HF[0] (what gguf2hf writes).
	ModelType string
	// HiddenAct, when several rows share an HF class, lists the hidden_act
	// values that select this row ("" for an absent key).
	HiddenAct []string
	// AliasOf names the row whose model this GGUF name also denotes
	// (bitnet-25, the name bitnet.cpp's convert-ms-to-gguf-bitnet.py and
	// ik_llama.cpp use for 2B-4T, is bitnet-b1.58's model).
	AliasOf string
	// Targets is the GGUF arch each target runtime loads this model as; a
	// runtime absent from the map has no graph for it.
	Targets map[Runtime]string
	// FFN is the FFN activation.
	FFN Activation
	// Rope is the rope pairing of the runtime graph (and of the stored q/k
	// rows).
	Rope Rope
	// SubLN: BitNet's attn_sub_norm [q] and ffn_sub_norm [ff] besides the
	// block norms attn_norm / ffn_norm [hidden].
	SubLN bool
	// QKVBias: attn_q/attn_k/attn_v carry float biases (Qwen2), kept F32.
	QKVBias bool
	// QKNorm: attn_q_norm / attn_k_norm [head_dim] RMS-normalize each head
	// of q and k before rope (Qwen3).
	QKNorm bool
	// NormIn: an RMSNorm before each projection (blk.N.<proj>_norm_in),
	// the BitNet embedding models' naming.
	NormIn bool
	// TiedDefault is tie_word_embeddings when config.json lacks the key
	// (the transformers default of the class): a tied model has no
	// output.weight and its head is token_embd.
	TiedDefault bool
	// Embedding marks a sentence-embedding model (no output head, pooled).
	Embedding bool
	// Table maps the HF tensor names to GGUF names and shapes.
	Table *tensormap.Table
	// StripPrefix is removed from HF names before Table lookup.
	StripPrefix string
	// HParams is the hyper-parameter key set (nil for the embedding rows,
	// whose converter keeps its own).
	HParams []HParam
	// TL2 marks archs whose files may hold bitnet.cpp TL2 tensors (its
	// setup_env.py TL2 route: the BitNet archs and llama).
	TL2 bool
	// Generic marks a row convert's generic HF BitNet converter handles
	// (quantization_config.quant_method "bitnet", no converter hooks: the
	// row alone says how), registered for each of HF.
	Generic bool
}

// BitnetCpp reports whether bitnet.cpp's 2024 fork has the causal graph of
// a (then its arithmetic is the default --arith for a file of this arch).
func (a *Arch) BitnetCpp() bool {
	return !a.Embedding && a.Targets[BitnetCpp] != ""
}

// Target returns the GGUF arch runtime rt loads a's model as, and whether
// rt has a graph for it.
func (a *Arch) Target(rt Runtime) (string, bool) {
	s, ok := a.Targets[rt]
	return s, ok && s != ""
}

// BitNet reports whether a is one of the BitNet graphs (sub-LN norms),
// the archs format.ArchActivation lists.
func (a *Arch) BitNet() bool { return a.SubLN }

// Plain reports whether a's causal graph is llama's or BitNet's with no
// Qwen-era extras (biases, q/k norms, per-projection norms): the graphs
// the packages that predate those extras (gpupack, hfexport) handle.
func (a *Arch) Plain() bool { return !a.Embedding && !a.QKVBias && !a.QKNorm && !a.NormIn }

// bitnetTargets is where the BitNet archs load: their own name in
// bitnet.cpp and ik_llama.cpp, "bitnet" in mainline (ggml-org/llama.cpp
// src/llama-arch.cpp knows only that one).
func bitnetTargets(name string) map[Runtime]string {
	return map[Runtime]string{BitnetCpp: name, IK: name, Mainline: "bitnet"}
}

func everywhere(name string) map[Runtime]string {
	return map[Runtime]string{BitnetCpp: name, IK: name, Mainline: name}
}

// Rows of the table.
var (
	// Bitnet is 1bitLLM's bitnet_b1_58 models (BitnetForCausalLM) and any
	// BitNetForCausalLM with a SiLU FFN (hidden_act silu or absent).
	Bitnet = &Arch{
		GGUF: "bitnet", HF: []string{"BitNetForCausalLM", "BitnetForCausalLM"}, ModelType: "bitnet",
		HiddenAct: []string{"silu", ""}, Targets: bitnetTargets("bitnet"),
		FFN: SiLU, Rope: RopeNeox, SubLN: true, Table: tensormap.BitNet, HParams: LlamaHParams, TL2: true,
	}
	// BitnetB158 is BitNet 2B-4T (hidden_act relu2).
	BitnetB158 = &Arch{
		GGUF: "bitnet-b1.58", HF: []string{"BitNetForCausalLM", "BitnetForCausalLM"}, ModelType: "bitnet",
		HiddenAct: []string{"relu2"}, Targets: bitnetTargets("bitnet-b1.58"),
		FFN: ReLU2, Rope: RopeNeox, SubLN: true, Table: tensormap.BitNet, HParams: LlamaHParams, TL2: true,
	}
	// Bitnet25 is the name bitnet.cpp's convert-ms-to-gguf-bitnet.py and
	// ik_llama.cpp give 2B-4T; read, never written by our converter.
	Bitnet25 = &Arch{
		GGUF: "bitnet-25", ModelType: "bitnet", AliasOf: "bitnet-b1.58", Targets: bitnetTargets("bitnet-25"),
		FFN: ReLU2, Rope: RopeNeox, SubLN: true, Table: tensormap.BitNet, HParams: LlamaHParams, TL2: true,
	}
	// Llama is LlamaForCausalLM with a BitNet quantization_config
	// (Llama3-8B-1.58, Falcon3 1.58bit) and MistralForCausalLM (which
	// ggml-org/llama.cpp convert_hf_to_gguf.py registers on LlamaModel, arch
	// llama): bitnet.cpp's LlamaModel, plain llama names, q/k rows
	// interleaved for the adjacent-pair rope.
	Llama = &Arch{
		GGUF: "llama", HF: []string{"LlamaForCausalLM", "MistralForCausalLM"}, ModelType: "llama", Targets: everywhere("llama"),
		FFN: SiLU, Rope: RopeNorm, Table: tensormap.Llama, HParams: LlamaHParams, TL2: true,
	}
	// Qwen2 is Qwen2ForCausalLM with a BitNet quantization_config
	// (transformers' BitNet integration replaces every nn.Linear; the q/k/v
	// biases stay float, formats-2026.md §4): mainline llama.cpp's qwen2
	// graph (llm_build_qwen2: NEOX rope, SiLU FFN, q/k/v biases, tied or
	// untied head). bitnet.cpp's 2024 fork has no causal qwen graph, and
	// ik_llama.cpp's is not a target we check against, so only mainline is
	// listed.
	Qwen2 = &Arch{
		GGUF: "qwen2", HF: []string{"Qwen2ForCausalLM"}, ModelType: "qwen2", Targets: map[Runtime]string{Mainline: "qwen2"},
		FFN: SiLU, Rope: RopeNeox, QKVBias: true, Table: tensormap.Qwen2, HParams: LlamaHParams, Generic: true,
	}
	// Qwen3 is Qwen3ForCausalLM with a BitNet quantization_config: mainline
	// llama.cpp's causal qwen3 graph (llm_build_qwen3: NEOX rope, SiLU FFN,
	// q/k RMS norms per head, output head or tied embeddings per
	// tie_word_embeddings). bitnet.cpp's 2024 fork predates Qwen3; its
	// embedding-era fork runs only the embedding model (Qwen3Embedding).
	Qwen3 = &Arch{
		GGUF: "qwen3", HF: []string{"Qwen3ForCausalLM"}, ModelType: "qwen3", Targets: map[Runtime]string{Mainline: "qwen3"},
		FFN: SiLU, Rope: RopeNeox, QKNorm: true, Table: tensormap.Qwen3, HParams: LlamaHParams, Generic: true,
	}
	// Qwen3Embedding is Microsoft's bitnet-embedding 0.6B (Qwen3Model,
	// model_type qwen3), which bitnet.cpp's embedding-era fork runs.
	Qwen3Embedding = &Arch{
		GGUF: "qwen3", HF: []string{"Qwen3Model"}, ModelType: "qwen3", Targets: map[Runtime]string{BitnetCpp: "qwen3"},
		FFN: SiLU, Rope: RopeNeox, QKNorm: true, NormIn: true, TiedDefault: true, Embedding: true,
		Table: tensormap.Qwen3Embedding,
	}
	// Gemma3Embedding is Microsoft's bitnet-embedding 270M
	// (Gemma3TextModel, model_type gemma3_text).
	Gemma3Embedding = &Arch{
		GGUF: "gemma3", HF: []string{"Gemma3TextModel"}, ModelType: "gemma3_text", Targets: map[Runtime]string{BitnetCpp: "gemma3"},
		FFN: GELUTanh, Rope: RopeNeox, QKNorm: true, NormIn: true, TiedDefault: true, Embedding: true,
		Table: tensormap.Gemma3Embedding,
	}
)

// rows is the table, in the order listings show it.
var rows = []*Arch{Bitnet, BitnetB158, Bitnet25, Llama, Qwen2, Qwen3, Qwen3Embedding, Gemma3Embedding}

// All returns every row, in table order. The rows are shared: do not modify
// them.
func All() []*Arch { return slices.Clone(rows) }

// Causal returns the causal-LM row of GGUF arch name (a file's
// general.architecture), or nil.
func Causal(name string) *Arch {
	for _, a := range rows {
		if a.GGUF == name && !a.Embedding {
			return a
		}
	}
	return nil
}

// Embedding returns the embedding-model row of GGUF arch name, or nil.
func Embedding(name string) *Arch {
	for _, a := range rows {
		if a.GGUF == name && a.Embedding {
			return a
		}
	}
	return nil
}

// ByHF returns the rows config.json architectures[0] value class converts
// to (several when hidden_act selects among them), in table order.
func ByHF(class string) []*Arch {
	var out []*Arch
	for _, a := range rows {
		if slices.Contains(a.HF, class) {
			out = append(out, a)
		}
	}
	return out
}

// Canonical returns the GGUF arch whose model name denotes: AliasOf for an
// alias row (bitnet-25 → bitnet-b1.58), else name itself.
func Canonical(name string) string {
	for _, a := range rows {
		if a.GGUF == name && a.AliasOf != "" {
			return a.AliasOf
		}
	}
	return name
}

// TargetArch returns the GGUF arch runtime rt loads for a model our
// converter writes as name: the row's Targets entry when rt has one, else
// name unchanged (an arch not in the table, or a runtime without the graph:
// the caller refuses those where it matters).
func TargetArch(name string, rt Runtime) string {
	for _, a := range rows {
		if a.GGUF == name {
			if t, ok := a.Target(rt); ok {
				return t
			}
		}
	}
	return name
}

// TL2 reports whether files of GGUF arch name may hold bitnet.cpp TL2
// tensors (Arch.TL2).
func TL2(name string) bool {
	for _, a := range rows {
		if a.GGUF == name && a.TL2 {
			return true
		}
	}
	return false
}
