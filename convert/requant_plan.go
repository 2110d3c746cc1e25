package convert

import (
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"

	"github.com/bitnet-convert/bitnet-convert/format"
	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
)

// RequantOptions configures Requant (the `requant` command).
type RequantOptions struct {
	OutType OutType
	// FromLayout is the I2_S layout of the input ("" = the file's
	// format.LayoutKey, else x86).
	FromLayout format.Layout
	// I2SLayout is the layout written for --outtype i2_s ("" = x86).
	I2SLayout format.Layout
	// TokenEmbeddingType and OutputTensorType retype token_embd and
	// output (F32, F16, BF16, Q8_0, Q6_K; Q4_K is read, not written); "" keeps the input's type.
	TokenEmbeddingType, OutputTensorType string
	// AllowFallback writes projections whose rows do not fit the target
	// type as F16 instead of failing.
	AllowFallback bool
	// KernelConfig is a kernel_config.ini for TL1/TL2 input or output; nil
	// uses the file's stored one (input) or derives one (output).
	KernelConfig []byte
	Verbose      bool
	Log          io.Writer
	Progress     func(done, total int, name string)
	// ProgressBytes is Options.ProgressBytes for requant: output tensor
	// bytes written so far and in all.
	ProgressBytes func(done, total uint64, name string)
	// Check, when set, is called by RequantFile on the plan before
	// anything is written (also with dryRun); its error refuses the file.
	// The requant command passes the runtime loader's checks
	// (runtime.CheckFile on OutputInfos), so requant writes nothing its run
	// refuses (defect H8); convert cannot import runtime.
	Check func(p *RequantPlan) error
}

// RequantTensor is one output tensor of a RequantPlan.
type RequantTensor struct {
	In    gguf.TensorInfo // as stored in the input
	Type  gguf.Type       // output type
	Ne    []uint64
	Bytes uint64
	// From decodes a ternary input (nil: the input is float); To encodes a
	// ternary output (nil: float output or copy).
	From, To format.Format
	// Fallback says why a projection became F16 (--allow-fallback).
	Fallback string
}

// RequantPlan is everything decided before any tensor data is read.
type RequantPlan struct {
	Input    string
	SrcArch  string
	Arch     string
	Runtime  string
	OutType  OutType
	KVs      []gguf.KV
	Tensors  []RequantTensor
	Kernels  []format.Kernel
	Warnings []string
	align    uint64
	pooled   bool // the input has {arch}.pooling_type (an embedding model)
}

// RuntimeLabel names, for the summary line, the runtime the written file is
// for: Runtime, except as runtimeLabel corrects it (a float file of a causal
// qwen arch is mainline llama.cpp's; a file with *_norm_in tensors runs only
// in this project's runtime). Embedding models (a pooling_type key) keep
// Runtime.
func (p *RequantPlan) RuntimeLabel() string {
	if p.pooled {
		return p.Runtime
	}
	names := make([]string, len(p.Tensors))
	for i, t := range p.Tensors {
		names[i] = t.In.Name
	}
	return runtimeLabel(p.Arch, p.Runtime, names)
}

// OutputInfos are the tensor infos of the output file, in order.
func (p *RequantPlan) OutputInfos() []gguf.TensorInfo {
	infos := make([]gguf.TensorInfo, len(p.Tensors))
	for i, t := range p.Tensors {
		infos[i] = gguf.TensorInfo{Name: t.In.Name, Type: t.Type, Ne: t.Ne}
	}
	return infos
}

// TotalBytes is the size of all output tensor data.
func (p *RequantPlan) TotalBytes() uint64 {
	var n uint64
	for _, t := range p.Tensors {
		n += t.Bytes
	}
	return n
}

// projectionName matches the seven ternary projections of the BitNet archs
// (GGUF names).
var projectionName = regexp.MustCompile(`^blk\.\d+\.(attn_q|attn_k|attn_v|attn_output|ffn_gate|ffn_up|ffn_down)\.weight$`)

// readableFloat are the non-ternary types Requant decodes.
var readableFloat = []gguf.Type{gguf.TypeF32, gguf.TypeF16, gguf.TypeBF16, gguf.TypeQ8_0, gguf.TypeQ6_K, gguf.TypeQ4_K}

// NewRequantPlan decides the output of requantizing f (read from path):
// ternary projections are decoded by the format layer (the I2_S layout from
// opts.FromLayout, the file's format.LayoutKey, or x86) and re-encoded in the
// outtype's format with the scale granularity it needs (format.Regroup), or
// dequantized for a float outtype; float projections of a ternary model (an
// F32/F16 file of bitnet.cpp's pipeline) are read as codes and one scale;
// token_embd and output keep their type unless retyped; everything else is
// copied. The arch and its keys are renamed for the target runtime
// (format.TargetArch), {arch}.hidden_activation is recorded, and
// general.file_type, the layout and kernel keys follow the outtype.
func NewRequantPlan(f *reader.File, path string, opts RequantOptions) (*RequantPlan, error) {
	if _, ok := typePolicy(opts.OutType); !ok {
		_, err := ParseOutType(string(opts.OutType))
		return nil, err
	}
	if _, ok := f.String("general.architecture"); !ok {
		return nil, fmt.Errorf("%s: key general.architecture: missing (requant reads %s); fix the GGUF metadata", path, strings.Join(RequantArchs(), ", "))
	}
	_, pooled := f.Get(f.Arch() + ".pooling_type")
	if err := checkRequantOutType(f.Arch(), pooled, opts.OutType); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := checkNormInRequant(f, path, opts.OutType); err != nil {
		return nil, err
	}
	f = withoutTrailingOnes(f)
	if err := checkRequantShapes(f, path); err != nil {
		return nil, err
	}
	p := &RequantPlan{Input: path, SrcArch: f.Arch(), OutType: opts.OutType, align: f.Alignment, pooled: pooled}
	p.Runtime = format.RuntimeBitnetCpp
	spec, ternaryOut := format.Lookup(string(opts.OutType))
	if ternaryOut {
		p.Runtime = spec.Runtime
	}
	from := opts.FromLayout
	if from == "" {
		from = format.LayoutX86
		if s, ok := f.String(format.LayoutKey); ok {
			l, err := format.ParseLayout(s)
			if err != nil {
				return nil, fmt.Errorf("%s: key %s: %w (pass --from-layout)", path, format.LayoutKey, err)
			}
			from = l
		}
	}
	var inKernels []format.Kernel
	needKernels := false
	for _, ti := range f.Tensors {
		needKernels = needKernels || ti.Type == gguf.TypeTL1 || ti.Type == gguf.TypeTL2
	}
	if needKernels {
		ks, err := requantKernels(f, opts.KernelConfig)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		inKernels = ks
	}
	var to format.Format
	if ternaryOut {
		var ks []format.Kernel
		if opts.OutType == OutTL1 || opts.OutType == OutTL2 {
			var err error
			if ks, err = requantOutKernels(f, string(opts.OutType), opts); err != nil {
				return nil, err
			}
			p.Kernels = ks
		}
		to = spec.New(opts.I2SLayout, ks)
	}
	override := map[string]gguf.Type{}
	for _, o := range []struct{ name, flag, val string }{{"token_embd.weight", "--token-embedding-type", opts.TokenEmbeddingType}, {"output.weight", "--output-tensor-type", opts.OutputTensorType}} {
		if o.val == "" {
			continue
		}
		typ, err := ParseFloatType(o.val)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", o.flag, err)
		}
		override[o.name] = typ
	}
	var fallbacks []string
	for _, ti := range f.Tensors {
		// The 2026 type-id map (gguf/layouts.go): fail closed on what
		// cannot be copied or converted faithfully.
		switch {
		case ti.Type.NeedsHadamard():
			return nil, fmt.Errorf("%s: tensor %s: %s", path, ti.Name, gguf.HadamardRefusal(ti.Type))
		case ti.Type.IsLayoutUnknown():
			return nil, fmt.Errorf("%s: tensor %s: %s; requant cannot convert or copy it", path, ti.Name, f.Layouts[ti.Name])
		}
		if note, ok := f.Layouts[ti.Name]; ok {
			return nil, fmt.Errorf("%s: tensor %s: %s; requant cannot tell which it is", path, ti.Name, note)
		}
		t := RequantTensor{In: ti, Type: ti.Type, Ne: ti.Ne}
		isTernary := format.IsTernary(ti.Type)
		if isTernary {
			if len(ti.Ne) != 2 {
				return nil, fmt.Errorf("%s: tensor %s: ternary type %s with ne %v, want 2 dimensions", path, ti.Name, ti.Type, ti.Ne)
			}
			fm, _ := format.ForType(ti.Type, from, inKernels)
			if err := fm.Check(int(ti.Ne[0]), int(ti.Ne[1])); err != nil {
				return nil, fmt.Errorf("%s: tensor %s: cannot read as %s: %w", path, ti.Name, fm.Name(), err)
			}
			t.From = fm
		}
		switch {
		case projectionName.MatchString(ti.Name) && len(ti.Ne) == 2:
			if !isTernary && !slices.Contains(readableFloat[:3], ti.Type) {
				return nil, fmt.Errorf("%s: tensor %s has type %s, which requant does not read (supported: %s, F32, F16, BF16)", path, ti.Name, ti.Type, strings.Join(format.TypeNames(), ", "))
			}
			if to == nil {
				t.Type = floatOutType(opts.OutType)
				break
			}
			k, m := int(ti.Ne[0]), int(ti.Ne[1])
			if err := format.CheckWrite(to, k, m); err != nil {
				if !opts.AllowFallback {
					return nil, fmt.Errorf("%s: tensor %s: %v; pass --allow-fallback to write it as F16", path, ti.Name, err)
				}
				t.Type, t.Fallback = gguf.TypeF16, err.Error()
				fallbacks = append(fallbacks, ti.Name)
				break
			}
			t.To, t.Type = to, to.Type()
		case isTernary:
			return nil, fmt.Errorf("%s: tensor %s has ternary type %s but is not a BitNet projection", path, reader.Printable(ti.Name), ti.Type)
		default:
			if typ, ok := override[ti.Name]; ok && typ != ti.Type {
				if !slices.Contains(readableFloat, ti.Type) {
					return nil, fmt.Errorf("%s: tensor %s has type %s, which requant cannot convert to %s", path, ti.Name, ti.Type, typ)
				}
				tr, _ := typ.Traits()
				if len(ti.Ne) == 0 || ti.Ne[0]%tr.BlockSize != 0 {
					if !opts.AllowFallback {
						row := "no rows"
						if len(ti.Ne) > 0 {
							row = fmt.Sprintf("row length %d (ne %v)", ti.Ne[0], ti.Ne)
						}
						todo := "pass --allow-fallback to write it as F16"
						if ti.Type == gguf.TypeF16 {
							todo = "it is F16 already: leave " + retypeFlag(ti.Name) + " out to keep it as it is"
						}
						return nil, fmt.Errorf("%s: tensor %s: %s is not a multiple of %d (the %s block), so it cannot be %s; %s", path, ti.Name, row, tr.BlockSize, typ, typ, todo)
					}
					typ = gguf.TypeF16
					fallbacks = append(fallbacks, ti.Name)
				}
				t.Type = typ
			}
		}
		nb, err := gguf.NBytes(t.Type, t.Ne)
		if err != nil {
			return nil, fmt.Errorf("%s: tensor %s: %w", path, ti.Name, err)
		}
		t.Bytes = nb
		p.Tensors = append(p.Tensors, t)
	}
	if len(fallbacks) > 0 {
		p.Warnings = append(p.Warnings, "--allow-fallback: written as F16: "+strings.Join(fallbacks, ", "))
	}
	p.KVs = p.requantKVs(f, opts)
	return p, nil
}

// floatOutType is the projection type of a float outtype.
func floatOutType(o OutType) gguf.Type {
	switch o {
	case OutF32:
		return gguf.TypeF32
	case OutBF16:
		return gguf.TypeBF16
	}
	return gguf.TypeF16
}
