package verify

import (
	"fmt"

	"github.com/bitnet-convert/bitnet-convert/convert"
	"github.com/bitnet-convert/bitnet-convert/hf"
	"github.com/bitnet-convert/bitnet-convert/tensormap"
)

// sourceWeights reads a checkpoint's weights by GGUF name, one tensor at a
// time and without keeping any: projections as the ternary codes × scale
// an F32 conversion writes (convert.Source.Ternary; codes are one byte per
// weight), the token embedding and output head straight from the
// checkpoint's mapped bytes in row blocks (their pages released after each
// block, so a 128k-row embedding never sits in memory as float32), and
// everything else through convert.Source.Float32.
type sourceWeights struct {
	src  *convert.Source
	ckpt *hf.Checkpoint // the same directory, for row-level reads
	// block is blocks' float64 buffer, reused from one matrix to the
	// next: the reference asks for seven matrices a layer.
	block []float64
}

// openSourceWeights opens dir a second time for row-level reads beside src.
func openSourceWeights(src *convert.Source, dir string) (*sourceWeights, error) {
	ck, err := hf.Open(dir)
	if err != nil {
		return nil, err
	}
	return &sourceWeights{src: src, ckpt: ck}, nil
}

// Close unmaps the second view of the checkpoint.
func (s *sourceWeights) Close() error { return s.ckpt.Close() }

func (s *sourceWeights) shape(name string) ([]int, bool) {
	t, ok := s.src.Tensor(name)
	if !ok {
		return nil, false
	}
	out := make([]int, len(t.HFShape))
	for i, v := range t.HFShape {
		out[i] = int(v)
	}
	return out, true
}

func (s *sourceWeights) vector(name string) ([]float64, error) {
	v, err := s.src.Float32(name)
	if err != nil {
		return nil, err
	}
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out, nil
}

// direct reports whether name is a float embedding or output head, read
// from the mapped checkpoint row by row (no norm fix applies to those).
func (s *sourceWeights) direct(t convert.PlannedTensor) bool {
	return (t.Class == tensormap.Embedding || t.Class == tensormap.Output) && !t.Packed && len(t.HFShape) == 2 && t.Source.DType.IsFloat()
}

// floatRows calls fn with consecutive row blocks [lo, hi) of the float
// tensor name as float32 (HF row-major), at most maxElems values per block
// (at least one row); the checkpoint pages of each block are released after
// fn. buf is reused. A non-finite value is an error naming the element.
func (s *sourceWeights) floatRows(name string, maxElems int, fn func(lo, hi int, w []float32) error) error {
	t, ok := s.src.Tensor(name)
	if !ok {
		return fmt.Errorf("tensor %s has no source in the checkpoint", name)
	}
	if !s.direct(t) {
		v, err := s.src.Float32(name)
		if err != nil {
			return err
		}
		rows := int(t.HFShape[0])
		if len(t.HFShape) == 1 {
			rows = 1
		}
		return fn(0, rows, v)
	}
	d, err := s.ckpt.Read(t.Source)
	if err != nil {
		return err
	}
	defer d.Release()
	rows, cols := int(t.HFShape[0]), int(t.HFShape[1])
	es := int(d.Ref.DType.Size())
	if uint64(len(d.Raw)) != uint64(rows)*uint64(cols)*uint64(es) {
		return fmt.Errorf("tensor %s: %d bytes do not hold [%d, %d] %s values", t.HFName, len(d.Raw), rows, cols, d.Ref.DType)
	}
	per := max(1, maxElems/cols)
	buf := make([]float32, min(per, rows)*cols)
	for lo := 0; lo < rows; lo += per {
		hi := min(lo+per, rows)
		w := buf[:(hi-lo)*cols]
		if i := hf.DecodeFloats(w, d.Raw[lo*cols*es:hi*cols*es], d.Ref.DType); i >= 0 {
			return fmt.Errorf("tensor %s: non-finite value %v at element %d; the checkpoint is damaged", t.HFName, w[i], lo*cols+i)
		}
		err := fn(lo, hi, w)
		d.ReleaseRange(lo*cols*es, hi*cols*es)
		if err != nil {
			return err
		}
	}
	return nil
}

func (s *sourceWeights) rows(name string, ids []int32) ([]float64, error) {
	t, ok := s.src.Tensor(name)
	if !ok || len(t.HFShape) != 2 {
		return nil, fmt.Errorf("tensor %s is not a matrix of the checkpoint", name)
	}
	cols := int(t.HFShape[1])
	out := make([]float64, len(ids)*cols)
	if !s.direct(t) {
		v, err := s.src.Float32(name)
		if err != nil {
			return nil, err
		}
		for i, id := range ids {
			for j := 0; j < cols; j++ {
				out[i*cols+j] = float64(v[int(id)*cols+j])
			}
		}
		return out, nil
	}
	d, err := s.ckpt.Read(t.Source)
	if err != nil {
		return nil, err
	}
	defer d.Release()
	es := int(d.Ref.DType.Size())
	row := make([]float32, cols)
	for i, id := range ids {
		lo := int(id) * cols * es
		if id < 0 || lo+cols*es > len(d.Raw) {
			return nil, fmt.Errorf("tensor %s: row %d is out of range", t.HFName, id)
		}
		if j := hf.DecodeFloats(row, d.Raw[lo:lo+cols*es], d.Ref.DType); j >= 0 {
			return nil, fmt.Errorf("tensor %s: non-finite value %v in row %d; the checkpoint is damaged", t.HFName, row[j], id)
		}
		for j, v := range row {
			out[i*cols+j] = float64(v)
		}
	}
	return out, nil
}

func (s *sourceWeights) blocks(name string, maxElems int, fn func(lo, hi int, w []float64)) error {
	t, ok := s.src.Tensor(name)
	if !ok || len(t.HFShape) != 2 {
		return fmt.Errorf("tensor %s is not a matrix of the checkpoint", name)
	}
	rows, cols := int(t.HFShape[0]), int(t.HFShape[1])
	per := max(1, maxElems/cols)
	if n := min(per, rows) * cols; cap(s.block) < n {
		s.block = make([]float64, n)
	}
	buf := s.block[:min(per, rows)*cols]
	if t.Class == tensormap.Projection && !t.NotConverted {
		// A projection quantization_config.modules_to_not_convert lists
		// stays float (convert.PlannedTensor.NotConverted) and is read as
		// one below. The codes are the Source's buffer, valid until its next read;
		// fn only multiplies.
		// One scale per tensor (group 0), or per group of inputs for a
		// group-scaled checkpoint.
		codes, scales, group, err := s.src.TernaryGroupsView(name)
		if err != nil {
			return err
		}
		if group == 0 {
			group = len(codes)
		}
		for lo := 0; lo < rows; lo += per {
			hi := min(lo+per, rows)
			w := buf[:(hi-lo)*cols]
			for i, c := range codes[lo*cols : hi*cols] {
				w[i] = float64(c) * float64(scales[(lo*cols+i)/group])
			}
			fn(lo, hi, w)
		}
		return nil
	}
	return s.floatRows(name, maxElems, func(lo, hi int, v []float32) error {
		for r := lo; r < hi; r += per {
			e := min(r+per, hi)
			w := buf[:(e-r)*cols]
			for i, x := range v[(r-lo)*cols : (e-lo)*cols] {
				w[i] = float64(x)
			}
			fn(r, e, w)
		}
		return nil
	})
}
