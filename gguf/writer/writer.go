package writer

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"

	"github.com/bitnet-convert/bitnet-convert/gguf"
)

// ErrTensorOrder is returned (wrapped) by WriteTensor when tensors are not
// written in the order of the tensor-info table, or twice.
var ErrTensorOrder = errors.New("tensor written out of order")

// ErrTensorSize is returned (wrapped) when the data given for a tensor is not
// exactly its NBytes long.
var ErrTensorSize = errors.New("tensor data has the wrong length")

// ErrMissingTensor is returned (wrapped) by Close when a tensor was never
// written.
var ErrMissingTensor = errors.New("tensor data not written")

// AlignmentKey is the metadata key that records a non-default alignment.
const AlignmentKey = "general.alignment"

// Writer streams the data section of a GGUF file whose header New has
// already written. It is not safe for concurrent use.
type Writer struct {
	w          io.Writer
	tensors    []gguf.TensorInfo
	nbytes     []uint64 // NBytes of each tensor
	align      uint64
	headerSize uint64
	dataSize   uint64
	next       int   // index of the next tensor to write
	err        error // sticky write error
}

// New validates kvs and tensors, computes every tensor's Offset (relative to
// the data section, each a multiple of the alignment, 64-bit), and writes the
// whole header to w: magic, version 3, counts, the KVs in the given order,
// the tensor infos, and zero padding to the alignment.
//
// alignment 0 means gguf.DefaultAlignment (32); it must be a power of two.
// general.alignment (u32) is appended to the KVs only when alignment != 32;
// it must then not also be in kvs (a general.alignment in kvs is accepted only
// when it equals the effective alignment of 32).
//
// Tensor shapes are GGUF ne order, at most gguf.MaxDims dimensions, each below
// 2^63; names are 1..gguf.MaxNameLen bytes (ggml's limits). The Offset fields
// of tensors are ignored; see Tensors for the computed ones.
//
// Errors (each names the key or tensor): gguf.ErrDuplicateKey,
// gguf.ErrDuplicateTensor, gguf.ErrValueType (bad value type or Go type
// mismatch), gguf.ErrUnknownType, gguf.ErrBlockSize, gguf.ErrOverflow, a bad
// alignment, and any error of w.
func New(w io.Writer, kvs []gguf.KV, tensors []gguf.TensorInfo, alignment uint64) (*Writer, error) {
	if alignment == 0 {
		alignment = gguf.DefaultAlignment
	}
	if alignment&(alignment-1) != 0 || alignment > math.MaxUint32 {
		return nil, fmt.Errorf("gguf writer: alignment %d is not a power of two below 2^32", alignment)
	}
	all := kvs
	if alignment != gguf.DefaultAlignment {
		all = append(append([]gguf.KV(nil), kvs...), gguf.KV{Key: AlignmentKey, Value: gguf.Uint32(uint32(alignment))})
	}
	seen := make(map[string]bool, len(all))
	for i, kv := range all {
		if err := checkKey(kv.Key); err != nil {
			return nil, fmt.Errorf("gguf writer: kv %d: %w", i, err)
		}
		if seen[kv.Key] {
			if kv.Key == AlignmentKey && i == len(all)-1 && alignment != gguf.DefaultAlignment {
				return nil, fmt.Errorf("gguf writer: kv %q: %w: pass the alignment as the argument of New only", kv.Key, gguf.ErrDuplicateKey)
			}
			return nil, fmt.Errorf("gguf writer: kv %q: %w", kv.Key, gguf.ErrDuplicateKey)
		}
		seen[kv.Key] = true
		if err := CheckValue(kv.Value); err != nil {
			return nil, fmt.Errorf("gguf writer: kv %q: %w", kv.Key, err)
		}
		if kv.Key == AlignmentKey {
			if a, ok := kv.Value.Uint(); !ok || a != alignment {
				return nil, fmt.Errorf("gguf writer: kv %q = %v disagrees with alignment %d: pass the alignment as the argument of New only", kv.Key, kv.Value, alignment)
			}
		}
	}

	wr := &Writer{w: w, align: alignment}
	wr.tensors = make([]gguf.TensorInfo, len(tensors))
	wr.nbytes = make([]uint64, len(tensors))
	names := make(map[string]bool, len(tensors))
	var off uint64
	for i, ti := range tensors {
		if err := checkTensorInfo(ti); err != nil {
			return nil, fmt.Errorf("gguf writer: tensor %d (%s): %w", i, ti.Name, err)
		}
		if names[ti.Name] {
			return nil, fmt.Errorf("gguf writer: tensor %d (%s): %w", i, ti.Name, gguf.ErrDuplicateTensor)
		}
		names[ti.Name] = true
		nb, err := gguf.NBytes(ti.Type, ti.Ne)
		if err != nil {
			return nil, fmt.Errorf("gguf writer: tensor %d (%s): %w", i, ti.Name, err)
		}
		padded, err := gguf.Pad(nb, alignment)
		if err != nil {
			return nil, fmt.Errorf("gguf writer: tensor %d (%s) of %d bytes: %w", i, ti.Name, nb, err)
		}
		end, carry := bits.Add64(off, padded, 0)
		if carry != 0 || end > math.MaxInt64 {
			return nil, fmt.Errorf("gguf writer: tensor %d (%s): data section: %w", i, ti.Name, gguf.ErrOverflow)
		}
		wr.tensors[i] = gguf.TensorInfo{Name: ti.Name, Type: ti.Type, Ne: append([]uint64(nil), ti.Ne...), Offset: off}
		wr.nbytes[i] = nb
		off = end
	}
	wr.dataSize = off

	// The header goes to w in pieces of about headerChunk bytes as it is
	// encoded, so a large vocabulary is never built in memory twice.
	hw := &headerWriter{w: w, b: make([]byte, 0, headerChunk+4096)}
	le := binary.LittleEndian
	hw.b = le.AppendUint32(hw.b, gguf.Magic)
	hw.b = le.AppendUint32(hw.b, gguf.Version)
	hw.b = le.AppendUint64(hw.b, uint64(len(wr.tensors)))
	hw.b = le.AppendUint64(hw.b, uint64(len(all)))
	for _, kv := range all {
		hw.b = appendString(hw.b, kv.Key)
		hw.b = le.AppendUint32(hw.b, uint32(kv.Value.Type))
		appendValue(hw, kv.Value)
		hw.spill()
	}
	for _, ti := range wr.tensors {
		hw.b = appendString(hw.b, ti.Name)
		hw.b = le.AppendUint32(hw.b, uint32(len(ti.Ne)))
		for _, d := range ti.Ne {
			hw.b = le.AppendUint64(hw.b, d)
		}
		hw.b = le.AppendUint32(hw.b, uint32(ti.Type))
		hw.b = le.AppendUint64(hw.b, ti.Offset)
		hw.spill()
	}
	size := hw.n + uint64(len(hw.b))
	hs, _ := gguf.Pad(size, alignment)
	hw.b = append(hw.b, make([]byte, hs-size)...)
	hw.flush()
	wr.headerSize = hs
	if _, end := bits.Add64(hs, wr.dataSize, 0); end != 0 {
		return nil, fmt.Errorf("gguf writer: file size: %w", gguf.ErrOverflow)
	}
	if hw.err != nil {
		return nil, fmt.Errorf("gguf writer: write header: %w", hw.err)
	}
	return wr, nil
}

func checkKey(key string) error {
	if key == "" {
		return errors.New("empty key")
	}
	if uint64(len(key)) > math.MaxInt32 {
		return fmt.Errorf("key of %d bytes is too long", len(key))
	}
	return nil
}

func checkTensorInfo(ti gguf.TensorInfo) error {
	if ti.Name == "" {
		return errors.New("empty tensor name")
	}
	if len(ti.Name) > gguf.MaxNameLen {
		return fmt.Errorf("name is %d bytes; ggml accepts at most %d", len(ti.Name), gguf.MaxNameLen)
	}
	if len(ti.Ne) > gguf.MaxDims {
		return fmt.Errorf("%d dimensions; ggml accepts at most %d", len(ti.Ne), gguf.MaxDims)
	}
	for j, d := range ti.Ne {
		if d > math.MaxInt64 {
			return fmt.Errorf("ne[%d] = %d: %w", j, d, gguf.ErrOverflow)
		}
	}
	if _, ok := ti.Type.Traits(); !ok {
		return fmt.Errorf("%w %d", gguf.ErrUnknownType, uint32(ti.Type))
	}
	if ti.Type == gguf.TypeMXFP4 {
		// Its id (39) would read back as TL2 in a BitNet file.
		return fmt.Errorf("type %s is read only: its id %d is TL2's in bitnet.cpp", ti.Type, ti.Type.ID())
	}
	if ti.Type == gguf.TypeQ2_0G128 || ti.Type.NeedsHadamard() {
		// Prism's layouts are read and named, never written
		// (gguf/layouts.go).
		return fmt.Errorf("type %s is read only: PrismML's fork layout (id %d)", ti.Type, ti.Type.ID())
	}
	return nil
}

// Tensors returns a copy of the tensor infos with their computed Offset
// (relative to the data section) filled in.
func (w *Writer) Tensors() []gguf.TensorInfo {
	out := make([]gguf.TensorInfo, len(w.tensors))
	for i, ti := range w.tensors {
		ti.Ne = append([]uint64(nil), ti.Ne...)
		out[i] = ti
	}
	return out
}

// HeaderSize is the size in bytes of everything before the data section
// (header, KVs, tensor infos and the padding to the alignment); it is the
// absolute file offset of the data section.
func (w *Writer) HeaderSize() uint64 { return w.headerSize }

// DataSize is the size in bytes of the data section, every tensor padded to
// the alignment. The finished file is HeaderSize()+DataSize() bytes long.
func (w *Writer) DataSize() uint64 { return w.dataSize }

// WriteTensor writes the data of tensor i followed by its zero padding.
// Tensors must be written in order 0, 1, 2, …, each once (ErrTensorOrder), and
// len(data) must equal the tensor's NBytes (ErrTensorSize); both errors name
// the tensor. After a write error of the underlying writer every later call
// returns that error.
func (w *Writer) WriteTensor(i int, data []byte) error {
	if err := w.begin(i, uint64(len(data))); err != nil {
		return err
	}
	if _, err := w.w.Write(data); err != nil {
		w.err = fmt.Errorf("gguf writer: write tensor %d (%s): %w", i, w.tensors[i].Name, err)
		return w.err
	}
	return w.finish(i)
}

// WriteTensorFrom is WriteTensor streaming the data from r: it copies exactly
// the tensor's NBytes bytes with io.CopyN (so a w implementing io.ReaderFrom,
// such as *os.File, gets the reader directly). A reader that ends early is an
// error wrapping ErrTensorSize and io.ErrUnexpectedEOF.
func (w *Writer) WriteTensorFrom(i int, r io.Reader) error {
	if err := w.begin(i, math.MaxUint64); err != nil {
		return err
	}
	nb := w.nbytes[i]
	if nb > math.MaxInt64 {
		w.err = fmt.Errorf("gguf writer: tensor %d (%s): %w", i, w.tensors[i].Name, gguf.ErrOverflow)
		return w.err
	}
	n, err := io.CopyN(w.w, r, int64(nb))
	if err == io.EOF {
		w.err = fmt.Errorf("gguf writer: tensor %d (%s): %w: got %d of %d bytes: %w", i, w.tensors[i].Name, ErrTensorSize, n, nb, io.ErrUnexpectedEOF)
		return w.err
	}
	if err != nil {
		w.err = fmt.Errorf("gguf writer: write tensor %d (%s): %w", i, w.tensors[i].Name, err)
		return w.err
	}
	return w.finish(i)
}

// WriteTensorChunks is WriteTensor for data that arrives in pieces: next is
// called for the next piece until tensor i's NBytes bytes have been written,
// and each piece is written to w as it is (no copy), then the padding. An
// error from next stops the tensor and is returned wrapped, with the tensor
// named (errors.Is finds it); a piece reaching past the tensor's size, or
// io.EOF before its end, is ErrTensorSize. Every failure is sticky, as for
// WriteTensor.
func (w *Writer) WriteTensorChunks(i int, next func() ([]byte, error)) error {
	if err := w.begin(i, math.MaxUint64); err != nil {
		return err
	}
	nb := w.nbytes[i]
	for done := uint64(0); done < nb; {
		b, err := next()
		switch {
		case err == io.EOF:
			w.err = fmt.Errorf("gguf writer: tensor %d (%s): %w: got %d of %d bytes: %w", i, w.tensors[i].Name, ErrTensorSize, done, nb, io.ErrUnexpectedEOF)
		case err != nil:
			w.err = fmt.Errorf("gguf writer: tensor %d (%s): %w", i, w.tensors[i].Name, err)
		case uint64(len(b)) > nb-done:
			w.err = fmt.Errorf("gguf writer: tensor %d (%s): %w: pieces reach %d bytes, want %d", i, w.tensors[i].Name, ErrTensorSize, done+uint64(len(b)), nb)
		}
		if w.err != nil {
			return w.err
		}
		if _, err := w.w.Write(b); err != nil {
			w.err = fmt.Errorf("gguf writer: write tensor %d (%s): %w", i, w.tensors[i].Name, err)
			return w.err
		}
		done += uint64(len(b))
	}
	return w.finish(i)
}

// begin checks the order and, unless n is MaxUint64, the length.
func (w *Writer) begin(i int, n uint64) error {
	if w.err != nil {
		return w.err
	}
	if i < 0 || i >= len(w.tensors) {
		return fmt.Errorf("gguf writer: tensor index %d: %w (the file has %d tensors)", i, ErrTensorOrder, len(w.tensors))
	}
	if i != w.next {
		want := "none (all written)"
		if w.next < len(w.tensors) {
			want = fmt.Sprintf("%d (%s)", w.next, w.tensors[w.next].Name)
		}
		return fmt.Errorf("gguf writer: tensor %d (%s): %w: next expected is %s", i, w.tensors[i].Name, ErrTensorOrder, want)
	}
	if n != math.MaxUint64 && n != w.nbytes[i] {
		return fmt.Errorf("gguf writer: tensor %d (%s) %s %v: %w: got %d bytes, want %d", i, w.tensors[i].Name, w.tensors[i].Type, w.tensors[i].Ne, ErrTensorSize, n, w.nbytes[i])
	}
	return nil
}

var zeros [256]byte

// finish writes the padding after tensor i.
func (w *Writer) finish(i int) error {
	nb := w.nbytes[i]
	padded, _ := gguf.Pad(nb, w.align) // checked in New
	for pad := padded - nb; pad > 0; {
		n := min(pad, uint64(len(zeros)))
		if _, err := w.w.Write(zeros[:n]); err != nil {
			w.err = fmt.Errorf("gguf writer: pad tensor %d (%s): %w", i, w.tensors[i].Name, err)
			return w.err
		}
		pad -= n
	}
	w.next++
	return nil
}

// Close reports an error naming the first tensor that was not written
// (ErrMissingTensor), or the sticky write error. It does not close the
// underlying writer.
func (w *Writer) Close() error {
	if w.err != nil {
		return w.err
	}
	if w.next < len(w.tensors) {
		return fmt.Errorf("gguf writer: tensor %d (%s): %w (%d of %d written)", w.next, w.tensors[w.next].Name, ErrMissingTensor, w.next, len(w.tensors))
	}
	return nil
}
