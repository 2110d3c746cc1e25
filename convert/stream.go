package convert

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"sync"

	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/hf"
	"github.com/bitnet-convert/bitnet-convert/internal/osx"
	"github.com/bitnet-convert/bitnet-convert/quantize"
)

// streamElems is how many elements of a float tensor (embedding, head,
// norm) are decoded, converted and written at a time, so a 128256×2560
// embedding never sits in memory as float32.
const streamElems = 1 << 20

// floatStream produces the planned bytes of a non-ternary tensor chunk by
// chunk (next), each chunk read from the shard into the converter's input
// buffer (TensorData.ReadAt: pread, cheaper than faulting the mapping in)
// and encoded into out, which the caller sets to a buffer of at least
// minOutBuffer bytes before each call.
type floatStream struct {
	ctx  context.Context
	c    *converter
	t    *PlannedTensor
	d    *hf.TensorData
	n    int // elements
	pos  int
	out  []byte
	pend []byte // the last chunk's bytes (in out)
}

func (c *converter) newFloatStream(ctx context.Context, t *PlannedTensor, d *hf.TensorData) (*floatStream, error) {
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
	if c.in == nil {
		c.in = &osx.Buffer{}
	}
	return &floatStream{ctx: ctx, c: c, t: t, d: d, n: n}, nil
}

// input returns the converter's input buffer, n bytes long.
func (s *floatStream) input(n int) []byte {
	s.c.in.Grow(max(n, minOutBuffer))
	return s.c.in.Bytes()[:n]
}

// next decodes, checks, fixes and encodes the next chunk into pend.
func (s *floatStream) next() error {
	lo, hi := s.pos, min(s.n, s.pos+streamElems)
	es := int(s.d.Ref.DType.Size())
	m := hi - lo
	s.c.streamF32 = grow(s.c.streamF32, m)
	x := s.c.streamF32
	var bad = -1
	var mu sync.Mutex
	fix := gemmaFix(s.c.plan, s.t)
	if s.d.Ref.DType == hf.BF16 && s.t.Type == gguf.TypeF16 && !fix {
		return s.nextBF16ToF16(lo, hi)
	}
	raw := s.input(m * es)
	if _, err := s.d.ReadAt(raw, int64(lo*es)); err != nil {
		return err
	}
	if err := s.c.parallel(s.ctx, m, func(a, b int) {
		if i := hf.DecodeFloats(x[a:b], raw[a*es:b*es], s.d.Ref.DType); i >= 0 {
			mu.Lock()
			if bad < 0 || a+i < bad {
				bad = a + i
			}
			mu.Unlock()
			return
		}
		if fix {
			for i := a; i < b; i++ {
				x[i] += 1
			}
		}
	}); err != nil {
		return err
	}
	if bad >= 0 {
		return fmt.Errorf("tensor %s: non-finite value %v at element %d; the checkpoint is damaged", s.t.HFName, x[bad], lo+bad)
	}
	tr, _ := s.t.Type.Traits()
	s.out = grow(s.out, m/int(tr.BlockSize)*int(tr.TypeSize))
	if err := s.c.encodeInto(s.ctx, s.t, s.out, m, func(i int) float32 { return x[i] }); err != nil {
		return err
	}
	s.pend = s.out
	s.pos = hi
	return nil
}

// encodeInto writes n values given by at into out in t.Type (F32, F16 or
// BF16). F16 output fails on values beyond the f16 range, naming the tensor
// and max|x|.
func (c *converter) encodeInto(ctx context.Context, t *PlannedTensor, out []byte, n int, at func(i int) float32) error {
	var err error
	switch t.Type {
	case gguf.TypeF32:
		err = c.parallel(ctx, n, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(at(i)))
			}
		})
	case gguf.TypeBF16:
		err = c.parallel(ctx, n, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				binary.LittleEndian.PutUint16(out[2*i:], quantize.F32ToBF16(at(i)))
			}
		})
	case gguf.TypeF16:
		var mu sync.Mutex
		var maxAbs float32
		err = c.parallel(ctx, n, func(lo, hi int) {
			local := float32(0)
			for i := lo; i < hi; i++ {
				v := at(i)
				if a := float32(math.Abs(float64(v))); a > local {
					local = a
				}
				binary.LittleEndian.PutUint16(out[2*i:], quantize.F32ToF16(v))
			}
			mu.Lock()
			maxAbs = max(maxAbs, local)
			mu.Unlock()
		})
		if err == nil && maxAbs > 65504 {
			return fmt.Errorf("tensor %s: max |value| %g exceeds the F16 range (65504); use --outtype bf16 or f32", t.HFName, maxAbs)
		}
	case gguf.TypeQ8_0, gguf.TypeQ6_K:
		// Whole blocks per chunk: chunkElems is a multiple of 256 and every
		// row length is a multiple of the block (checked by the plan).
		tr, _ := t.Type.Traits()
		bs, ts := int(tr.BlockSize), int(tr.TypeSize)
		if n%bs != 0 {
			return fmt.Errorf("tensor %s: %d values do not fill %s blocks", t.GGUFName, n, t.Type)
		}
		err = c.parallel(ctx, n, func(lo, hi int) {
			x := make([]float32, hi-lo)
			for i := range x {
				x[i] = at(lo + i)
			}
			dst := out[lo/bs*ts : hi/bs*ts]
			if t.Type == gguf.TypeQ8_0 {
				quantize.QuantizeQ8_0(dst, x)
			} else {
				quantize.QuantizeQ6K(dst, x)
			}
		})
	default:
		return fmt.Errorf("tensor %s: cannot encode type %s", t.GGUFName, t.Type)
	}
	return err
}

// nextBF16ToF16 is next for a BF16 source written as F16 (the token
// embedding and output head of I2_S/TL files): each core reads its pieces
// of the chunk and converts them with one table lookup per value; the same
// errors as the generic path.
func (s *floatStream) nextBF16ToF16(lo, hi int) error {
	m := hi - lo
	raw := s.input(2 * m)
	s.out = grow(s.out, 2*m)
	out := s.out
	var mu sync.Mutex
	var readErr error
	bad, overflow := -1, false
	if err := s.c.parallel(s.ctx, m, func(a, b int) {
		if _, err := s.d.ReadAt(raw[2*a:2*b], int64(2*(lo+a))); err != nil {
			mu.Lock()
			readErr = cmp.Or(readErr, err)
			mu.Unlock()
			return
		}
		i, of := encodeBF16ToF16(out[2*a:2*b], raw[2*a:2*b])
		if i < 0 && !of {
			return
		}
		mu.Lock()
		if i >= 0 && (bad < 0 || a+i < bad) {
			bad = a + i
		}
		overflow = overflow || of
		mu.Unlock()
	}); err != nil {
		return err
	}
	if readErr != nil {
		return readErr
	}
	if bad >= 0 {
		v := quantize.BF16ToF32(binary.LittleEndian.Uint16(raw[2*bad:]))
		return fmt.Errorf("tensor %s: non-finite value %v at element %d; the checkpoint is damaged", s.t.HFName, v, lo+bad)
	}
	if overflow {
		var maxAbs float32
		for i := 0; i < m; i++ {
			maxAbs = max(maxAbs, float32(math.Abs(float64(quantize.BF16ToF32(binary.LittleEndian.Uint16(raw[2*i:]))))))
		}
		return fmt.Errorf("tensor %s: max |value| %g exceeds the F16 range (65504); use --outtype bf16 or f32", s.t.HFName, maxAbs)
	}
	s.pend = out
	s.pos = hi
	return nil
}
