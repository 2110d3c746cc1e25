package convert

import (
	"fmt"
	"math"

	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/hf"
)

// hparam is one row of the hyper-parameter table: the GGUF key suffix (after
// "{arch}."), the config.json keys tried in order (first found wins), the
// value type, and whether the key is required. Spec conversion.md §1.2.
type hparam struct {
	key      string
	cfgKeys  []string
	typ      gguf.ValueType // ValueUint32 or ValueFloat32
	required bool
}

// llamaHParams is the table bitnet.cpp's Model.set_gguf_parameters follows,
// in its write order. feed_forward_length is required although the Python
// converter treats intermediate_size as optional: llama.cpp's loader needs
// the key, so a file without it cannot run anywhere, and our reference
// (verify --hf) sizes the FFN from it (defect D4).
var llamaHParams = []hparam{
	{"block_count", []string{"n_layers", "num_hidden_layers", "n_layer"}, gguf.ValueUint32, true},
	{"context_length", []string{"max_position_embeddings", "n_ctx"}, gguf.ValueUint32, false},
	{"embedding_length", []string{"hidden_size", "n_embd"}, gguf.ValueUint32, true},
	{"feed_forward_length", []string{"intermediate_size", "n_inner"}, gguf.ValueUint32, true},
	{"attention.head_count", []string{"num_attention_heads", "n_head"}, gguf.ValueUint32, true},
	{"attention.head_count_kv", []string{"num_key_value_heads"}, gguf.ValueUint32, false},
	{"rope.freq_base", []string{"rope_theta"}, gguf.ValueFloat32, false},
	{"attention.layer_norm_rms_epsilon", []string{"rms_norm_eps"}, gguf.ValueFloat32, true},
	{"attention.layer_norm_epsilon", []string{"layer_norm_eps", "layer_norm_epsilon", "norm_epsilon"}, gguf.ValueFloat32, false},
}

// tableKVs evaluates rows against cfg into "{arch}.key" KVs. Errors name the
// config key and the file.
func tableKVs(arch string, cfg *hf.Config, rows []hparam) ([]gguf.KV, error) {
	var kvs []gguf.KV
	for _, r := range rows {
		switch r.typ {
		case gguf.ValueUint32:
			v, ok, err := cfg.Int(r.cfgKeys...)
			if err != nil {
				return nil, err // names config.json and the key
			}
			if !ok {
				if r.required {
					return nil, fmt.Errorf("%s: missing %q (needed for %s.%s)", cfg.Path, r.cfgKeys[0], arch, r.key)
				}
				continue
			}
			if v <= 0 || uint64(v) > math.MaxUint32 {
				return nil, fmt.Errorf("%s: %q = %d is out of range (want 1 to %d)", cfg.Path, presentKey(cfg, r.cfgKeys), v, uint32(math.MaxUint32))
			}
			kvs = append(kvs, gguf.KV{Key: arch + "." + r.key, Value: gguf.Uint32(uint32(v))})
		case gguf.ValueFloat32:
			v, ok, err := cfg.Float(r.cfgKeys...)
			if err != nil {
				return nil, err // names config.json and the key
			}
			if !ok {
				if r.required {
					return nil, fmt.Errorf("%s: missing %q (needed for %s.%s)", cfg.Path, r.cfgKeys[0], arch, r.key)
				}
				continue
			}
			if math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 || v > math.MaxFloat32 {
				return nil, fmt.Errorf("%s: %q = %v, want a positive finite number", cfg.Path, presentKey(cfg, r.cfgKeys), v)
			}
			kvs = append(kvs, gguf.KV{Key: arch + "." + r.key, Value: gguf.Float32(float32(v))})
		}
	}
	return kvs, nil
}

// presentKey returns the first of keys present in cfg (the one a value was
// read from), for error messages.
func presentKey(cfg *hf.Config, keys []string) string {
	for _, k := range keys {
		if cfg.Has(k) {
			return k
		}
	}
	return keys[0]
}

// geometry is hf.Config.Geometry, the one geometry rule (head_dim
// precedence, KV heads, FFN width) shared with codegen and dummy.
func geometry(cfg *hf.Config) (Geometry, error) { return cfg.Geometry() }

// headDimKVs writes rope.dimension_count = head_dim, and key_length /
// value_length when head_dim differs from hidden/heads (or always, when
// always is set: the embedding converter writes all three).
func headDimKVs(arch string, g Geometry, always bool) []gguf.KV {
	kvs := []gguf.KV{{Key: arch + ".rope.dimension_count", Value: gguf.Uint32(uint32(g.HeadDim))}}
	if always || g.HeadDim*g.Heads != g.Hidden {
		kvs = append(kvs,
			gguf.KV{Key: arch + ".attention.key_length", Value: gguf.Uint32(uint32(g.HeadDim))},
			gguf.KV{Key: arch + ".attention.value_length", Value: gguf.Uint32(uint32(g.HeadDim))})
	}
	return kvs
}
