package format

import (
	"encoding/binary"
	"math"
	"runtime/debug"
	"sync"
)

// parallelRows is the number of rows one goroutine encodes or decodes at a
// time; a multiple of 4 (the x86-1x4 row group).
const parallelRows = 64

// splittable reports whether f's data is its rows back to back (so a range
// of rows is a tensor of its own), with a per-tensor tail when tail is set
// (Spec.ParallelRows and Spec.Scale of the type table).
func splittable(f Format) (ok, tail bool) {
	s, found := SpecOf(f.Type())
	if !found || !s.ParallelRows {
		return false, false
	}
	return true, s.Scale == ScaleF32Tensor
}

// chunks runs fn over row ranges [r0, r1) of m rows on up to threads
// goroutines and returns the first error. A panic in fn (a fault in a
// mapped input that shrank, under debug.SetPanicOnFault, defect H1) is
// re-raised in the caller.
func chunks(m, threads int, fn func(r0, r1 int) error) error {
	n := (m + parallelRows - 1) / parallelRows
	next := make(chan int, n)
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		first    error
		panicked any
	)
	for w := 0; w < min(threads, n); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			debug.SetPanicOnFault(true)
			defer func() {
				if p := recover(); p != nil {
					mu.Lock()
					if panicked == nil {
						panicked = p
					}
					mu.Unlock()
				}
			}()
			for c := range next {
				r0 := c * parallelRows
				if err := fn(r0, min(m, r0+parallelRows)); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	if panicked != nil {
		panic(panicked)
	}
	return first
}

// groupScales returns the scales of rows [r0, r1).
func groupScales(f Format, scales []float32, k, r0, r1 int) []float32 {
	g := f.ScaleGroup(k)
	if g == 0 {
		return scales
	}
	return scales[r0*k/g : r1*k/g]
}

// EncodeParallel is f.Encode split over up to threads goroutines by ranges
// of whole rows; the bytes are identical to Encode's for any thread count.
// Formats whose layout is not row by row (TL1, TL2) run Encode.
func EncodeParallel(f Format, dst []byte, codes []int8, scales []float32, k, m, threads int) error {
	ok, tail := splittable(f)
	if !ok || threads <= 1 || m <= parallelRows {
		return f.Encode(dst, codes, scales, k, m)
	}
	if err := checkLens(f, len(codes), len(dst), k, m, len(scales)); err != nil {
		return err
	}
	nb, _ := f.Bytes(k, m)
	if tail {
		rowB := k / 4
		// The tail (scale and pad) once; each chunk through a scratch
		// buffer so its own tail does not overwrite the next rows.
		binary.LittleEndian.PutUint32(dst[m*rowB:], math.Float32bits(scales[0]))
		clear(dst[m*rowB+4 : nb])
		return chunks(m, threads, func(r0, r1 int) error {
			sub, _ := f.Bytes(k, r1-r0)
			buf := make([]byte, sub)
			if err := f.Encode(buf, codes[r0*k:r1*k], scales, k, r1-r0); err != nil {
				return err
			}
			copy(dst[r0*rowB:r1*rowB], buf)
			return nil
		})
	}
	rowB := nb / m
	return chunks(m, threads, func(r0, r1 int) error {
		return f.Encode(dst[r0*rowB:r1*rowB], codes[r0*k:r1*k], groupScales(f, scales, k, r0, r1), k, r1-r0)
	})
}

// DecodeParallel is f.Decode split over up to threads goroutines by ranges
// of whole rows, with the same result.
func DecodeParallel(f Format, codes []int8, data []byte, k, m, threads int) ([]float32, error) {
	ok, tail := splittable(f)
	if !ok || threads <= 1 || m <= parallelRows {
		return f.Decode(codes, data, k, m)
	}
	if err := checkLens(f, len(codes), len(data), k, m, -1); err != nil {
		return nil, err
	}
	nb, _ := f.Bytes(k, m)
	if tail {
		rowB := k / 4
		sc, err := f.Scales(data, k, m)
		if err != nil {
			return nil, err
		}
		t := data[m*rowB : nb]
		err = chunks(m, threads, func(r0, r1 int) error {
			buf := make([]byte, 0, (r1-r0)*rowB+len(t))
			buf = append(append(buf, data[r0*rowB:r1*rowB]...), t...)
			_, err := f.Decode(codes[r0*k:r1*k], buf, k, r1-r0)
			return err
		})
		return sc, decodeError(f, codes, data, k, m, err)
	}
	rowB := nb / m
	sc := make([]float32, NumScales(f, k, m))
	err := chunks(m, threads, func(r0, r1 int) error {
		s, err := f.Decode(codes[r0*k:r1*k], data[r0*rowB:r1*rowB], k, r1-r0)
		copy(groupScales(f, sc, k, r0, r1), s)
		return err
	})
	return sc, decodeError(f, codes, data, k, m, err)
}

// decodeError is nil for a nil err; otherwise the error of a whole-tensor
// f.Decode, which names rows of the tensor rather than of a row range.
func decodeError(f Format, codes []int8, data []byte, k, m int, err error) error {
	if err == nil {
		return nil
	}
	if _, e := f.Decode(codes, data, k, m); e != nil {
		return e
	}
	return err
}
