package verify

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/bitnet-convert/bitnet-convert/convert"
	"github.com/bitnet-convert/bitnet-convert/format"
	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
)

// checkMetadata compares the GGUF's architecture KVs with those the
// converter derives from config.json. Keys the reference pipeline does not
// write (rope.dimension_count, key/value_length) may be absent when the
// runtime's default (hidden/heads) equals head_dim.
func checkMetadata(rep *Report, f *reader.File, src *convert.Source) {
	plan := src.Plan()
	arch := f.Arch()
	// Files for mainline llama.cpp (TQ1_0/TQ2_0) carry arch "bitnet" for
	// every BitNet model (format.TargetArch).
	if arch != plan.Arch && !(arch == "bitnet-25" && plan.Arch == "bitnet-b1.58") && arch != format.TargetArch(plan.Arch, format.RuntimeLlamaCpp) {
		rep.Metadata = append(rep.Metadata, fmt.Sprintf("general.architecture %q, config.json implies %q", arch, plan.Arch))
	}
	g := plan.Geometry
	for _, kv := range plan.KVs {
		if !strings.HasPrefix(kv.Key, plan.Arch+".") {
			continue
		}
		key := arch + strings.TrimPrefix(kv.Key, plan.Arch)
		v, ok := f.Get(key)
		if !ok {
			switch strings.TrimPrefix(kv.Key, plan.Arch+".") {
			case "rope.dimension_count", "attention.key_length", "attention.value_length", "rope.scaling.type", "rope.scaling.factor", "context_length":
				if g.HeadDim*g.Heads == g.Hidden {
					continue
				}
			case strings.TrimPrefix(format.HiddenActivationSuffix, "."):
				continue // ours; other converters do not write it
			}
			rep.Metadata = append(rep.Metadata, fmt.Sprintf("%s missing (config.json gives %v)", key, kv.Value.V))
			continue
		}
		if v.Type != kv.Value.Type || v.Elem != kv.Value.Elem {
			rep.Metadata = append(rep.Metadata, fmt.Sprintf("%s is stored as %s, hf2gguf writes %s (value %v, config.json gives %v)", key, valueTypeName(v), valueTypeName(kv.Value), v.V, kv.Value.V))
		} else if !reflect.DeepEqual(v.V, kv.Value.V) {
			rep.Metadata = append(rep.Metadata, fmt.Sprintf("%s = %v, config.json gives %v", key, v.V, kv.Value.V))
		}
	}
	if tv, ok := f.Get("tokenizer.ggml.tokens"); ok {
		if toks, _ := tv.V.([]string); len(toks) != g.Vocab {
			rep.Metadata = append(rep.Metadata, fmt.Sprintf("tokenizer.ggml.tokens has %d entries, vocab_size is %d", len(toks), g.Vocab))
		}
	}
	for _, m := range rep.Metadata {
		rep.fail("metadata: %s", m)
	}
}

// valueTypeName is a GGUF value's type as gguf-dump names it ("uint32",
// "array[string]").
func valueTypeName(v gguf.Value) string {
	if v.Type == gguf.ValueArray {
		return "array[" + v.Elem.String() + "]"
	}
	return v.Type.String()
}
