package convert

import (
	"fmt"
	"math"

	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/hf"
	"github.com/bitnet-convert/bitnet-convert/tensormap"
)

// embedArch is one row of the embedding-model table: what differs between the
// BitNet sentence-embedding checkpoints (bitnet.cpp's
// convert-bitnet-embedding-to-gguf.py, "P5" in spec conversion.md §0).
type embedArch struct {
	modelType string           // config.json model_type
	arch      string           // GGUF general.architecture
	hfArch    string           // config.json architectures[0] of the embedding model
	table     *tensormap.Table // HF → GGUF names (spec §5.5, P5 table)
	// actKeys are the config keys naming the FFN activation, tried in order;
	// act is the one accepted value (an absent key means it too).
	actKeys []string
	act     string
	// gemma marks Gemma3: the (1 + w) norm fix (spec §6), the
	// query_pre_attn_scalar and sliding-window keys.
	gemma bool
	// eosText, when set, is the token that becomes EOS, with add_eos_token
	// true: the embedding appends it and last-token pooling reads its
	// hidden state (P5 qwen3, spec §5.3: eos forced to 151643 =
	// "<|endoftext|>"; we look the id up by text).
	eosText string
}

// embedOutTypes are the outtypes the embedding converter writes (spec §0 P5:
// f32, f16, i2_s; bf16 is our addition). TL1/TL2 are refused: bitnet.cpp has
// no TL kernels for these models.
var embedOutTypes = []OutType{OutF32, OutF16, OutBF16, OutI2S}

// embeddingModel converts a BitNet sentence-embedding checkpoint (Qwen3 or
// Gemma3 body, a per-projection input RMSNorm, no LM head).
type embeddingModel struct {
	spec *embedArch
}

var _ Converter = (*embeddingModel)(nil)

// newEmbedding returns the NewFunc of spec. A checkpoint whose
// architectures[0] is a causal LM of the same model_type is refused: it would
// convert without its head.
func newEmbedding(spec *embedArch) NewFunc {
	return func(cfg *hf.Config) (Converter, error) {
		archs, _, _ := cfg.Strings("architectures")
		if len(archs) > 0 && archs[0] != spec.hfArch {
			return nil, fmt.Errorf("%s: architecture %q with model_type %q: only the BitNet embedding models (%s) are supported for %s", cfg.Path, archs[0], spec.modelType, spec.hfArch, spec.arch)
		}
		act, _, err := cfg.String(spec.actKeys...)
		if err != nil {
			return nil, err // names config.json and the key
		}
		if act != "" && act != spec.act {
			return nil, fmt.Errorf("%s: %s %q is not supported for %s (want %q)", cfg.Path, spec.actKeys[0], act, spec.arch, spec.act)
		}
		if cfg.Has("rope_scaling") {
			return nil, fmt.Errorf("%s: rope_scaling is not supported for the %s embedding models (remove it or set it to null)", cfg.Path, spec.arch)
		}
		return &embeddingModel{spec: spec}, nil
	}
}

func (m *embeddingModel) Arch() string            { return m.spec.arch }
func (m *embeddingModel) Table() *tensormap.Table { return m.spec.table }
func (m *embeddingModel) StripPrefix() string     { return "model." }
func (m *embeddingModel) Embedding() bool         { return true }

// GemmaNormFix asks process.go for the Gemma (1 + w) fix on the rules flagged
// "gemma-norm" (Gemma3 only; never the *_norm_in weights, spec §6).
func (m *embeddingModel) GemmaNormFix() bool { return m.spec.gemma }

// TokenizerJSONFirst makes the vocabulary come from tokenizer.json even when
// a tokenizer.model is present: bitnet.cpp's embedding converter reads
// tokenizer.json for both models (spec §5.3 P5).
func (m *embeddingModel) TokenizerJSONFirst() bool { return true }

// OutTypes lists the outtypes this converter writes; NewPlan refuses others.
func (m *embeddingModel) OutTypes() []OutType { return embedOutTypes }

// Geometry applies the head_dim rule (config head_dim when present and not
// null, else hidden/heads), as P5 does (spec §1.4).
func (m *embeddingModel) Geometry(cfg *hf.Config) (Geometry, error) { return geometry(cfg) }

// embedHParams is P5's hyper-parameter table (spec §1.4); context_length
// defaults to 32768 below.
var embedHParams = []hparam{
	{Key: "block_count", CfgKeys: []string{"num_hidden_layers"}, Float: false, Required: true},
	{Key: "context_length", CfgKeys: []string{"max_position_embeddings"}, Float: false, Required: false},
	{Key: "embedding_length", CfgKeys: []string{"hidden_size"}, Float: false, Required: true},
	{Key: "feed_forward_length", CfgKeys: []string{"intermediate_size"}, Float: false, Required: true},
	{Key: "attention.head_count", CfgKeys: []string{"num_attention_heads"}, Float: false, Required: true},
	{Key: "attention.head_count_kv", CfgKeys: []string{"num_key_value_heads"}, Float: false, Required: false},
	{Key: "rope.freq_base", CfgKeys: []string{"rope_theta"}, Float: true, Required: false},
	{Key: "attention.layer_norm_rms_epsilon", CfgKeys: []string{"rms_norm_eps"}, Float: true, Required: true},
}

// embedDefaultContext is P5's max_position_embeddings default.
const embedDefaultContext = 32768

// HParams writes P5's KVs (spec §1.4): the table above with context_length
// 32768 and head_count_kv = head_count when absent, vocab_size, head_dim to
// rope.dimension_count, attention.key_length and attention.value_length, and
// for Gemma3 the attention-scale and sliding-window keys (gemmaKVs). The
// pooling type comes from ExtraKVs (it needs the checkpoint directory).
func (m *embeddingModel) HParams(cfg *hf.Config) ([]gguf.KV, error) {
	a := m.spec.arch
	kvs, err := tableKVs(a, cfg, embedHParams)
	if err != nil {
		return nil, err
	}
	g, err := geometry(cfg)
	if err != nil {
		return nil, err
	}
	if _, ok := gguf.Lookup(kvs, a+".context_length"); !ok {
		kvs = insertAfter(kvs, a+".block_count", gguf.KV{Key: a + ".context_length", Value: gguf.Uint32(embedDefaultContext)})
	}
	if _, ok := gguf.Lookup(kvs, a+".attention.head_count_kv"); !ok {
		kvs = insertAfter(kvs, a+".attention.head_count", gguf.KV{Key: a + ".attention.head_count_kv", Value: gguf.Uint32(uint32(g.HeadsKV))})
	}
	kvs = append(kvs, gguf.KV{Key: a + ".vocab_size", Value: gguf.Uint32(uint32(g.Vocab))})
	kvs = append(kvs, headDimKVs(a, g, true)...)
	if err := checkNoSlidingQwen(m.spec, cfg); err != nil {
		return nil, err
	}
	if b, ok, err := cfg.Bool("use_bidirectional_attention"); err != nil {
		return nil, err // names config.json and the key
	} else if ok && b {
		kvs = append(kvs, gguf.KV{Key: a + ".attention.causal", Value: gguf.Bool(false)})
	}
	if m.spec.gemma {
		gk, err := gemmaKVs(a, cfg, g)
		if err != nil {
			return nil, err
		}
		kvs = append(kvs, gk...)
	}
	return kvs, nil
}

// checkNoSlidingQwen refuses Qwen3 configs that switch sliding-window
// attention on (the runtime and bitnet.cpp's qwen3 graph have none).
func checkNoSlidingQwen(spec *embedArch, cfg *hf.Config) error {
	if spec.gemma {
		return nil
	}
	on, _, err := cfg.Bool("use_sliding_window")
	if err != nil {
		return err // names config.json and the key
	}
	if on {
		return fmt.Errorf("%s: use_sliding_window true is not supported for qwen3 (set it to false)", cfg.Path)
	}
	return nil
}

func insertAfter(kvs []gguf.KV, key string, kv gguf.KV) []gguf.KV {
	for i := range kvs {
		if kvs[i].Key == key {
			out := append([]gguf.KV{}, kvs[:i+1]...)
			out = append(out, kv)
			return append(out, kvs[i+1:]...)
		}
	}
	return append(kvs, kv)
}

// FixVocabKVs applies the architecture's tokenizer overrides to the
// tokenizer KVs: with spec.eosText present in tokenizer.ggml.tokens, its id
// becomes tokenizer.ggml.eos_token_id and tokenizer.ggml.add_eos_token is
// true. Without the token the KVs are returned unchanged.
func (m *embeddingModel) FixVocabKVs(kvs []gguf.KV) []gguf.KV {
	if m.spec.eosText == "" {
		return kvs
	}
	tv, ok := gguf.Lookup(kvs, "tokenizer.ggml.tokens")
	toks, _ := tv.V.([]string)
	id := -1
	for i, t := range toks {
		if ok && t == m.spec.eosText {
			id = i
			break
		}
	}
	if id < 0 {
		return kvs
	}
	kvs = setKV(kvs, gguf.KV{Key: "tokenizer.ggml.eos_token_id", Value: gguf.Uint32(uint32(id))})
	return setKV(kvs, gguf.KV{Key: "tokenizer.ggml.add_eos_token", Value: gguf.Bool(true)})
}

// setKV replaces the value of kv.Key or appends kv.
func setKV(kvs []gguf.KV, kv gguf.KV) []gguf.KV {
	for i := range kvs {
		if kvs[i].Key == kv.Key {
			kvs[i].Value = kv.Value
			return kvs
		}
	}
	return append(kvs, kv)
}

// ExtraKVs adds {arch}.pooling_type from the sentence-transformers files in
// dir (pooling.go), with a warning when they do not name one.
func (m *embeddingModel) ExtraKVs(dir string) ([]gguf.KV, []string, error) {
	pt, warns, err := ReadPooling(dir)
	if err != nil {
		return nil, nil, err
	}
	return []gguf.KV{{Key: m.spec.arch + ".pooling_type", Value: gguf.Uint32(uint32(pt))}}, warns, nil
}

// gemmaKVs are the Gemma3-only keys.
//
//   - {arch}.attention.scale (f32) = 1/√query_pre_attn_scalar, written only
//     when query_pre_attn_scalar is given and differs from head_dim: P5 writes
//     no such key and the runtime (like llama.cpp's gemma3 graph) derives
//     1/√head_dim, which is the same number for both released models (256).
//   - {arch}.attention.sliding_window (u32), {arch}.attention.sliding_window_pattern
//     (array of bool, one per layer, true = sliding) and
//     {arch}.rope.freq_base_swa (f32, rope_local_base_freq, default 10000),
//     with transformers' Gemma3TextConfig defaults: sliding_window 4096
//     when absent (null means none), layer_types, else sliding_window_pattern N (default 6:
//     every N-th layer is global). The 270M declares neither, so it gets
//     the defaults, as transformers runs it. Nothing is written when no
//     layer slides.
//   - attn_logit_softcapping other than null is refused (not in the graph).
func gemmaKVs(a string, cfg *hf.Config, g Geometry) ([]gguf.KV, error) {
	var kvs []gguf.KV
	if q, ok, err := cfg.Float("query_pre_attn_scalar"); err != nil {
		return nil, err // names config.json and the key
	} else if ok {
		if !(q > 0) || math.IsInf(q, 0) {
			return nil, fmt.Errorf("%s: query_pre_attn_scalar %v must be positive", cfg.Path, q)
		}
		if q != float64(g.HeadDim) {
			kvs = append(kvs, gguf.KV{Key: a + ".attention.scale", Value: gguf.Float32(float32(1 / math.Sqrt(q)))})
		}
	}
	if cfg.Has("attn_logit_softcapping") {
		return nil, fmt.Errorf("%s: attn_logit_softcapping is not supported for gemma3 (set it to null)", cfg.Path)
	}
	// Transformers' Gemma3TextConfig defaults (configuration_gemma3.py):
	// sliding_window 4096, and without layer_types every
	// sliding_window_pattern-th layer (default 6) uses full attention. An
	// explicit "sliding_window": null turns the window off. The window is
	// written as config.json gives it.
	if v, present := cfg.Raw["sliding_window"]; present && v == nil {
		return kvs, nil
	}
	win, hasWin, err := cfg.Int("sliding_window")
	if err != nil {
		return nil, err // names config.json and the key
	}
	if !hasWin {
		win = gemma3DefaultWindow
	}
	if win <= 0 {
		return nil, fmt.Errorf("%s: sliding_window %d must be positive", cfg.Path, win)
	}
	pattern, hasPattern, err := slidingLayers(cfg, g.Layers)
	if err != nil {
		return nil, err
	}
	if !hasPattern {
		pattern = everyNthFull(g.Layers, gemma3DefaultPattern)
	}
	if !anyTrue(pattern) {
		return kvs, nil
	}
	local := 10000.0
	if v, ok, err := cfg.Float("rope_local_base_freq"); err != nil {
		return nil, err // names config.json and the key
	} else if ok {
		local = v
	}
	bools := make([]bool, len(pattern))
	copy(bools, pattern)
	kvs = append(kvs,
		gguf.KV{Key: a + ".attention.sliding_window", Value: gguf.Uint32(uint32(win))},
		gguf.KV{Key: a + ".attention.sliding_window_pattern", Value: gguf.Value{Type: gguf.ValueArray, Elem: gguf.ValueBool, V: bools}},
		gguf.KV{Key: a + ".rope.freq_base_swa", Value: gguf.Float32(float32(local))})
	return kvs, nil
}

// Gemma3TextConfig's defaults in transformers: a 4096-token window on every
// layer but each sliding_window_pattern-th (6).
const (
	gemma3DefaultWindow  = 4096
	gemma3DefaultPattern = 6
)

// everyNthFull marks layer i sliding unless (i+1) % n == 0, as transformers
// derives layer_types from sliding_window_pattern.
func everyNthFull(layers, n int) []bool {
	out := make([]bool, layers)
	for i := range out {
		out[i] = (i+1)%n != 0
	}
	return out
}

func anyTrue(b []bool) bool {
	for _, v := range b {
		if v {
			return true
		}
	}
	return false
}

// slidingLayers reads which layers use sliding-window attention: layer_types
// ("sliding_attention" / "full_attention", one per layer) or
// sliding_window_pattern N (layer i is global when (i+1) % N == 0).
func slidingLayers(cfg *hf.Config, layers int) ([]bool, bool, error) {
	if types, ok, err := cfg.Strings("layer_types"); err != nil {
		return nil, false, err // names config.json and the key
	} else if ok {
		if len(types) != layers {
			return nil, false, fmt.Errorf("%s: layer_types has %d entries, num_hidden_layers is %d", cfg.Path, len(types), layers)
		}
		out := make([]bool, layers)
		for i, t := range types {
			switch t {
			case "sliding_attention":
				out[i] = true
			case "full_attention":
			default:
				return nil, false, fmt.Errorf("%s: layer_types[%d] = %q (want sliding_attention or full_attention)", cfg.Path, i, t)
			}
		}
		return out, true, nil
	}
	n, ok, err := cfg.Int("sliding_window_pattern")
	if err != nil {
		return nil, false, err // names config.json and the key
	}
	if !ok {
		return nil, false, nil
	}
	if n <= 0 {
		return nil, false, fmt.Errorf("%s: sliding_window_pattern %d must be positive", cfg.Path, n)
	}
	return everyNthFull(layers, n), true, nil
}
