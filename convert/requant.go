package convert

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	goruntime "runtime"

	"github.com/bitnet-convert/bitnet-convert/format"
	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
	"github.com/bitnet-convert/bitnet-convert/gguf/writer"
	"github.com/bitnet-convert/bitnet-convert/internal/atomicfile"
)

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
	if opts.Check != nil {
		if err := opts.Check(p); err != nil {
			return nil, fmt.Errorf("%s: the %s output would not load (nothing written): %w", in, opts.OutType, err)
		}
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
		// Name the input, and the output (never the temp file) where the
		// error is the writer's (H13).
		return p, af.NameTarget(fmt.Errorf("%s: %w", in, err))
	}
	return p, af.NameTarget(af.Commit())
}

// Requant streams the planned file to w, one tensor at a time: tensor data
// is read from src (the input file, with ReadAt, so the mapping of f is not
// touched and resident memory stays at about one tensor). Errors name the
// tensor.
func Requant(ctx context.Context, f *reader.File, src io.ReaderAt, p *RequantPlan, w io.Writer, opts RequantOptions) error {
	infos := p.OutputInfos()
	bw := bufio.NewWriterSize(w, 1<<20)
	gw, err := writer.New(bw, p.KVs, infos, p.align)
	if err != nil {
		return err
	}
	r := &requanter{f: f, src: src, opts: opts, threads: goruntime.GOMAXPROCS(0)}
	var doneBytes uint64
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
		if doneBytes += t.Bytes; opts.ProgressBytes != nil {
			opts.ProgressBytes(doneBytes, p.TotalBytes(), t.In.Name)
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
				var conflict *format.ScaleConflictError
				if errors.As(err, &conflict) && group > 0 {
					return fmt.Errorf("tensor %s: %w (the input stores one scale per %d inputs, %s one per %d): keep this file's type, or requant to f16, bf16 or f32, which dequantize exactly", ti.Name, err, group, t.Type, t.To.ScaleGroup(k))
				}
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

// logScales says, with -v, how the scales were rounded (the type table's
// scale storage: f16 scales lose bits).
func (r *requanter) logScales(t *RequantTensor, sc []float32) {
	if !r.opts.Verbose {
		return
	}
	rounded := ""
	if s, ok := format.SpecOf(t.To.Type()); ok && s.Scale.F16() && len(sc) > 0 {
		rounded = fmt.Sprintf(", scales rounded to f16 (%v → %v)", sc[0], t.To.StoredScale(sc[0]))
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
