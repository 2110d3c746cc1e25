package dummy

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/bitnet-convert/bitnet-convert/archtab"
	"github.com/bitnet-convert/bitnet-convert/hf"
	"github.com/bitnet-convert/bitnet-convert/tensormap"
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
	// Bias is a projection's float bias [out] (Qwen2's q/k/v), N(0, 0.02²);
	// never packed.
	Bias
)

var roleNames = map[Role]string{Projection: "projection", WeightScale: "weight_scale", Norm: "norm", OffsetNorm: "offset-norm", Embedding: "embedding", Head: "head", Bias: "bias"}

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

// rule is one tensor of a layer (or of the model): its name relative to the
// family prefix ("{i}" is the layer index), role, and HF shape, which comes
// from the family's tensormap table (the shapes the converter checks).
type rule struct {
	name  string
	role  Role
	shape tensormap.Shape
}

// family is the tensor layout of one HF architecture, in HF module order
// (the order save_pretrained fills shards in).
type family struct {
	// prefix is prepended to every rule name except lm_head ("model." for
	// causal LMs, "" for the embedding models).
	prefix string
	// layer lists the tensors of block {i}; global the embedding, the final
	// norm and lm_head, in that order.
	layer, global []rule
	// embedding models never have an LM head; causal LMs have lm_head.weight
	// when tie_word_embeddings is false.
	embeddingModel bool
	// tiedDefault is tie_word_embeddings when config.json lacks the key
	// (archtab.Arch.TiedDefault).
	tiedDefault bool
}

// newFamily returns the family of archtab row arch whose tensors are layer
// (names after prefix) plus embed_tokens, norm and lm_head, each shaped by
// the rule of the row's tensormap table that maps it; embedding models
// (arch.Embedding) never get lm_head. A name the table does not map is a
// programmer error (a panic at start-up, caught by every test).
func newFamily(prefix string, arch *archtab.Arch, layer []rule) family {
	table := arch.Table
	f := family{prefix: prefix, embeddingModel: arch.Embedding, tiedDefault: arch.TiedDefault, layer: slices.Clone(layer)}
	f.global = []rule{{name: "embed_tokens.weight", role: Embedding}, {name: "norm.weight", role: f.finalNormRole()}, {name: "lm_head.weight", role: Head}}
	shape := func(rs []rule, global bool) {
		for i := range rs {
			name := prefix + strings.ReplaceAll(rs[i].name, "{i}", "0")
			if global && rs[i].role == Head {
				name = rs[i].name
			}
			m, ok := table.Lookup(name)
			if !ok || len(m.Rule.Shape) == 0 {
				panic("dummy: " + name + " has no shaped tensormap rule")
			}
			rs[i].shape = m.Rule.Shape
		}
	}
	shape(f.layer, false)
	shape(f.global, true)
	return f
}

// attn and mlp are the projections every family shares.
var (
	attnProj = []rule{
		{name: "layers.{i}.self_attn.q_proj.weight", role: Projection},
		{name: "layers.{i}.self_attn.k_proj.weight", role: Projection},
		{name: "layers.{i}.self_attn.v_proj.weight", role: Projection},
		{name: "layers.{i}.self_attn.o_proj.weight", role: Projection},
	}
	mlpProj = []rule{
		{name: "layers.{i}.mlp.gate_proj.weight", role: Projection},
		{name: "layers.{i}.mlp.up_proj.weight", role: Projection},
		{name: "layers.{i}.mlp.down_proj.weight", role: Projection},
	}
	blockNorms = []rule{
		{name: "layers.{i}.input_layernorm.weight", role: Norm},
		{name: "layers.{i}.post_attention_layernorm.weight", role: Norm},
	}
)

// qkvBiasProj is attnProj with the q/k/v biases after their weights, in
// the order a Linear's state_dict lists them (Qwen2).
var qkvBiasProj = []rule{
	{name: "layers.{i}.self_attn.q_proj.weight", role: Projection},
	{name: "layers.{i}.self_attn.q_proj.bias", role: Bias},
	{name: "layers.{i}.self_attn.k_proj.weight", role: Projection},
	{name: "layers.{i}.self_attn.k_proj.bias", role: Bias},
	{name: "layers.{i}.self_attn.v_proj.weight", role: Projection},
	{name: "layers.{i}.self_attn.v_proj.bias", role: Bias},
	{name: "layers.{i}.self_attn.o_proj.weight", role: Projection},
}

// qkNorms are Qwen3's per-head q/k RMS norms [head_dim], after o_proj in
// module order.
var qkNorms = []rule{
	{name: "layers.{i}.self_attn.q_norm.weight", role: Norm},
	{name: "layers.{i}.self_attn.k_norm.weight", role: Norm},
}

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
		[]rule{{name: "layers.{i}.self_attn." + attnSub + ".weight", role: Norm}},
		mlpProj,
		[]rule{{name: "layers.{i}.mlp." + ffnSub + ".weight", role: Norm}},
		blockNorms)
}

// embeddingLayer is a BitNet embedding-model block: projections, the seven
// per-projection RMSNorms "<proj>.norm.weight" (input width: hidden, o: q,
// down: ff), q_norm/k_norm [head_dim], and the family's block norms. Norms
// that Gemma stores as an offset from 1 get normRole.
func embeddingLayer(normRole Role, norms []rule) []rule {
	inNorms := []rule{
		{name: "layers.{i}.self_attn.q_proj.norm.weight", role: Norm},
		{name: "layers.{i}.self_attn.k_proj.norm.weight", role: Norm},
		{name: "layers.{i}.self_attn.v_proj.norm.weight", role: Norm},
		{name: "layers.{i}.self_attn.o_proj.norm.weight", role: Norm},
		{name: "layers.{i}.mlp.gate_proj.norm.weight", role: Norm},
		{name: "layers.{i}.mlp.up_proj.norm.weight", role: Norm},
		{name: "layers.{i}.mlp.down_proj.norm.weight", role: Norm},
	}
	qk := []rule{
		{name: "layers.{i}.self_attn.q_norm.weight", role: normRole},
		{name: "layers.{i}.self_attn.k_norm.weight", role: normRole},
	}
	return cat(attnProj, qk, mlpProj, inNorms, norms)
}

// families maps config.json architectures[0] to its layout, as the real
// checkpoints name their tensors: 1bitLLM (BitnetForCausalLM) uses
// inner_attn_ln / ffn_layernorm, Microsoft's 2B-4T (BitNetForCausalLM)
// attn_sub_norm / ffn_sub_norm, Falcon3 and Llama3-8B-1.58 plain llama names,
// the embedding models no "model." prefix (spec conversion.md §5.5, §6).
var families = map[string]family{
	"BitnetForCausalLM": newFamily("model.", archtab.Bitnet, bitnetLayer("inner_attn_ln", "ffn_layernorm")),
	"BitNetForCausalLM": newFamily("model.", archtab.Bitnet, bitnetLayer("attn_sub_norm", "ffn_sub_norm")),
	"LlamaForCausalLM":  newFamily("model.", archtab.Llama, cat(attnProj, mlpProj, blockNorms)),
	// HF BitNet checkpoints of other causal graphs (transformers' BitNet
	// integration; formats-2026.md §4): Mistral has llama's names, Qwen2
	// adds the float q/k/v biases.
	"MistralForCausalLM": newFamily("model.", archtab.Llama, cat(attnProj, mlpProj, blockNorms)),
	"Qwen2ForCausalLM":   newFamily("model.", archtab.Qwen2, cat(qkvBiasProj, mlpProj, blockNorms)),
	"Qwen3ForCausalLM":   newFamily("model.", archtab.Qwen3, cat(attnProj, qkNorms, mlpProj, blockNorms)),
	"Qwen3Model": newFamily("", archtab.Qwen3Embedding, embeddingLayer(Norm, []rule{
		{name: "layers.{i}.input_layernorm.weight", role: Norm},
		{name: "layers.{i}.post_attention_layernorm.weight", role: Norm},
	})),
	"Gemma3TextModel": newFamily("", archtab.Gemma3Embedding, embeddingLayer(OffsetNorm, []rule{
		{name: "layers.{i}.input_layernorm.weight", role: OffsetNorm},
		{name: "layers.{i}.post_attention_layernorm.weight", role: OffsetNorm},
		{name: "layers.{i}.pre_feedforward_layernorm.weight", role: OffsetNorm},
		{name: "layers.{i}.post_feedforward_layernorm.weight", role: OffsetNorm},
	})),
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

// Geometry is the model size read from config.json by the converter's
// geometry rule (hf.Config.Dims: the keys, aliases, KV-head default and
// head_dim precedence of hf.Config.Geometry, without its refusals), plus
// whether the LM head is tied.
type Geometry struct {
	hf.Geometry
	// Tied is tie_word_embeddings (absent: true for the embedding models and
	// false otherwise, the transformers defaults of these families).
	Tied bool
}

// maxDim bounds every size ReadGeometry returns, so products of two stay
// far inside uint64 (the tensor limit MaxTensorElements is checked after).
const maxDim = 1 << 31

// ReadGeometry reads the sizes Layout needs from a config.json map with
// hf.Config.Dims, so dummy and the converter agree on every shape, and
// tie_word_embeddings. It still accepts configs the converter refuses (heads
// not a multiple of KV heads, 0 layers): dummy makes such checkpoints to
// test the refusals. A missing, non-integer or non-positive size is an error
// naming config.json and the key, and so is a size over 2^31.
func ReadGeometry(cfg map[string]any) (Geometry, error) {
	var g Geometry
	c := &hf.Config{Raw: cfg, Path: hf.ConfigFile}
	hg, err := c.Dims()
	if err != nil {
		return g, err
	}
	g.Geometry = hg
	for _, f := range []struct {
		key string
		v   int
	}{{"hidden_size", hg.Hidden}, {"intermediate_size", hg.FF}, {"num_attention_heads", hg.Heads}, {"num_key_value_heads", hg.HeadsKV}, {"head_dim", hg.HeadDim}, {"vocab_size", hg.Vocab}, {"num_hidden_layers", hg.Layers}} {
		if int64(f.v) > maxDim {
			return g, fmt.Errorf("%s: %s %d is over the limit of 2^31", hf.ConfigFile, f.key, f.v)
		}
	}
	archs, _ := cfg["architectures"].([]any)
	arch := ""
	if len(archs) > 0 {
		arch, _ = archs[0].(string)
	}
	g.Tied = families[arch].tiedDefault
	if v, present := cfg["tie_word_embeddings"]; present && v != nil {
		b, ok := v.(bool)
		if !ok {
			return g, fmt.Errorf("%s: tie_word_embeddings is %v, not a boolean", hf.ConfigFile, v)
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
	fam := familyOf(arch, cfg)
	g, err := ReadGeometry(cfg)
	if err != nil {
		return nil, err
	}
	var out []Tensor
	add := func(name string, role Role, shape tensormap.Shape, layer int) error {
		t := Tensor{Name: name, DType: hf.BF16, Role: role, Layer: layer, Shape: shape.Sizes(g.Geometry)}
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
	emb, norm, head := fam.global[0], fam.global[1], fam.global[2]
	if err := add(fam.prefix+emb.name, emb.role, emb.shape, -1); err != nil {
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
	if err := add(fam.prefix+norm.name, norm.role, norm.shape, -1); err != nil {
		return nil, err
	}
	if !fam.embeddingModel && !g.Tied {
		if err := add(head.name, head.role, head.shape, -1); err != nil {
			return nil, err
		}
	}
	return out, nil
}
