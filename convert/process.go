package convert

import (
	"context"
	"fmt"
	"io"
	"math"
	"runtime"
	"sync"

	"github.com/bitnet-convert/bitnet-convert/format"
	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/gguf/writer"
	"github.com/bitnet-convert/bitnet-convert/hf"
	"github.com/bitnet-convert/bitnet-convert/internal/osx"
	"github.com/bitnet-convert/bitnet-convert/internal/parallel"
	"github.com/bitnet-convert/bitnet-convert/quantize"
	"github.com/bitnet-convert/bitnet-convert/tensormap"
)

// chunkElems is the fixed work unit (elements) of the per-tensor parallel
// loops; a multiple of 128 so I2_S blocks never straddle chunks. Chunks are
// fixed, not derived from the thread count, so results do not depend on it.
const chunkElems = 1 << 16

// Convert streams the planned KVs and tensors of p as GGUF to w. Tensors
// are read from the checkpoint with TensorData.ReadAt (projections on the
// general path through the mapping, whose pages are released after each
// tensor) and written by a goroutine of their own (tensorWriter) while the
// next ones are computed. It checks ctx between chunks and returns ctx.Err()
// when cancelled. Errors name the tensor.
func Convert(ctx context.Context, ckpt *hf.Checkpoint, p *Plan, w io.Writer, opts Options) error {
	infos := make([]gguf.TensorInfo, len(p.Tensors))
	for i, t := range p.Tensors {
		infos[i] = gguf.TensorInfo{Name: t.GGUFName, Type: t.Type, Ne: t.Ne}
	}
	// No bufio: the header is written in pieces of 64 KiB and the tensors in
	// pieces of megabytes; copying them through a buffer would only cost.
	gw, err := writer.New(w, p.KVs, infos, 0)
	if err != nil {
		return err
	}
	c := &converter{ckpt: ckpt, plan: p, opts: opts, threads: opts.Threads}
	if c.threads <= 0 {
		c.threads = runtime.GOMAXPROCS(0)
	}
	defer c.free()
	tw := startWriter(gw)
	defer tw.free()
	var doneBytes uint64
	totalBytes := p.TotalBytes()
	for i := range p.Tensors {
		if err := ctx.Err(); err != nil {
			tw.close()
			return err
		}
		if tw.failed.Load() {
			break // close returns the write error
		}
		t := &p.Tensors[i]
		if err := c.writeTensor(ctx, tw, i, t); err != nil {
			tw.close()
			return err
		}
		if opts.Progress != nil {
			opts.Progress(i+1, len(p.Tensors), t.GGUFName)
		}
		if doneBytes += t.Bytes; opts.ProgressBytes != nil {
			opts.ProgressBytes(doneBytes, totalBytes, t.GGUFName)
		}
	}
	if err := tw.close(); err != nil {
		return err
	}
	return gw.Close()
}

// converter holds the buffers reused from tensor to tensor, so memory stays
// at about the largest tensor.
type converter struct {
	ckpt    *hf.Checkpoint
	plan    *Plan
	opts    Options
	threads int
	f32     []float32
	codes   []int8
	out     []byte
	// permCodes and permF32 hold a projection with its rows interleaved
	// for rope (RopePermuter).
	permCodes []int8
	permF32   []float32
	// bf16 and sums are the fused I2_S path's copy of a projection's bytes
	// and its abs-mean block sums (projectionI2S).
	bf16 *osx.Buffer
	sums []float32
	// in and streamF32 are a float stream's source bytes and decoded
	// values for one chunk.
	in        *osx.Buffer
	streamF32 []float32
}

// free releases the converter's mapped buffers.
func (c *converter) free() {
	c.bf16.Free()
	c.in.Free()
}

func (c *converter) logf(format string, args ...any) {
	if c.opts.Log != nil {
		fmt.Fprintf(c.opts.Log, format+"\n", args...)
	}
}

// writeTensor converts one planned tensor and queues it on tw as tensor i:
// projections whole (the abs-mean needs the whole tensor), everything else
// streamed chunk by chunk.
func (c *converter) writeTensor(ctx context.Context, tw *tensorWriter, i int, t *PlannedTensor) error {
	d, err := c.ckpt.Read(t.Source)
	if err != nil {
		return err
	}
	tw.begin(i)
	if t.Class == tensormap.Projection {
		buf := tw.take(int(t.Bytes))
		c.out = buf.Bytes()[:0] // the paths below grow c.out into it
		var out []byte
		fused := false
		if t.NotConverted {
			out, err = c.keptFloat(ctx, t, d)
			d.Release()
			if err != nil {
				return err
			}
			fused = true // written
		} else if c.fusedI2S(t, d) {
			if out, fused, err = c.projectionI2S(ctx, t, d); err != nil {
				return err
			}
		}
		if !fused {
			out, err = c.projection(ctx, t, d)
			d.Release() // the general path reads the mapping
			if err != nil {
				return err
			}
		}
		if uint64(len(out)) != t.Bytes {
			return fmt.Errorf("tensor %s: produced %d bytes, planned %d (internal error)", t.GGUFName, len(out), t.Bytes)
		}
		tw.put(out, buf)
	} else {
		s, err := c.newFloatStream(ctx, t, d)
		if err != nil {
			return err
		}
		for s.pos < s.n {
			buf := tw.take(minOutBuffer)
			s.out = buf.Bytes()[:0]
			if err := s.next(); err != nil {
				return err
			}
			tw.put(s.pend, buf)
		}
	}
	tw.end()
	if c.opts.Verbose {
		c.logf("%-32s %-28s %-5s → %-4s ne %v %d bytes%s", t.HFName, t.GGUFName, t.Source.DType, t.Type, t.Ne, t.Bytes, t.scaleNote)
	}
	return nil
}

func (c *converter) decode(ctx context.Context, t *PlannedTensor, d *hf.TensorData) ([]float32, error) {
	n, err := osx.Int(d.Ref.NElements(), "tensor "+t.HFName) // 32-bit builds
	if err != nil {
		return nil, err
	}
	es := int(d.Ref.DType.Size())
	if es == 0 || n*es != len(d.Raw) {
		return nil, fmt.Errorf("tensor %s: %d bytes do not hold %d %s values", t.HFName, len(d.Raw), n, d.Ref.DType)
	}
	if !d.Ref.DType.IsFloat() {
		return nil, fmt.Errorf("tensor %s has dtype %s, which is not a float type", t.HFName, d.Ref.DType)
	}
	c.f32 = grow(c.f32, n)
	x := c.f32
	var bad int64 = -1
	var mu sync.Mutex
	// Decode and check each chunk on the worker that owns it (one pass over
	// the input, spread over the cores).
	err = c.parallel(ctx, n, func(lo, hi int) {
		if i := hf.DecodeFloats(x[lo:hi], d.Raw[lo*es:hi*es], d.Ref.DType); i >= 0 {
			mu.Lock()
			if bad < 0 || int64(lo+i) < bad {
				bad = int64(lo + i)
			}
			mu.Unlock()
		}
	})
	if err != nil {
		return nil, err
	}
	if bad >= 0 {
		return nil, fmt.Errorf("tensor %s: non-finite value %v at element %d; the checkpoint is damaged", t.HFName, x[bad], bad)
	}
	return x, nil
}

// keptFloat encodes a projection modules_to_not_convert keeps in full
// precision (NotConverted): its float weights in the planned type, with the
// rows of q/k interleaved as for a ternary one when the converter permutes
// them for rope.
func (c *converter) keptFloat(ctx context.Context, t *PlannedTensor, d *hf.TensorData) ([]byte, error) {
	x, err := c.decode(ctx, t, d)
	if err != nil {
		return nil, err
	}
	if x, err = c.ropeOrderFloat(t, x); err != nil {
		return nil, err
	}
	return c.encodeFloat(ctx, t, len(x), func(i int) float32 { return x[i] })
}

// ropeOrderFloat is ropeOrder for float rows alone.
func (c *converter) ropeOrderFloat(t *PlannedTensor, x []float32) ([]float32, error) {
	rp, ok := c.plan.Converter.(RopePermuter)
	if !ok {
		return x, nil
	}
	heads := rp.RopeHeads(t.GGUFName)
	if heads <= 0 {
		return x, nil
	}
	c.permF32 = grow(c.permF32, len(x))
	if err := permuteRopeRows(c.permF32, x, int(t.HFShape[0]), int(t.HFShape[1]), heads); err != nil {
		return nil, fmt.Errorf("tensor %s: %w", t.HFName, err)
	}
	return c.permF32, nil
}

// projection ternarizes (or unpacks) one of the seven linear weights and
// encodes it in the planned type.
func (c *converter) projection(ctx context.Context, t *PlannedTensor, d *hf.TensorData) ([]byte, error) {
	if t.GroupScaled {
		return c.groupScaledProjection(ctx, t, d)
	}
	codes, scale, x, err := c.ternary(ctx, t, d)
	if err != nil {
		return nil, err
	}
	if codes, x, err = c.ropeOrder(t, codes, x); err != nil {
		return nil, err
	}
	n := len(codes)
	if err := checkScaleRange(t, scale); err != nil {
		return nil, err
	}
	if f := t.Format; f != nil {
		k, m := int(t.HFShape[1]), int(t.HFShape[0])
		scales, err := format.Regroup(codes, []float32{scale}, 0, f.ScaleGroup(k))
		if err != nil {
			return nil, fmt.Errorf("tensor %s: %w", t.GGUFName, err)
		}
		c.out = grow(c.out, int(t.Bytes))
		if err := format.EncodeParallel(f, c.out, codes, scales, k, m, c.threads); err != nil {
			return nil, fmt.Errorf("tensor %s: %w", t.GGUFName, err)
		}
		if s, ok := format.SpecOf(f.Type()); ok && s.Scale.F16() {
			t.scaleNote = fmt.Sprintf(", scale %v → f16 %v (%s)", scale, f.StoredScale(scale), s.Scale)
		}
		return c.out, nil
	}
	return c.encodeFloat(ctx, t, n, ternaryValue(codes, scale, x))
}

// ternaryValue returns W[i] = t[i]·scale, exactly ±scale or 0. A zero keeps
// the sign of the master weight x (when there is one), as torch's t/s does
// (−0.0 for small negatives), so F32 output is bit-identical to the reference.
func ternaryValue(codes []int8, scale float32, x []float32) func(i int) float32 {
	vals := [3]float32{-scale, 0, scale}
	negZero := float32(math.Copysign(0, -1))
	if x == nil {
		return func(i int) float32 { return vals[codes[i]+1] }
	}
	return func(i int) float32 {
		if codes[i] == 0 && math.Signbit(float64(x[i])) {
			return negZero
		}
		return vals[codes[i]+1]
	}
}

// ternary returns the codes (HF [out, in] row-major) and the per-tensor scale
// of a projection: abs-mean ternarization of master weights (spec §2.1), or
// the axis-0 unpacking of a packed U8 tensor with its weight_scale under the
// plan's rule (spec §2.4). x is the decoded master weight (nil when packed).
// The slices are reused by the next call.
func (c *converter) ternary(ctx context.Context, t *PlannedTensor, d *hf.TensorData) (codes []int8, scale float32, x []float32, err error) {
	n := int(t.HFShape[0] * t.HFShape[1])
	c.codes = grow(c.codes, n)
	codes = c.codes
	if t.Packed {
		rows, cols := int(t.Source.Shape[0]), int(t.Source.Shape[1])
		if len(d.Raw) != rows*cols {
			return nil, 0, nil, fmt.Errorf("tensor %s: %d bytes for U8 shape %v", t.HFName, len(d.Raw), t.Source.Shape)
		}
		raw := d.Raw
		if k := firstCode3(raw); k >= 0 {
			// Code 3 is not ternary: HF's unpack makes it weight +2, which
			// no ternary GGUF can hold (defect D20).
			return nil, 0, nil, fmt.Errorf("tensor %s: packed byte %d (0x%02x) holds the 2-bit code 3, which is not a ternary value (HF would unpack it as +2); the checkpoint is damaged", t.HFName, k, raw[k])
		}
		if err := c.parallel(ctx, len(raw), func(lo, hi int) { unpackPackedRange(codes, raw, lo, hi) }); err != nil {
			return nil, 0, nil, err
		}
		ws, err := c.weightScale(t)
		if err != nil {
			return nil, 0, nil, err
		}
		switch c.plan.WeightScaleRule {
		case RuleMultiply:
			scale = ws
		case RuleDivide:
			scale = 1 / ws
		}
		if !(scale > 0) || math.IsInf(float64(scale), 0) {
			return nil, 0, nil, fmt.Errorf("tensor %s: weight_scale %v gives scale %v; the checkpoint is damaged", t.Scale.Name, ws, scale)
		}
	} else {
		x, err = c.decode(ctx, t, d)
		if err != nil {
			return nil, 0, nil, err
		}
		m := max(quantize.AbsMeanParallel(x, c.threads), quantize.AbsMeanFloor)
		if math.IsInf(float64(m), 0) || math.IsNaN(float64(m)) {
			return nil, 0, nil, absMeanOverflow(t, m)
		}
		inv := 1 / m
		if err := c.parallel(ctx, n, func(lo, hi int) { quantize.TernarizeWith(codes[lo:hi], x[lo:hi], inv) }); err != nil {
			return nil, 0, nil, err
		}
		scale = 1 / inv
		if m == quantize.AbsMeanFloor {
			c.warn("tensor %s: abs-mean is %g (all weights ~0); its ternary codes are all zero", t.HFName, m)
		}
	}
	if allEqual(codes) {
		c.warn("tensor %s: every ternary code is %d", t.HFName, codes[0])
	}
	return codes, scale, x, nil
}

func (c *converter) weightScale(t *PlannedTensor) (float32, error) {
	d, err := c.ckpt.Read(t.Scale)
	if err != nil {
		return 0, err
	}
	defer d.Release()
	v, err := d.Float32s(nil)
	if err != nil || len(v) != 1 {
		return 0, fmt.Errorf("tensor %s: want one float weight_scale: %v", t.Scale.Name, err)
	}
	return v[0], nil
}

// gemmaFix reports whether t gets the Gemma (1 + w) norm fix: its rule is
// flagged "gemma-norm" and the converter asks for the fix.
func gemmaFix(p *Plan, t *PlannedTensor) bool {
	g, ok := p.Converter.(GemmaNormFixer)
	return ok && g.GemmaNormFix() && t.Match.HasFlag("gemma-norm")
}

// encodeFloat encodes n values given by at into the reused output buffer in
// t.Type (see encodeInto).
func (c *converter) encodeFloat(ctx context.Context, t *PlannedTensor, n int, at func(i int) float32) ([]byte, error) {
	c.out = grow(c.out, int(t.Bytes))
	if err := c.encodeInto(ctx, t, c.out, n, at); err != nil {
		return nil, err
	}
	return c.out, nil
}

// warn records a warning in the plan; the caller prints the plan's
// warnings once, at the end.
func (c *converter) warn(format string, args ...any) {
	c.plan.Warnings = append(c.plan.Warnings, fmt.Sprintf(format, args...))
}

// parallel runs fn over [0, n) in fixed chunks of chunkElems on c.threads
// goroutines (internal/parallel, contiguous runs of chunks per goroutine),
// stopping between chunks once ctx is done. Each chunk covers the same
// elements whatever the thread count.
func (c *converter) parallel(ctx context.Context, n int, fn func(lo, hi int)) error {
	chunks := (n + chunkElems - 1) / chunkElems
	parallel.For(chunks, c.threads, func(c0, c1 int) {
		for ch := c0; ch < c1 && ctx.Err() == nil; ch++ {
			lo := ch * chunkElems
			fn(lo, min(n, lo+chunkElems))
		}
	})
	return ctx.Err()
}

// ropeOrder returns the codes (and master weights x, when not nil) of
// projection t in the row order the GGUF stores: interleaved for rope when
// the architecture is a RopePermuter that names t, else unchanged. The
// returned slices are reused by the next call.
func (c *converter) ropeOrder(t *PlannedTensor, codes []int8, x []float32) ([]int8, []float32, error) {
	rp, ok := c.plan.Converter.(RopePermuter)
	if !ok {
		return codes, x, nil
	}
	heads := rp.RopeHeads(t.GGUFName)
	if heads <= 0 {
		return codes, x, nil
	}
	rows, cols := int(t.HFShape[0]), int(t.HFShape[1])
	c.permCodes = grow(c.permCodes, len(codes))
	if err := permuteRopeRows(c.permCodes, codes, rows, cols, heads); err != nil {
		return nil, nil, fmt.Errorf("tensor %s: %w", t.HFName, err)
	}
	if x != nil {
		c.permF32 = grow(c.permF32, len(x))
		_ = permuteRopeRows(c.permF32, x, rows, cols, heads)
		x = c.permF32
	}
	return c.permCodes, x, nil
}

// permuteRopeRows writes src ([rows, cols], row-major) to dst with the rows
// of each of the heads groups interleaved: row h·d + j·d/2 + i of src
// becomes row h·d + 2i + j (d = rows/heads), the reshape(heads, 2, d/2,
// cols).swapaxes(1, 2) of bitnet.cpp's LlamaModel.permute. rows must be a
// multiple of 2·heads.
func permuteRopeRows[T any](dst, src []T, rows, cols, heads int) error {
	if heads <= 0 || rows%(2*heads) != 0 {
		return fmt.Errorf("%d rows cannot be split into %d rope heads of even size", rows, heads)
	}
	d := rows / heads
	half := d / 2
	for h := 0; h < heads; h++ {
		for i := 0; i < half; i++ {
			for j := 0; j < 2; j++ {
				from := h*d + j*half + i
				to := h*d + 2*i + j
				copy(dst[to*cols:(to+1)*cols], src[from*cols:(from+1)*cols])
			}
		}
	}
	return nil
}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

func allEqual(c []int8) bool {
	for _, v := range c[1:] {
		if v != c[0] {
			return false
		}
	}
	return len(c) > 0
}

// checkScaleRange refuses a projection whose per-tensor scale the output
// type cannot hold: a ternary format with an f16 scale (TQ1_0, TQ2_0, Q2_0;
// format.Spec.Scale) or an F16 file of the values ±scale would
// store +Inf or 0 for a scale outside f16's range (|s| ≤ 65504, normal or
// subnormal ≥ 2^-24), and the file would compute another model. One line
// naming the tensor, the scale and what to do.
func checkScaleRange(t *PlannedTensor, scale float32) error {
	f16 := t.Type == gguf.TypeF16
	if f := t.Format; f != nil {
		s, ok := format.SpecOf(f.Type())
		f16 = ok && s.Scale.F16()
	}
	if !f16 || scale == 0 || math.IsNaN(float64(scale)) {
		return nil
	}
	stored := quantize.F16ToF32(quantize.F32ToF16(scale))
	if !math.IsInf(float64(stored), 0) && stored != 0 {
		return nil
	}
	return fmt.Errorf("tensor %s (%s): scale %g is outside f16's range (f16 would store %g) and %s stores it as f16: check the checkpoint's weight_scale (and --weight-scale), or use --outtype i2_s or f32, which keep an f32 scale", t.GGUFName, t.HFName, scale, stored, t.Type)
}
