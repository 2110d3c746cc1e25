package convert

import (
	"fmt"
	"math"

	"github.com/bitnet-convert/bitnet-convert/archtab"
	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/hf"
)

// hparam is one row of a hyper-parameter key set (archtab.HParam): the GGUF
// key suffix (after "{arch}."), the config.json keys tried in order (first
// found wins), whether the value is a float32 (else uint32), and whether the
// key is required. Spec conversion.md §1.2.
type hparam = archtab.HParam

// tableKVs evaluates rows against cfg into "{arch}.key" KVs. Errors name the
// config key and the file.
func tableKVs(arch string, cfg *hf.Config, rows []hparam) ([]gguf.KV, error) {
	var kvs []gguf.KV
	for _, r := range rows {
		switch {
		case !r.Float:
			v, ok, err := cfg.Int(r.CfgKeys...)
			if err != nil {
				return nil, err // names config.json and the key
			}
			if !ok {
				if r.Required {
					return nil, fmt.Errorf("%s: missing %q (needed for %s.%s)", cfg.Path, r.CfgKeys[0], arch, r.Key)
				}
				continue
			}
			if v <= 0 || uint64(v) > math.MaxUint32 {
				return nil, fmt.Errorf("%s: %q = %d is out of range (want 1 to %d)", cfg.Path, presentKey(cfg, r.CfgKeys), v, uint32(math.MaxUint32))
			}
			kvs = append(kvs, gguf.KV{Key: arch + "." + r.Key, Value: gguf.Uint32(uint32(v))})
		default:
			v, ok, err := cfg.Float(r.CfgKeys...)
			if err != nil {
				return nil, err // names config.json and the key
			}
			if !ok {
				if r.Required {
					return nil, fmt.Errorf("%s: missing %q (needed for %s.%s)", cfg.Path, r.CfgKeys[0], arch, r.Key)
				}
				continue
			}
			if math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 || v > math.MaxFloat32 {
				return nil, fmt.Errorf("%s: %q = %v, want a positive finite number", cfg.Path, presentKey(cfg, r.CfgKeys), v)
			}
			kvs = append(kvs, gguf.KV{Key: arch + "." + r.Key, Value: gguf.Float32(float32(v))})
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
