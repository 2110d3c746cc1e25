package convert

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/bitnet-convert/bitnet-convert/internal/version"
	"io"
	"math"
	"os"
	"regexp"
	goruntime "runtime"
	"slices"
	"strings"

	"github.com/bitnet-convert/bitnet-convert/format"
	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
	"github.com/bitnet-convert/bitnet-convert/gguf/writer"
	"github.com/bitnet-convert/bitnet-convert/internal/atomicfile"
	"github.com/bitnet-convert/bitnet-convert/quantize"
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
	if _, ok := typePolicy[opts.OutType]; !ok {
		_, err := ParseOutType(string(opts.OutType))
		return nil, err
	}
	if _, ok := f.String("general.architecture"); !ok {
		return nil, fmt.Errorf("%s: key general.architecture: missing (requant reads %s); fix the GGUF metadata", path, strings.Join(RequantArchs(), ", "))
	}
	if err := checkRequantOutType(f.Arch(), opts.OutType); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := checkRequantShapes(f, path); err != nil {
		return nil, err
	}
	p := &RequantPlan{Input: path, SrcArch: f.Arch(), OutType: opts.OutType, align: f.Alignment}
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
				return nil, fmt.Errorf("%s: tensor %s has type %s, which requant does not read (supported: I2_S, TL1, TL2, TQ1_0, TQ2_0, IQ1_BN, IQ2_BN, F32, F16, BF16)", path, ti.Name, ti.Type)
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

// requantKVs renames the arch for the target runtime and sets the keys the
// outtype implies.
func (p *RequantPlan) requantKVs(f *reader.File, opts RequantOptions) []gguf.KV {
	src := p.SrcArch
	act := format.ArchActivation[src]
	if v, ok := f.String(src + format.HiddenActivationSuffix); ok {
		act = v
	}
	// A file for mainline llama.cpp names every BitNet model "bitnet";
	// bitnet.cpp and ik_llama.cpp run relu² models as bitnet-b1.58.
	base := src
	if src == "bitnet" && act == "relu2" {
		base = "bitnet-b1.58"
	}
	p.Arch = format.TargetArch(base, p.Runtime)
	if p.Arch != base && act == "relu2" {
		p.Warnings = append(p.Warnings, format.Relu2Notice)
	}
	kvs := format.RenameArch(f.KVs, src, p.Arch)
	drop := map[string]bool{writer.AlignmentKey: true, format.LayoutKey: true, format.KernelConfigKey: true}
	set := []gguf.KV{{Key: "general.file_type", Value: gguf.Uint32(uint32(fileTypes[p.OutType]))}}
	if act != "" {
		set = append(set, gguf.KV{Key: p.Arch + format.HiddenActivationSuffix, Value: gguf.String(act)})
	}
	if _, ternary := format.Lookup(string(p.OutType)); ternary {
		set = append(set, gguf.KV{Key: "general.quantization_version", Value: gguf.Uint32(2)})
	}
	if p.OutType == OutI2S {
		set = append(set, gguf.KV{Key: format.LayoutKey, Value: gguf.String(string(layoutOrDefault(opts.I2SLayout)))})
	}
	if len(p.Kernels) > 0 {
		set = append(set, gguf.KV{Key: format.KernelConfigKey, Value: gguf.String(string(format.KernelConfig(p.Kernels)))})
	}
	// Which bitnet-convert rewrote the file (replacing the input's record;
	// no timestamp, so reruns stay byte-identical).
	set = append(set, gguf.KV{Key: version.Key, Value: gguf.String(version.Read().GGUFValue())})
	out := kvs[:0]
	for _, kv := range kvs {
		if !drop[kv.Key] {
			out = append(out, kv)
		}
	}
	for _, s := range set {
		i := slices.IndexFunc(out, func(kv gguf.KV) bool { return kv.Key == s.Key })
		if i >= 0 {
			out[i].Value = s.Value
		} else {
			out = append(out, s)
		}
	}
	return out
}

// requantKernels is the tiling of TL input tensors: --kernel-config, else
// the one the file stores.
func requantKernels(f *reader.File, ini []byte) ([]format.Kernel, error) {
	if ini != nil {
		return format.ParseKernelConfig(ini)
	}
	v, ok := f.String(format.KernelConfigKey)
	if !ok {
		return nil, errors.New("TL tensors but no stored kernel configuration: pass the kernel_config.ini it was made with (--kernel-config)")
	}
	ks, err := format.ParseKernelConfig([]byte(v))
	if err != nil {
		return nil, fmt.Errorf("key %s: %w", format.KernelConfigKey, err)
	}
	return ks, nil
}

// requantOutKernels is the tiling written for --outtype tl1/tl2:
// --kernel-config, else derived from the projection shapes (format.ConfigFor).
func requantOutKernels(f *reader.File, arch string, opts RequantOptions) ([]format.Kernel, error) {
	if opts.KernelConfig != nil {
		ks, err := format.ParseKernelConfig(opts.KernelConfig)
		if err != nil {
			return nil, fmt.Errorf("--kernel-config: %w", err)
		}
		if err := format.Validate(arch, ks); err != nil {
			return nil, fmt.Errorf("--kernel-config: %w", err)
		}
		return ks, nil
	}
	var shapes [][2]int
	for _, ti := range f.Tensors {
		if projectionName.MatchString(ti.Name) && len(ti.Ne) == 2 {
			s := [2]int{int(ti.Ne[1]), int(ti.Ne[0])}
			if !slices.Contains(shapes, s) {
				shapes = append(shapes, s)
			}
		}
	}
	var ks []format.Kernel
	for _, s := range shapes {
		if one, err := format.ConfigFor(arch, [][2]int{s}); err == nil {
			ks = append(ks, one...)
		} else if !opts.AllowFallback {
			return nil, fmt.Errorf("%s: %w; pass --allow-fallback to write such tensors as F16", arch, err)
		}
	}
	return ks, nil
}

// RequantFile requantizes the GGUF at in to out (atomically; an existing out
// is kept unless force). With dryRun it only plans.
func RequantFile(ctx context.Context, in, out string, force, dryRun bool, opts RequantOptions) (*RequantPlan, error) {
	f, err := reader.Open(in)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	p, err := NewRequantPlan(f, in, opts)
	if err != nil {
		return nil, err
	}
	if dryRun {
		return p, nil
	}
	if a, err := os.Stat(in); err == nil {
		if b, err := os.Stat(out); err == nil && os.SameFile(a, b) {
			return p, fmt.Errorf("output %s is the input file; choose another --outfile", out)
		}
	}
	src, err := os.Open(in)
	if err != nil {
		return p, err
	}
	defer src.Close()
	af, err := atomicfile.Create(out, force)
	if err != nil {
		return p, err
	}
	defer af.Abort()
	if err := Requant(ctx, f, src, p, af, opts); err != nil {
		if ctx.Err() != nil {
			return p, fmt.Errorf("interrupted; %s was not written", out)
		}
		// Name the output, never the temp file (H13).
		return p, af.NameTarget(err)
	}
	return p, af.NameTarget(af.Commit())
}

// Requant streams the planned file to w, one tensor at a time: tensor data
// is read from src (the input file, with ReadAt, so the mapping of f is not
// touched and resident memory stays at about one tensor). Errors name the
// tensor.
func Requant(ctx context.Context, f *reader.File, src io.ReaderAt, p *RequantPlan, w io.Writer, opts RequantOptions) error {
	infos := make([]gguf.TensorInfo, len(p.Tensors))
	for i, t := range p.Tensors {
		infos[i] = gguf.TensorInfo{Name: t.In.Name, Type: t.Type, Ne: t.Ne}
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	gw, err := writer.New(bw, p.KVs, infos, p.align)
	if err != nil {
		return err
	}
	r := &requanter{f: f, src: src, opts: opts, threads: goruntime.GOMAXPROCS(0)}
	for i := range p.Tensors {
		if err := ctx.Err(); err != nil {
			return err
		}
		t := &p.Tensors[i]
		if err := r.tensor(gw, i, t); err != nil {
			return err
		}
		if opts.Progress != nil {
			opts.Progress(i+1, len(p.Tensors), t.In.Name)
		}
	}
	if err := gw.Close(); err != nil {
		return err
	}
	return bw.Flush()
}

type requanter struct {
	threads int
	f       *reader.File
	src     io.ReaderAt
	opts    RequantOptions
	in      []byte
	out     []byte
	f32     []float32
	code    []int8
}

func (r *requanter) logf(format string, args ...any) {
	if r.opts.Verbose && r.opts.Log != nil {
		fmt.Fprintf(r.opts.Log, format+"\n", args...)
	}
}

// section returns a reader of the stored bytes of tensor ti.
func (r *requanter) section(ti gguf.TensorInfo) (*io.SectionReader, int64, error) {
	n, err := ti.NBytes()
	if err != nil {
		return nil, 0, err
	}
	return io.NewSectionReader(r.src, int64(r.f.DataOffset+ti.Offset), int64(n)), int64(n), nil
}

func (r *requanter) readAll(ti gguf.TensorInfo) ([]byte, error) {
	s, n, err := r.section(ti)
	if err != nil {
		return nil, err
	}
	r.in = grow(r.in, int(n))
	if _, err := io.ReadFull(s, r.in); err != nil {
		return nil, fmt.Errorf("tensor %s: %w", ti.Name, err)
	}
	return r.in, nil
}

func (r *requanter) tensor(gw *writer.Writer, i int, t *RequantTensor) error {
	ti := t.In
	if err := r.checkBlockScales(ti); err != nil {
		return err
	}
	switch {
	case t.From == nil && t.To == nil && t.Type == ti.Type:
		s, _, err := r.section(ti)
		if err != nil {
			return err
		}
		r.logf("%-32s %-6s copied", ti.Name, ti.Type)
		return gw.WriteTensorFrom(i, s)
	case t.To != nil && t.From != nil:
		// A direct byte path when the format layer has one (I2_S → TQ2_0).
		data, err := r.readAll(ti)
		if err != nil {
			return err
		}
		sc, err := t.From.Scales(data, int(ti.Ne[0]), int(ti.Ne[1]))
		if err != nil {
			return fmt.Errorf("tensor %s: %w", ti.Name, err)
		}
		if err := finiteScales(ti, sc); err != nil {
			return err
		}
		if err := storableScales(ti, t.To, sc); err != nil {
			return err
		}
		r.out = grow(r.out, int(t.Bytes))
		ok, err := format.Transcode(t.From, t.To, r.out, data, int(ti.Ne[0]), int(ti.Ne[1]), r.threads)
		if err != nil {
			return fmt.Errorf("tensor %s: %w", ti.Name, err)
		}
		if ok {
			r.logScales(t, sc)
			return gw.WriteTensor(i, r.out[:t.Bytes])
		}
		fallthrough
	case t.To != nil || t.From != nil:
		codes, scales, group, err := r.ternary(t)
		if err != nil {
			return err
		}
		k, m := int(ti.Ne[0]), int(ti.Ne[1])
		r.out = grow(r.out, int(t.Bytes))
		if t.To != nil {
			sc, err := format.Regroup(codes, scales, group, t.To.ScaleGroup(k))
			if err != nil {
				return fmt.Errorf("tensor %s: %w", ti.Name, err)
			}
			if err := storableScales(ti, t.To, sc); err != nil {
				return err
			}
			if err := format.EncodeParallel(t.To, r.out, codes, sc, k, m, r.threads); err != nil {
				return fmt.Errorf("tensor %s: %w", ti.Name, err)
			}
			r.logScales(t, sc)
		} else {
			// Dequantize: w = t·scale of its group.
			g := group
			if g == 0 {
				g = len(codes)
			}
			r.f32 = grow(r.f32, len(codes))
			for e, c := range codes {
				r.f32[e] = float32(c) * scales[e/g]
			}
			if err := encodeFloats(r.out, t.Type, r.f32); err != nil {
				return fmt.Errorf("tensor %s: %w", ti.Name, err)
			}
			r.logf("%-32s %-6s → %s (dequantized)", ti.Name, ti.Type, t.Type)
		}
		return gw.WriteTensor(i, r.out[:t.Bytes])
	default:
		// Float to float (retyped embedding or head, or an F16 fallback of
		// a float projection), row chunks at a time.
		return r.floatTensor(gw, i, t)
	}
}

// logScales says, with -v, how the scales were rounded.
func (r *requanter) logScales(t *RequantTensor, sc []float32) {
	if !r.opts.Verbose {
		return
	}
	rounded := ""
	switch t.To.Type() {
	case gguf.TypeTQ1_0, gguf.TypeTQ2_0, gguf.TypeIQ1BN:
		if len(sc) > 0 {
			rounded = fmt.Sprintf(", scales rounded to f16 (%v → %v)", sc[0], quantize.F16ToF32(quantize.F32ToF16(sc[0])))
		}
	}
	r.logf("%-32s %-6s → %s, %d scale(s)%s", t.In.Name, t.In.Type, t.To.Name(), len(sc), rounded)
}

// ternary returns the codes and scales of a projection: decoded by its
// format, or read from a float tensor of a ternary model (codes = sign, one
// scale max|w|; values that are not ±scale or 0 are an error).
func (r *requanter) ternary(t *RequantTensor) ([]int8, []float32, int, error) {
	ti := t.In
	k, m := int(ti.Ne[0]), int(ti.Ne[1])
	data, err := r.readAll(ti)
	if err != nil {
		return nil, nil, 0, err
	}
	r.code = grow(r.code, k*m)
	if t.From != nil {
		sc, err := format.DecodeParallel(t.From, r.code, data, k, m, r.threads)
		if err != nil {
			return nil, nil, 0, fmt.Errorf("tensor %s: %w", ti.Name, err)
		}
		if err := finiteScales(ti, sc); err != nil {
			return nil, nil, 0, err
		}
		return r.code, sc, t.From.ScaleGroup(k), nil
	}
	r.f32 = grow(r.f32, k*m)
	if err := decodeFloats(r.f32, ti.Type, data); err != nil {
		return nil, nil, 0, fmt.Errorf("tensor %s: %w", ti.Name, err)
	}
	var s float32
	for e, v := range r.f32 {
		a := float32(math.Abs(float64(v)))
		switch {
		case a == 0:
			r.code[e] = 0
			continue
		case s == 0:
			s = a
		case a != s:
			return nil, nil, 0, fmt.Errorf("tensor %s: element %d is %v but others are ±%v: not a ternary tensor (convert the Hugging Face checkpoint with hf2gguf instead)", ti.Name, e, v, s)
		}
		if v > 0 {
			r.code[e] = 1
		} else {
			r.code[e] = -1
		}
	}
	return r.code, []float32{s}, 0, nil
}

// floatRows is how many elements a float conversion handles at a time.
const floatRows = 1 << 20

func (r *requanter) floatTensor(gw *writer.Writer, i int, t *RequantTensor) error {
	ti := t.In
	s, _, err := r.section(ti)
	if err != nil {
		return err
	}
	n, err := gguf.NElements(ti.Ne)
	if err != nil {
		return err
	}
	inTr, _ := ti.Type.Traits()
	outTr, _ := t.Type.Traits()
	// Whole rows per chunk keep every block inside a chunk.
	row := int(ti.Ne[0])
	chunk := max(row, floatRows/row*row)
	pr, pw := io.Pipe()
	// done gets the goroutine's own error (reading, decoding, encoding;
	// nil when only the pipe failed) once it has finished
	done := make(chan error, 1)
	go func() {
		var err, own error
		for lo := 0; lo < int(n) && own == nil && err == nil; lo += chunk {
			hi := min(int(n), lo+chunk)
			in := make([]byte, (hi-lo)/int(inTr.BlockSize)*int(inTr.TypeSize))
			if _, own = io.ReadFull(s, in); own != nil {
				break
			}
			r.f32 = grow(r.f32, hi-lo)
			if own = decodeFloats(r.f32, ti.Type, in); own != nil {
				break
			}
			out := make([]byte, (hi-lo)/int(outTr.BlockSize)*int(outTr.TypeSize))
			if own = encodeFloats(out, t.Type, r.f32); own != nil {
				break
			}
			_, err = pw.Write(out)
		}
		if own != nil {
			own = fmt.Errorf("tensor %s: %w%s", ti.Name, own, retypeHint(ti.Name))
			err = own
		}
		pw.CloseWithError(err)
		done <- own
	}()
	r.logf("%-32s %-6s → %s", ti.Name, ti.Type, t.Type)
	err = gw.WriteTensorFrom(i, pr)
	pr.CloseWithError(err) // unblocks the goroutine when the writer failed
	if own := <-done; own != nil {
		// without the writer's wrapping, which names the tensor again
		return own
	}
	return err
}

// retypeFlag is the flag that retypes tensor name (token_embd or output),
// or "" for other tensors.
func retypeFlag(name string) string {
	switch name {
	case "token_embd.weight":
		return "--token-embedding-type"
	case "output.weight":
		return "--output-tensor-type"
	}
	return ""
}

// retypeHint is how to keep the retyped tensor name in a wider type
// (" (--token-embedding-type f32 or bf16)"), or "" for other tensors.
func retypeHint(name string) string {
	if f := retypeFlag(name); f != "" {
		return " (" + f + " f32 or bf16)"
	}
	return ""
}

// decodeFloats widens data of type typ into dst (len = elements).
func decodeFloats(dst []float32, typ gguf.Type, data []byte) error {
	switch typ {
	case gguf.TypeF32:
		for i := range dst {
			dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
		}
	case gguf.TypeF16:
		for i := range dst {
			dst[i] = quantize.F16ToF32(binary.LittleEndian.Uint16(data[2*i:]))
		}
	case gguf.TypeBF16:
		for i := range dst {
			dst[i] = quantize.BF16ToF32(binary.LittleEndian.Uint16(data[2*i:]))
		}
	case gguf.TypeQ8_0:
		quantize.DequantizeQ8_0(dst, data)
	case gguf.TypeQ6_K:
		quantize.DequantizeQ6K(dst, data)
	case gguf.TypeQ4_K:
		quantize.DequantizeQ4K(dst, data)
	default:
		return fmt.Errorf("cannot decode type %s", typ)
	}
	return nil
}

// encodeFloats encodes x in typ into dst (exactly its size). F16 fails on
// values beyond its range.
func encodeFloats(dst []byte, typ gguf.Type, x []float32) error {
	switch typ {
	case gguf.TypeF32:
		for i, v := range x {
			binary.LittleEndian.PutUint32(dst[4*i:], math.Float32bits(v))
		}
	case gguf.TypeF16:
		if m, bad := quantize.F16Overflow(x); bad {
			return fmt.Errorf("max |value| %g exceeds the F16 range (65504); keep this tensor F32 (or BF16) instead", m)
		}
		for i, v := range x {
			binary.LittleEndian.PutUint16(dst[2*i:], quantize.F32ToF16(v))
		}
	case gguf.TypeBF16:
		for i, v := range x {
			binary.LittleEndian.PutUint16(dst[2*i:], quantize.F32ToBF16(v))
		}
	case gguf.TypeQ8_0:
		quantize.QuantizeQ8_0(dst, x)
		return encodedScalesFinite(dst, typ, x)
	case gguf.TypeQ6_K:
		quantize.QuantizeQ6K(dst, x)
		return encodedScalesFinite(dst, typ, x)
	default:
		return fmt.Errorf("cannot encode type %s", typ)
	}
	return nil
}

// checkRequantOutType refuses the outtypes hf2gguf refuses for the file's
// arch (the converter's OutTypes, as Architectures lists them): requant
// writes nothing that hf2gguf would not, so a BitNet embedding model
// (qwen3, gemma3) stays F32/F16/BF16/I2_S, which is what bitnet.cpp's
// embedding pipeline runs; no other runtime knows their per-projection input
// norms. An arch no converter writes is not limited here.
func checkRequantOutType(arch string, t OutType) error {
	var limits []OutType
	known := false
	for _, info := range Architectures() {
		if info.VocabOnly || !slices.Contains(archNames(info), arch) {
			continue
		}
		known = true
		for _, o := range info.OutTypes {
			if !slices.Contains(limits, o) {
				limits = append(limits, o)
			}
		}
	}
	if _, ok := format.ArchActivation[arch]; ok && !known {
		// a BitNet arch another converter wrote (llama.cpp's "bitnet",
		// ik_llama.cpp's "bitnet-25"): every outtype
		return nil
	}
	if !known {
		return fmt.Errorf("general.architecture %s is not an architecture requant reads (%s); fix the GGUF metadata", reader.Quote(arch), strings.Join(RequantArchs(), ", "))
	}
	if slices.Contains(limits, t) {
		return nil
	}
	return fmt.Errorf("--outtype %s is not supported for arch %s (supported: %s)", t, arch, joinOutTypes(limits))
}

// archNames is info.GGUF without what selects each arch ("bitnet-b1.58
// (hidden_act relu2)" gives bitnet-b1.58).
func archNames(info ArchInfo) []string {
	var out []string
	for _, g := range info.GGUF {
		name, _, _ := strings.Cut(g, " ")
		out = append(out, name)
	}
	return out
}

// RequantArchs lists, sorted, the general.architecture values requant
// reads: the archs the converters write (Architectures, not vocab-only)
// and the BitNet archs of the other runtimes (format.ArchActivation:
// llama.cpp's bitnet, ik_llama.cpp's bitnet-25).
func RequantArchs() []string {
	var out []string
	for _, info := range Architectures() {
		if !info.VocabOnly {
			out = append(out, archNames(info)...)
		}
	}
	for a := range format.ArchActivation {
		out = append(out, a)
	}
	slices.Sort(out)
	return slices.Compact(out)
}
