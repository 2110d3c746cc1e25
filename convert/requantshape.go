package convert

import (
	"fmt"
	"regexp"
	"slices"

	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
)

// blockTensor splits blk.N.NAME.weight into N and NAME.
var blockTensor = regexp.MustCompile(`^blk\.(\d+)\.([a-z_]+)\.weight$`)

// shapeRule is one dimension a tensor's ne must have: ne[dim] equals the
// value of key (size when derived from several keys, named in key).
type shapeRule struct {
	dim  int
	key  string
	size uint64
}

// checkRequantShapes refuses a GGUF whose tensors contradict its
// hyper-parameter keys, so requant never copies a file that the runtimes
// then refuse to load. The rules are the shapes llama.cpp's loader demands
// of the bitnet archs (src/llama-model.cpp load_tensors, checked by
// llama_model_loader::check_tensor_dims) and runtime.Load demands, GGUF ne order
// (ne[0] = row length): token_embd and output [n_embd, n_vocab];
// output_norm, attn_norm, ffn_norm [n_embd]; attn_sub_norm [n_head·head_dim];
// ffn_sub_norm [n_ff]; attn_q [n_embd, n_head·head_dim]; attn_k, attn_v
// [n_embd, n_head_kv·head_dim]; attn_output [n_head·head_dim, n_embd];
// ffn_gate, ffn_up [n_embd, n_ff]; ffn_down [n_ff, n_embd]; blk.N with
// N < block_count; token_embd and output have {arch}.vocab_size rows when
// that key is there (runtime.Load's check). head_dim is
// {arch}.attention.key_length, else n_embd / n_head. {arch}.block_count and
// {arch}.embedding_length, which every runtime reads, must be present and
// non-zero (an arch label that contradicts the keys, such as a bitnet-b1.58
// file relabelled llama, fails here); another absent key leaves its
// dimensions unchecked (the runtime names it when it needs it). The error
// names the file, the tensor and the key: `F: tensor token_embd.weight: ne
// [255 512] contradicts key bitnet.embedding_length = 256 (ne[0] must be
// 256)`, `F: key llama.block_count: missing (…)`.
func checkRequantShapes(f *reader.File, path string) error {
	arch := f.Arch()
	get := func(name string) (uint64, string, bool) {
		key := arch + "." + name
		v, ok := f.Uint(key)
		return v, key, ok && v > 0
	}
	embd, embdKey, haveEmbd := get("embedding_length")
	ff, ffKey, haveFF := get("feed_forward_length")
	layers, layersKey, haveLayers := get("block_count")
	heads, headsKey, haveHeads := get("attention.head_count")
	kvHeads, kvHeadsKey, haveKV := get("attention.head_count_kv")
	if !haveKV {
		kvHeads, kvHeadsKey, haveKV = heads, headsKey, haveHeads
	}
	for _, k := range []struct {
		key string
		ok  bool
	}{{layersKey, haveLayers}, {embdKey, haveEmbd}} {
		if !k.ok {
			return fmt.Errorf("%s: key %s: missing or 0; every runtime reads it (when the file holds another arch's keys, general.architecture %s is wrong): fix the GGUF metadata", path, k.key, arch)
		}
	}
	vocab, vocabKey, haveVocab := get("vocab_size")
	headDim, headDimKey, haveHeadDim := get("attention.key_length")
	if !haveHeadDim && haveEmbd && haveHeads && embd%heads == 0 {
		headDim, headDimKey, haveHeadDim = embd/heads, embdKey+" / "+headsKey, true
	}
	var rules []shapeRule
	add := func(dim int, ok bool, key string, size uint64) {
		if ok {
			rules = append(rules, shapeRule{dim, key, size})
		}
	}
	qKey, kvKey := headsKey+" × head_dim ("+headDimKey+")", kvHeadsKey+" × head_dim ("+headDimKey+")"
	haveQ, haveKVDim := haveHeads && haveHeadDim, haveKV && haveHeadDim
	for _, ti := range f.Tensors {
		rules = rules[:0]
		want := 0 // number of dimensions, 0: not checked
		switch ti.Name {
		case "token_embd.weight", "output.weight":
			want = 2
			add(0, haveEmbd, embdKey, embd)
			add(1, haveVocab, vocabKey, vocab)
		case "output_norm.weight":
			want = 1
			add(0, haveEmbd, embdKey, embd)
		default:
			m := blockTensor.FindStringSubmatch(ti.Name)
			if m == nil {
				continue
			}
			var n uint64
			if _, err := fmt.Sscan(m[1], &n); err == nil && haveLayers && n >= layers {
				return fmt.Errorf("%s: tensor %s: block %d is beyond key %s = %d", path, ti.Name, n, layersKey, layers)
			}
			switch m[2] {
			case "attn_norm", "ffn_norm":
				want = 1
				add(0, haveEmbd, embdKey, embd)
			case "attn_sub_norm":
				want = 1
				add(0, haveQ, qKey, heads*headDim)
			case "ffn_sub_norm":
				want = 1
				add(0, haveFF, ffKey, ff)
			case "attn_q":
				want = 2
				add(0, haveEmbd, embdKey, embd)
				add(1, haveQ, qKey, heads*headDim)
			case "attn_k", "attn_v":
				want = 2
				add(0, haveEmbd, embdKey, embd)
				add(1, haveKVDim, kvKey, kvHeads*headDim)
			case "attn_output":
				want = 2
				add(0, haveQ, qKey, heads*headDim)
				add(1, haveEmbd, embdKey, embd)
			case "ffn_gate", "ffn_up":
				want = 2
				add(0, haveEmbd, embdKey, embd)
				add(1, haveFF, ffKey, ff)
			case "ffn_down":
				want = 2
				add(0, haveFF, ffKey, ff)
				add(1, haveEmbd, embdKey, embd)
			}
		}
		if want == 0 {
			continue
		}
		if err := checkNe(ti, want, rules); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	return nil
}

// checkNe reports the first rule ti.Ne breaks, or a dimension count other
// than want, naming the tensor and the key.
func checkNe(ti gguf.TensorInfo, want int, rules []shapeRule) error {
	if want == 1 && len(ti.Ne) == 2 && ti.Ne[1] == 1 {
		ti.Ne = ti.Ne[:1] // [n 1]: a vector with a trailing 1, as the runtime reads it (H20)
	}
	if len(ti.Ne) != want {
		return fmt.Errorf("tensor %s: ne %v has %d dimensions, want %d", ti.Name, ti.Ne, len(ti.Ne), want)
	}
	for _, r := range rules {
		if ti.Ne[r.dim] != r.size {
			return fmt.Errorf("tensor %s: ne %v contradicts key %s = %d (ne[%d] must be %d); the file is damaged", ti.Name, ti.Ne, r.key, r.size, r.dim, r.size)
		}
	}
	if want == 2 && ti.Ne[1] == 0 {
		return fmt.Errorf("tensor %s: ne %v has no rows; the file is damaged", ti.Name, ti.Ne)
	}
	return nil
}

// withoutTrailingOnes returns f, or a shallow copy of it whose tensor infos
// drop the trailing 1-dims past the second ([256 512 1 1] is [256 512]), as
// the runtime loader and llama.cpp's check_tensor_dims read them (defect
// H20); the data and its size are the same.
func withoutTrailingOnes(f *reader.File) *reader.File {
	var ts []gguf.TensorInfo
	for i, ti := range f.Tensors {
		n := len(ti.Ne)
		for n > 2 && ti.Ne[n-1] == 1 {
			n--
		}
		if n == len(ti.Ne) {
			continue
		}
		if ts == nil {
			ts = slices.Clone(f.Tensors)
		}
		ts[i].Ne = ti.Ne[:n:n]
	}
	if ts == nil {
		return f
	}
	g := *f
	g.Tensors = ts
	return &g
}
