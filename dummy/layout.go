package dummy

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/bitnet-convert/bitnet-convert/hf"
)

// Role is what a tensor of a dummy checkpoint is, which decides how its
// values are drawn (see Generate).
type Role int

// Tensor roles.
const (
	// Projection is a linear weight, HF shape [out, in]: bf16 master
	// weights N(0, 0.02²), or packed U8 codes [out/4, in].
	Projection Role = iota + 1
	// WeightScale is the bf16 0-d scale of a packed projection.
	WeightScale
	// Norm is an RMSNorm weight initialised near 1 (1 + N(0, 0.02²)).
	Norm
	// OffsetNorm is a Gemma-style norm stored as an offset from 1, so it is
	// near 0 (N(0, 0.02²)); the model computes (1 + w).
	OffsetNorm
	// Embedding is the token embedding [vocab, hidden], N(0, 0.02²).
	Embedding
	// Head is an untied LM head [vocab, hidden], N(0, 0.02²).
	Head
)

var roleNames = map[Role]string{Projection: "projection", WeightScale: "weight_scale", Norm: "norm", OffsetNorm: "offset-norm", Embedding: "embedding", Head: "head"}

// String names r.
func (r Role) String() string {
	if s, ok := roleNames[r]; ok {
		return s
	}
	return fmt.Sprintf("role(%d)", int(r))
}

// Tensor is one tensor of a dummy checkpoint.
type Tensor struct {
	// Name is the HF tensor name, e.g. "model.layers.0.self_attn.q_proj.weight".
	Name string
	// DType is BF16 or (packed projections) U8.
	DType hf.DType
	// Shape is in HF order ([out, in] for a linear weight; [out/4, in] when
	// packed; [] for a weight_scale).
	Shape []uint64
	// Role decides how the values are drawn.
	Role Role
	// Layer is the block index, -1 for global tensors.
	Layer int
}

// Bytes is the tensor's data length (elements × dtype size).
func (t Tensor) Bytes() uint64 {
	n := t.DType.Size()
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// dim names a size derived from config.json.
type dim int

const (
	dNone    dim = iota
	dHidden      // hidden_size
	dQ           // num_attention_heads × head_dim
	dKV          // num_key_value_heads × head_dim
	dFF          // intermediate_size
	dVocab       // vocab_size
	dHeadDim     // head_dim (or hidden_size / num_attention_heads)
)

// rule is one tensor of a layer (or of the model): its name relative to the
// family prefix ("{i}" is the layer index), role and HF shape.
type rule struct {
	name  string
	role  Role
	shape [2]dim // second dNone for 1-D
}

// family is the tensor layout of one HF architecture, in HF module order
// (the order save_pretrained fills shards in).
type family struct {
	// prefix is prepended to every rule name except lm_head ("model." for
	// causal LMs, "" for the embedding models).
	prefix string
	// layer lists the tensors of block {i}.
	layer []rule
	// embedding models never have an LM head; causal LMs have lm_head.weight
	// when tie_word_embeddings is false.
	embeddingModel bool
}

// attn and mlp are the projections every family shares.
var (
	attnProj = []rule{
		{"layers.{i}.self_attn.q_proj.weight", Projection, [2]dim{dQ, dHidden}},
		{"layers.{i}.self_attn.k_proj.weight", Projection, [2]dim{dKV, dHidden}},
		{"layers.{i}.self_attn.v_proj.weight", Projection, [2]dim{dKV, dHidden}},
		{"layers.{i}.self_attn.o_proj.weight", Projection, [2]dim{dHidden, dQ}},
	}
	mlpProj = []rule{
		{"layers.{i}.mlp.gate_proj.weight", Projection, [2]dim{dFF, dHidden}},
		{"layers.{i}.mlp.up_proj.weight", Projection, [2]dim{dFF, dHidden}},
		{"layers.{i}.mlp.down_proj.weight", Projection, [2]dim{dHidden, dFF}},
	}
	blockNorms = []rule{
		{"layers.{i}.input_layernorm.weight", Norm, [2]dim{dHidden}},
		{"layers.{i}.post_attention_layernorm.weight", Norm, [2]dim{dHidden}},
	}
)

func cat(parts ...[]rule) []rule {
	var out []rule
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// bitnetLayer is a BitNet block with its two sub-norms (attention output
// [q] and FFN [ff]), named attn/ffn by the caller's spelling.
func bitnetLayer(attnSub, ffnSub string) []rule {
	return cat(attnProj,
		[]rule{{"layers.{i}.self_attn." + attnSub + ".weight", Norm, [2]dim{dQ}}},
		mlpProj,
		[]rule{{"layers.{i}.mlp." + ffnSub + ".weight", Norm, [2]dim{dFF}}},
		blockNorms)
}

// embeddingLayer is a BitNet embedding-model block: projections, the seven
// per-projection RMSNorms "<proj>.norm.weight" (input width: hidden, o: q,
// down: ff), q_norm/k_norm [head_dim], and the family's block norms. Norms
// that Gemma stores as an offset from 1 get normRole.
func embeddingLayer(normRole Role, norms []rule) []rule {
	inNorms := []rule{
		{"layers.{i}.self_attn.q_proj.norm.weight", Norm, [2]dim{dHidden}},
		{"layers.{i}.self_attn.k_proj.norm.weight", Norm, [2]dim{dHidden}},
		{"layers.{i}.self_attn.v_proj.norm.weight", Norm, [2]dim{dHidden}},
		{"layers.{i}.self_attn.o_proj.norm.weight", Norm, [2]dim{dQ}},
		{"layers.{i}.mlp.gate_proj.norm.weight", Norm, [2]dim{dHidden}},
		{"layers.{i}.mlp.up_proj.norm.weight", Norm, [2]dim{dHidden}},
		{"layers.{i}.mlp.down_proj.norm.weight", Norm, [2]dim{dFF}},
	}
	qk := []rule{
		{"layers.{i}.self_attn.q_norm.weight", normRole, [2]dim{dHeadDim}},
		{"layers.{i}.self_attn.k_norm.weight", normRole, [2]dim{dHeadDim}},
	}
	return cat(attnProj, qk, mlpProj, inNorms, norms)
}

// families maps config.json architectures[0] to its layout, as the real
// checkpoints name their tensors: 1bitLLM (BitnetForCausalLM) uses
// inner_attn_ln / ffn_layernorm, Microsoft's 2B-4T (BitNetForCausalLM)
// attn_sub_norm / ffn_sub_norm, Falcon3 and Llama3-8B-1.58 plain llama names,
// the embedding models no "model." prefix (spec conversion.md §5.5, §6).
var families = map[string]family{
	"BitnetForCausalLM": {prefix: "model.", layer: bitnetLayer("inner_attn_ln", "ffn_layernorm")},
	"BitNetForCausalLM": {prefix: "model.", layer: bitnetLayer("attn_sub_norm", "ffn_sub_norm")},
	"LlamaForCausalLM":  {prefix: "model.", layer: cat(attnProj, mlpProj, blockNorms)},
	"Qwen3Model": {embeddingModel: true, layer: embeddingLayer(Norm, []rule{
		{"layers.{i}.input_layernorm.weight", Norm, [2]dim{dHidden}},
		{"layers.{i}.post_attention_layernorm.weight", Norm, [2]dim{dHidden}},
	})},
	"Gemma3TextModel": {embeddingModel: true, layer: embeddingLayer(OffsetNorm, []rule{
		{"layers.{i}.input_layernorm.weight", OffsetNorm, [2]dim{dHidden}},
		{"layers.{i}.post_attention_layernorm.weight", OffsetNorm, [2]dim{dHidden}},
		{"layers.{i}.pre_feedforward_layernorm.weight", OffsetNorm, [2]dim{dHidden}},
		{"layers.{i}.post_feedforward_layernorm.weight", OffsetNorm, [2]dim{dHidden}},
	})},
}

// finalNormRole is the role of the model's last norm per family.
func (f family) finalNormRole() Role {
	for _, r := range f.layer {
		if strings.HasSuffix(r.name, "input_layernorm.weight") {
			return r.role
		}
	}
	return Norm
}

// Architectures returns the config.json architectures[0] values Layout
// understands, sorted.
func Architectures() []string {
	var out []string
	for k := range families {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Geometry is the model size read from config.json: hidden_size,
// num_attention_heads, num_key_value_heads, head_dim, intermediate_size,
// vocab_size and num_hidden_layers, in that field order.
type Geometry struct {
	Hidden, Heads, HeadsKV, HeadDim, FF, Vocab, Layers int
	// Tied is tie_word_embeddings (absent: true for the embedding models and
	// false otherwise, the transformers defaults of these families).
	Tied bool
}

func (g Geometry) size(d dim) uint64 {
	switch d {
	case dHidden:
		return uint64(g.Hidden)
	case dQ:
		return uint64(g.Heads * g.HeadDim)
	case dKV:
		return uint64(g.HeadsKV * g.HeadDim)
	case dFF:
		return uint64(g.FF)
	case dVocab:
		return uint64(g.Vocab)
	case dHeadDim:
		return uint64(g.HeadDim)
	}
	return 0
}

// intKey reads an integer config value (JSON numbers decode as float64,
// TOML ones as int64). ok is false when the key is absent.
func intKey(cfg map[string]any, key string) (int, bool, error) {
	v, present := cfg[key]
	if !present || v == nil {
		return 0, false, nil
	}
	var f float64
	switch x := v.(type) {
	case int64:
		f = float64(x)
	case int:
		f = float64(x)
	case float64:
		f = x
	case json.Number:
		var err error
		if f, err = x.Float64(); err != nil {
			return 0, false, fmt.Errorf("config.json: %s is %q, not a number", key, x)
		}
	default:
		return 0, false, fmt.Errorf("config.json: %s is %v (%T), not a number", key, v, v)
	}
	if f != math.Trunc(f) || f < 0 || f > 1<<31 {
		return 0, false, fmt.Errorf("config.json: %s is %v, not a non-negative integer", key, v)
	}
	return int(f), true, nil
}

// ReadGeometry reads the sizes Layout needs from a config.json map: hidden_size,
// num_attention_heads, num_key_value_heads (default: heads), head_dim
// (default: hidden/heads), intermediate_size, vocab_size, num_hidden_layers,
// tie_word_embeddings. A missing or non-integer size is an error naming the key.
func ReadGeometry(cfg map[string]any) (Geometry, error) {
	var g Geometry
	req := []struct {
		key string
		dst *int
	}{{"hidden_size", &g.Hidden}, {"num_attention_heads", &g.Heads}, {"intermediate_size", &g.FF}, {"vocab_size", &g.Vocab}, {"num_hidden_layers", &g.Layers}}
	for _, r := range req {
		v, ok, err := intKey(cfg, r.key)
		if err != nil {
			return g, err
		}
		if !ok || (v == 0 && r.key != "num_hidden_layers") {
			return g, fmt.Errorf("config.json: %s is missing or 0", r.key)
		}
		*r.dst = v
	}
	kv, ok, err := intKey(cfg, "num_key_value_heads")
	if err != nil {
		return g, err
	}
	g.HeadsKV = g.Heads
	if ok && kv > 0 {
		g.HeadsKV = kv
	}
	hd, ok, err := intKey(cfg, "head_dim")
	if err != nil {
		return g, err
	}
	if ok && hd > 0 {
		g.HeadDim = hd
	} else {
		if g.Hidden%g.Heads != 0 {
			return g, fmt.Errorf("config.json: hidden_size %d is not a multiple of num_attention_heads %d and head_dim is not given", g.Hidden, g.Heads)
		}
		g.HeadDim = g.Hidden / g.Heads
	}
	archs, _ := cfg["architectures"].([]any)
	arch := ""
	if len(archs) > 0 {
		arch, _ = archs[0].(string)
	}
	g.Tied = families[arch].embeddingModel
	if v, present := cfg["tie_word_embeddings"]; present && v != nil {
		b, ok := v.(bool)
		if !ok {
			return g, fmt.Errorf("config.json: tie_word_embeddings is %v, not a boolean", v)
		}
		g.Tied = b
	}
	return g, nil
}

// Architecture returns config.json's architectures[0], or an error naming
// the supported ones when it is missing or not one Layout knows.
func Architecture(cfg map[string]any) (string, error) {
	archs, _ := cfg["architectures"].([]any)
	arch := ""
	if len(archs) > 0 {
		arch, _ = archs[0].(string)
	}
	if _, ok := families[arch]; !ok {
		if arch == "" {
			return "", fmt.Errorf("config.json has no architectures entry (supported: %s)", strings.Join(Architectures(), ", "))
		}
		return "", fmt.Errorf("config.json: architecture %q has no dummy layout (supported: %s)", arch, strings.Join(Architectures(), ", "))
	}
	return arch, nil
}

// Layout lists the tensors of the checkpoint a config.json describes, in HF
// module order (embedding, blocks 0..L-1, final norm, lm_head when untied).
// With packed, every projection [out, in] becomes U8 [out/4, in] followed by
// its bf16 0-d "<base>.weight_scale" (the 2B-4T / Falcon3 / Llama3-8B-1.58
// layout, spec conversion.md §2.4); out must then be a multiple of 4. Errors
// name the config key or the tensor; a tensor over MaxTensorElements or more
// than MaxLayers layers is refused before the list is built.
func Layout(cfg map[string]any, packed bool) ([]Tensor, error) {
	if _, err := planBytes(cfg, packed); err != nil {
		return nil, err
	}
	arch, err := Architecture(cfg)
	if err != nil {
		return nil, err
	}
	fam := families[arch]
	g, err := ReadGeometry(cfg)
	if err != nil {
		return nil, err
	}
	var out []Tensor
	add := func(name string, role Role, shape [2]dim, layer int) error {
		t := Tensor{Name: name, DType: hf.BF16, Role: role, Layer: layer, Shape: []uint64{g.size(shape[0])}}
		if shape[1] != dNone {
			t.Shape = append(t.Shape, g.size(shape[1]))
		}
		if role == Projection && packed {
			if t.Shape[0]%4 != 0 {
				return fmt.Errorf("tensor %s: %d output rows are not a multiple of 4, so it cannot be packed as U8 (generate it without --packed)", name, t.Shape[0])
			}
			t.DType = hf.U8
			t.Shape[0] /= 4
			out = append(out, t, Tensor{Name: strings.TrimSuffix(name, ".weight") + ".weight_scale", DType: hf.BF16, Shape: []uint64{}, Role: WeightScale, Layer: layer})
			return nil
		}
		out = append(out, t)
		return nil
	}
	if err := add(fam.prefix+"embed_tokens.weight", Embedding, [2]dim{dVocab, dHidden}, -1); err != nil {
		return nil, err
	}
	for i := 0; i < g.Layers; i++ {
		for _, r := range fam.layer {
			name := fam.prefix + strings.ReplaceAll(r.name, "{i}", fmt.Sprint(i))
			if err := add(name, r.role, r.shape, i); err != nil {
				return nil, err
			}
		}
	}
	if err := add(fam.prefix+"norm.weight", fam.finalNormRole(), [2]dim{dHidden}, -1); err != nil {
		return nil, err
	}
	if !fam.embeddingModel && !g.Tied {
		if err := add("lm_head.weight", Head, [2]dim{dVocab, dHidden}, -1); err != nil {
			return nil, err
		}
	}
	return out, nil
}
