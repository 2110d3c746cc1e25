package verify

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/bitnet-convert/bitnet-convert/archtab"
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
	// every BitNet model (format.TargetArch); an alias (bitnet-25 for
	// bitnet-b1.58, archtab.Canonical) names the same model.
	if arch != plan.Arch && archtab.Canonical(arch) != plan.Arch && arch != format.TargetArch(plan.Arch, format.RuntimeLlamaCpp) {
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
	checkRopeScaling(rep, f, plan)
	if tv, ok := f.Get("tokenizer.ggml.tokens"); ok {
		if toks, _ := tv.V.([]string); len(toks) != g.Vocab {
			rep.Metadata = append(rep.Metadata, fmt.Sprintf("tokenizer.ggml.tokens has %d entries, vocab_size is %d", len(toks), g.Vocab))
		}
	}
	checkTokenizer(rep, f, src.Plan().Dir)
	for _, m := range rep.Metadata {
		rep.fail("metadata: %s", m)
	}
}

// checkRopeScaling flags rope-scaling keys the file has and the checkpoint
// does not ask for ({arch}.rope.scaling.type / .factor / .rope.scale_linear
// absent from the plan), unless they scale by 1: the runtime applies them
// (runtime kvReader.ropeScaling), so such a file computes another model.
func checkRopeScaling(rep *Report, f *reader.File, plan *convert.Plan) {
	arch := f.Arch()
	planned := map[string]bool{}
	for _, kv := range plan.KVs {
		planned[strings.TrimPrefix(kv.Key, plan.Arch)] = true
	}
	for _, suffix := range []string{".rope.scaling.factor", ".rope.scale_linear"} {
		if planned[suffix] {
			continue
		}
		if v, ok := f.Float(arch + suffix); ok && v != 1 {
			typ, _ := f.String(arch + ".rope.scaling.type")
			if typ == "none" {
				continue
			}
			rep.Metadata = append(rep.Metadata, fmt.Sprintf("%s%s = %v, config.json has no rope_scaling (the runtime scales the rope by 1/%v)", arch, suffix, v, v))
		}
	}
	if !planned[".rope.scaling.type"] {
		if typ, ok := f.String(arch + ".rope.scaling.type"); ok && typ != "none" && typ != "linear" {
			rep.Metadata = append(rep.Metadata, fmt.Sprintf("%s.rope.scaling.type = %q, config.json has no rope_scaling", arch, typ))
		}
	}
}

// checkTokenizer compares the file's tokenizer.* KVs with those hf2gguf
// makes from the checkpoint dir's tokenizer files (convert.NewVocabPlan):
// a wrong token id, token text, score or type makes the runtime read
// another prompt than the one the model was trained on. A file without a
// vocabulary (hf2gguf --no-vocab) and a checkpoint without tokenizer files
// are not compared (the latter with a note).
func checkTokenizer(rep *Report, f *reader.File, dir string) {
	if _, ok := f.Get("tokenizer.ggml.tokens"); !ok {
		return
	}
	vp, err := convert.NewVocabPlan(dir, convert.Options{})
	if err != nil {
		rep.Notes = append(rep.Notes, "tokenizer not compared: "+err.Error())
		return
	}
	for _, kv := range vp.KVs {
		if !strings.HasPrefix(kv.Key, "tokenizer.") {
			continue
		}
		v, ok := f.Get(kv.Key)
		if !ok {
			rep.Metadata = append(rep.Metadata, fmt.Sprintf("%s missing (the checkpoint's tokenizer gives it)", kv.Key))
			continue
		}
		if reflect.DeepEqual(v.V, kv.Value.V) {
			continue
		}
		detail := ""
		if i := firstDiffAny(v.V, kv.Value.V); i >= 0 {
			detail = fmt.Sprintf(" (first difference at index %d)", i)
		}
		if s := fmt.Sprint(v.V); len(s) <= 64 && detail == "" {
			detail = fmt.Sprintf(" (%s, the checkpoint gives %v)", s, kv.Value.V)
		}
		rep.Metadata = append(rep.Metadata, fmt.Sprintf("%s differs from the checkpoint's tokenizer%s", kv.Key, detail))
	}
}

// firstDiffAny is the first index where two slices of one element type
// differ (or the shorter length), -1 when a and b are not slices.
func firstDiffAny(a, b any) int {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	if va.Kind() != reflect.Slice || vb.Kind() != reflect.Slice {
		return -1
	}
	n := min(va.Len(), vb.Len())
	for i := 0; i < n; i++ {
		if !reflect.DeepEqual(va.Index(i).Interface(), vb.Index(i).Interface()) {
			return i
		}
	}
	return n
}

// valueTypeName is a GGUF value's type as gguf-dump names it ("uint32",
// "array[string]").
func valueTypeName(v gguf.Value) string {
	if v.Type == gguf.ValueArray {
		return "array[" + v.Elem.String() + "]"
	}
	return v.Type.String()
}
