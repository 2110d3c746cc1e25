package hfexport

import (
	"fmt"
	"slices"
	"strings"

	"github.com/bitnet-convert/bitnet-convert/archtab"
	"github.com/bitnet-convert/bitnet-convert/format"
	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
	"github.com/bitnet-convert/bitnet-convert/hf"
	"github.com/bitnet-convert/bitnet-convert/runtime"
	"github.com/bitnet-convert/bitnet-convert/tensormap"
	"github.com/bitnet-convert/bitnet-convert/tokenizer"
)

// DefaultMaxShardSize is transformers' save_pretrained default
// max_shard_size, "5GB" (src/transformers/modeling_utils.py; decimal
// gigabytes as its convert_file_size_to_int reads them).
const DefaultMaxShardSize = 5_000_000_000

// Options configures Export.
type Options struct {
	// DType is the dtype of the float tensors (norms, embedding, head) and
	// of the weight scales: "bf16" (default, as 2B-4T publishes them) or
	// "f32" (every value exact).
	DType string
	// MaxShardSize is the largest shard in bytes (0: DefaultMaxShardSize).
	MaxShardSize uint64
	// FromLayout is the I2_S layout of the input ("" = the file's
	// format.LayoutKey, else x86).
	FromLayout format.Layout
	// KernelConfig is the kernel_config.ini of TL1/TL2 input (nil: the one
	// the file stores under format.KernelConfigKey).
	KernelConfig []byte
	// Force replaces an existing output directory.
	Force bool
	// Threads decodes projections on this many goroutines (0: 1).
	Threads int
	// Progress, when set, is called after each tensor is written.
	Progress func(done, total int, name string)
}

// kind is what an exported tensor is made from.
type kind int

const (
	kindFloat  kind = iota + 1 // float tensor re-typed to the export dtype
	kindPacked                 // ternary projection → packed U8
	kindScale                  // the 0-d weight_scale of the projection before it
)

// Tensor is one tensor of the exported checkpoint.
type Tensor struct {
	// Name is the HF name ("model.layers.0.self_attn.q_proj.weight").
	Name string
	// DType and Shape are as written: U8 [out/4, in] for a packed
	// projection, [] for a weight_scale, [out, in] / [n] for float tensors.
	DType hf.DType
	Shape []uint64
	// Source is the GGUF tensor it comes from (for a weight_scale: its
	// projection).
	Source gguf.TensorInfo
	// RopeHeads is the head count whose rope permutation is undone (llama
	// attn_q / attn_k), 0 when rows are copied in order.
	RopeHeads int
	kind      kind
	from      format.Format
}

// Bytes is the tensor's data size in the checkpoint.
func (t Tensor) Bytes() uint64 {
	n := t.DType.Size()
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// Plan is everything decided before tensor data is read.
type Plan struct {
	Input string
	// Arch is the GGUF general.architecture; Class and ModelType the HF
	// architectures[0] and model_type written for it.
	Arch, Class, ModelType string
	Tensors                []Tensor
	// Shards lists the tensor indices of each shard, in order.
	Shards [][]int
	// Files maps each file name to write to its content (config.json,
	// generation_config.json, tokenizer files); the safetensors are not in it.
	Files    map[string][]byte
	Warnings []string
	dtype    hf.DType
}

// ShardName is the file name of shard i of n (transformers' naming:
// model.safetensors for one shard, else model-00001-of-00002.safetensors).
func ShardName(i, n int) string {
	if n == 1 {
		return "model.safetensors"
	}
	return fmt.Sprintf("model-%05d-of-%05d.safetensors", i+1, n)
}

// TotalBytes is the size of all tensor data.
func (p *Plan) TotalBytes() uint64 {
	var n uint64
	for _, t := range p.Tensors {
		n += t.Bytes()
	}
	return n
}

// archSpec is the HF side of a GGUF arch.
type archSpec struct {
	class, modelType string
	table            *tensormap.Table
	// ropePermuted: attn_q/attn_k rows are stored rope-permuted.
	ropePermuted bool
}

// archSpecs maps the GGUF archs gguf2hf reads to the HF class written for
// them, from archtab: every BitNet arch (bitnet.cpp's bitnet /
// bitnet-b1.58, ik_llama.cpp's bitnet-25, mainline's bitnet) to
// transformers' BitNetForCausalLM (model_type bitnet, attn_sub_norm /
// ffn_sub_norm, hidden_act from the file), and llama (Llama3-8B-1.58,
// Falcon3) to LlamaForCausalLM with the same quantization_config. Rows with
// graph features this export does not write (biases, q/k norms,
// per-projection norms, embedding models) are left out.
var archSpecs = func() map[string]archSpec {
	m := map[string]archSpec{}
	for _, a := range archtab.All() {
		if !a.Plain() {
			continue
		}
		class := ""
		if len(a.HF) > 0 {
			class = a.HF[0]
		} else if c := archtab.Causal(a.AliasOf); c != nil && len(c.HF) > 0 {
			class = c.HF[0]
		}
		if class == "" {
			continue
		}
		m[a.GGUF] = archSpec{class, a.ModelType, a.Table, a.Rope == archtab.RopeNorm}
	}
	return m
}()

// subNormNames renames tensormap.BitNet's first (1bitLLM) spellings of the
// sub-norms to the 2B-4T names transformers' BitNet model has.
var subNormNames = map[string]string{
	".self_attn.inner_attn_ln.": ".self_attn.attn_sub_norm.",
	".mlp.ffn_layernorm.":       ".mlp.ffn_sub_norm.",
}

// projectionStems are the GGUF names (after blk.N.) of the ternary
// projections.
var projectionStems = []string{"attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down"}

// floatTypes are the non-ternary GGUF types read (decodeFloats).
var floatTypes = []gguf.Type{gguf.TypeF32, gguf.TypeF16, gguf.TypeBF16, gguf.TypeQ8_0, gguf.TypeQ6_K, gguf.TypeQ4_K}

// projectionStem returns "attn_q" for "blk.3.attn_q.weight", or "".
func projectionStem(name string) string {
	rest, ok := strings.CutPrefix(name, "blk.")
	if !ok {
		return ""
	}
	_, rest, ok = strings.Cut(rest, ".")
	stem, ok2 := strings.CutSuffix(rest, ".weight")
	if !ok || !ok2 || !slices.Contains(projectionStems, stem) {
		return ""
	}
	return stem
}

// NewPlan decides the export of f (read from path): names, dtypes, shapes,
// shards and the side files. Errors name the file and the key or tensor.
func NewPlan(f *reader.File, path string, opts Options) (*Plan, error) {
	dtype := hf.BF16
	switch strings.ToLower(opts.DType) {
	case "", "bf16":
	case "f32":
		dtype = hf.F32
	default:
		return nil, fmt.Errorf("--dtype %q: want bf16 or f32", opts.DType)
	}
	arch, ok := f.String("general.architecture")
	if !ok {
		return nil, fmt.Errorf("%s: key general.architecture: missing; gguf2hf reads %s", path, strings.Join(Archs(), ", "))
	}
	spec, ok := archSpecs[arch]
	if !ok {
		return nil, fmt.Errorf("%s: general.architecture %s: gguf2hf exports %s (transformers' BitNet integration loads only causal LMs of these)", path, reader.Quote(arch), strings.Join(Archs(), ", "))
	}
	p := &Plan{Input: path, Arch: arch, Class: spec.class, ModelType: spec.modelType, dtype: dtype, Files: map[string][]byte{}}
	g, err := readGeometry(f, path, arch)
	if err != nil {
		return nil, err
	}
	layout := opts.FromLayout
	if layout == "" {
		layout = format.LayoutX86
		if s, ok := f.String(format.LayoutKey); ok {
			if layout, err = format.ParseLayout(s); err != nil {
				return nil, fmt.Errorf("%s: key %s: %w (pass --from-layout)", path, format.LayoutKey, err)
			}
		}
	}
	var kernels []format.Kernel
	for _, ti := range f.Tensors {
		if (ti.Type == gguf.TypeTL1 || ti.Type == gguf.TypeTL2) && kernels == nil {
			if kernels, err = tlKernels(f, opts.KernelConfig); err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
		}
	}
	// The file must be one the runtime loads (its keys agree with its
	// tensors): config.json is rebuilt from those keys, and a file whose
	// head_count_kv, head size, rope factor or eps contradicts its tensors
	// would give a checkpoint that no loader reads as the GGUF's model.
	if err := runtime.CheckFile(runtime.File{KVs: f.KVs, Tensors: f.Tensors}, runtime.Options{TLKernels: kernels}); err != nil {
		return nil, fmt.Errorf("%s: %w; gguf2hf exports only a file the runtime loads", path, err)
	}
	tied := true
	for _, ti := range f.Tensors {
		hfName, ok := spec.table.HFName(ti.Name)
		if !ok {
			return nil, fmt.Errorf("%s: tensor %s has no Hugging Face name for arch %s (gguf2hf writes %s)", path, ti.Name, arch, spec.class)
		}
		for from, to := range subNormNames {
			hfName = strings.Replace(hfName, from, to, 1)
		}
		if ti.Name == "output.weight" {
			tied = false
		}
		shape := make([]uint64, len(ti.Ne))
		for i, d := range ti.Ne {
			shape[len(ti.Ne)-1-i] = d
		}
		if stem := projectionStem(ti.Name); stem != "" {
			t, err := projectionTensor(ti, hfName, layout, kernels, spec, g, stem)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			p.Tensors = append(p.Tensors, t, Tensor{Name: strings.TrimSuffix(hfName, ".weight") + ".weight_scale", DType: dtype, Shape: []uint64{}, Source: ti, kind: kindScale})
			continue
		}
		if format.IsTernary(ti.Type) {
			return nil, fmt.Errorf("%s: tensor %s has ternary type %s but is not a BitNet projection", path, ti.Name, ti.Type)
		}
		if !slices.Contains(floatTypes, ti.Type) {
			return nil, fmt.Errorf("%s: tensor %s has type %s, which gguf2hf does not read (float tensors: F32, F16, BF16, Q8_0, Q6_K, Q4_K)", path, ti.Name, ti.Type)
		}
		if len(ti.Ne) == 0 {
			return nil, fmt.Errorf("%s: tensor %s has no dimensions", path, ti.Name)
		}
		p.Tensors = append(p.Tensors, Tensor{Name: hfName, DType: dtype, Shape: shape, Source: ti, kind: kindFloat})
	}
	if err := checkComplete(p, spec, g, path); err != nil {
		return nil, err
	}
	p.Shards = splitShards(p.Tensors, opts.MaxShardSize)
	vocab, warns, err := readVocab(f, path)
	if err != nil {
		return nil, err
	}
	p.Warnings = append(p.Warnings, warns...)
	if err := p.sideFiles(g, vocab, tied); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

// Archs lists the GGUF archs gguf2hf exports, sorted.
func Archs() []string {
	var out []string
	for a := range archSpecs {
		out = append(out, a)
	}
	slices.Sort(out)
	return out
}

// projectionTensor plans the packed U8 tensor of projection ti.
func projectionTensor(ti gguf.TensorInfo, hfName string, layout format.Layout, kernels []format.Kernel, spec archSpec, g geometry, stem string) (Tensor, error) {
	if len(ti.Ne) != 2 {
		return Tensor{}, fmt.Errorf("tensor %s: projection with ne %v, want 2 dimensions", ti.Name, ti.Ne)
	}
	k, m := ti.Ne[0], ti.Ne[1]
	t := Tensor{Name: hfName, DType: hf.U8, Shape: []uint64{m / 4, k}, Source: ti, kind: kindPacked}
	if m%4 != 0 {
		return t, fmt.Errorf("tensor %s: %d output rows are not a multiple of 4, which transformers' packed U8 layout needs (BitLinear's buffer is [out/4, in])", ti.Name, m)
	}
	if fm, ok := format.ForType(ti.Type, layout, kernels); ok {
		if err := fm.Check(int(k), int(m)); err != nil {
			return t, fmt.Errorf("tensor %s: cannot read as %s: %w", ti.Name, fm.Name(), err)
		}
		t.from = fm
	} else if !slices.Contains(floatTypes[:3], ti.Type) {
		return t, fmt.Errorf("tensor %s has type %s, which gguf2hf does not read for a projection (ternary types of the format table, F32, F16, BF16)", ti.Name, ti.Type)
	}
	if spec.ropePermuted {
		switch stem {
		case "attn_q":
			t.RopeHeads = g.heads
		case "attn_k":
			t.RopeHeads = g.headsKV
		}
		if t.RopeHeads > 0 && (m%uint64(t.RopeHeads) != 0 || (m/uint64(t.RopeHeads))%2 != 0) {
			return t, fmt.Errorf("tensor %s: %d rows do not split into %d heads of an even size; the rope permutation cannot be undone", ti.Name, m, t.RopeHeads)
		}
	}
	return t, nil
}

// tlKernels is the tiling of TL input tensors: ini, else the one the file
// stores.
func tlKernels(f *reader.File, ini []byte) ([]format.Kernel, error) {
	if ini != nil {
		ks, err := format.ParseKernelConfig(ini)
		if err != nil {
			return nil, fmt.Errorf("--kernel-config: %w", err)
		}
		return ks, nil
	}
	v, ok := f.String(format.KernelConfigKey)
	if !ok {
		return nil, fmt.Errorf("TL tensors but no stored kernel configuration: pass the kernel_config.ini it was made with (--kernel-config)")
	}
	ks, err := format.ParseKernelConfig([]byte(v))
	if err != nil {
		return nil, fmt.Errorf("key %s: %w", format.KernelConfigKey, err)
	}
	return ks, nil
}

// checkComplete refuses a file without the tensors every layer needs.
func checkComplete(p *Plan, spec archSpec, g geometry, path string) error {
	have := map[string]bool{}
	for _, t := range p.Tensors {
		have[t.Source.Name] = true
	}
	for _, name := range spec.table.Expected(g.layers) {
		if !have[name] {
			return fmt.Errorf("%s: tensor %s is missing (arch %s, %d layers)", path, name, p.Arch, g.layers)
		}
	}
	return nil
}

// splitShards groups tensors into shards of at most max bytes
// (huggingface_hub split_state_dict_into_shards_factory: a tensor larger
// than max gets a shard of its own; one that would overflow the current
// shard starts the next). Unlike huggingface_hub, which lists an oversized
// tensor's shard before the shard being filled, the shard being filled is
// closed first, so that the files follow the tensor order (a weight_scale
// is written after its projection, whose decoding gives it).
func splitShards(ts []Tensor, max uint64) [][]int {
	if max == 0 {
		max = DefaultMaxShardSize
	}
	var shards [][]int
	var cur []int
	var size uint64
	for i, t := range ts {
		b := t.Bytes()
		if b > max {
			if len(cur) > 0 {
				shards = append(shards, cur)
				cur, size = nil, 0
			}
			shards = append(shards, []int{i})
			continue
		}
		if len(cur) > 0 && size+b > max {
			shards = append(shards, cur)
			cur, size = nil, 0
		}
		cur = append(cur, i)
		size += b
	}
	if len(cur) > 0 || len(shards) == 0 {
		shards = append(shards, cur)
	}
	return shards
}

// readVocab returns the GGUF vocabulary, or nil with a warning when the
// file has none.
func readVocab(f *reader.File, path string) (*tokenizer.Vocab, []string, error) {
	if _, ok := f.String("tokenizer.ggml.model"); !ok {
		return nil, []string{"the GGUF has no vocabulary (tokenizer.ggml.*): no tokenizer files written"}, nil
	}
	v, err := tokenizer.FromGGUF(f.KVs)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return v, nil, nil
}
