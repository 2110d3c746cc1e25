package hf

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"path/filepath"
	"sort"

	"github.com/bitnet-convert/bitnet-convert/internal/fsutil"
)

// DType is a safetensors dtype string as it appears in the header.
type DType string

// The safetensors dtypes. Only BF16, F16, F32 (decoded by Float32s) and U8
// (packed ternary weights, read as raw bytes) are supported by the converter;
// the others are recognised so that their byte ranges can be checked, and
// reading them is an error naming the tensor and dtype.
const (
	BF16 DType = "BF16"
	F16  DType = "F16"
	F32  DType = "F32"
	U8   DType = "U8"
)

// dtypeSizes gives the element size in bytes of every safetensors dtype
// (safetensors/src/tensor.rs Dtype::size).
var dtypeSizes = map[DType]uint64{
	"BOOL": 1, "U8": 1, "I8": 1, "F8_E5M2": 1, "F8_E4M3": 1,
	"I16": 2, "U16": 2, "F16": 2, "BF16": 2,
	"I32": 4, "U32": 4, "F32": 4,
	"I64": 8, "U64": 8, "F64": 8,
}

// Size returns the element size in bytes, or 0 for an unknown dtype.
func (d DType) Size() uint64 { return dtypeSizes[d] }

// Supported reports whether the converter can read tensors of this dtype
// (BF16, F16, F32, U8).
func (d DType) Supported() bool { return d == BF16 || d == F16 || d == F32 || d == U8 }

// MaxHeaderBytes bounds the JSON header length of a safetensors file (the
// reference implementation's limit is 100 MB); the length is checked against
// this bound and the file size before anything is allocated.
const MaxHeaderBytes = 100 << 20

// TensorRef locates one tensor of a checkpoint.
type TensorRef struct {
	// Name is the HF tensor name, e.g. "model.layers.0.mlp.up_proj.weight".
	Name string
	// DType is the safetensors dtype.
	DType DType
	// Shape is in HF order ([out, in] for a linear weight); [] for a 0-d
	// tensor, which has one element.
	Shape []uint64
	// File is the base name of the shard holding the tensor (relative to
	// the checkpoint directory).
	File string
	// Offset is the absolute byte offset of the tensor data in File
	// (8 + header length + data_offsets[0]); it need not be aligned.
	Offset uint64
	// Size is the data length in bytes (elements × dtype size).
	Size uint64
}

// NElements returns the number of elements (the product of Shape; 1 for a
// 0-d tensor). The product was checked for overflow when the header was read.
func (r TensorRef) NElements() uint64 {
	n := uint64(1)
	for _, d := range r.Shape {
		n *= d
	}
	return n
}

// Header is the parsed header of one safetensors file.
type Header struct {
	// Tensors in lexicographic name order (the order safetensors' keys()
	// gives, spec §5.4).
	Tensors []TensorRef
	// Metadata is the optional "__metadata__" string map.
	Metadata map[string]string
	// DataStart is 8 + the header length: where data_offsets are counted
	// from. It may be odd.
	DataStart uint64
}

// ReadHeader reads and validates the header of the safetensors file at path.
// TensorRef.File is set to the base name of path.
func ReadHeader(path string) (*Header, error) {
	f, err := fsutil.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	return ParseHeader(f, fi.Size(), filepath.Base(path))
}

// ParseHeader parses a safetensors file of size bytes read through r; name
// is used in errors and in TensorRef.File. It checks: header length within
// the file and MaxHeaderBytes; the header is one JSON object with no
// duplicate keys; every tensor has a known dtype, non-negative shape and
// data_offsets [begin, end] with begin ≤ end inside the data section; the
// byte length equals elements × dtype size (64-bit, overflow checked); and
// no two tensors overlap.
func ParseHeader(r io.ReaderAt, size int64, name string) (*Header, error) {
	if size < 8 {
		return nil, fmt.Errorf("safetensors %s: file is %d bytes, shorter than the 8-byte header length", name, size)
	}
	var lenBuf [8]byte
	if _, err := r.ReadAt(lenBuf[:], 0); err != nil {
		return nil, fmt.Errorf("safetensors %s: read header length: %w", name, err)
	}
	n := binary.LittleEndian.Uint64(lenBuf[:])
	if n > uint64(size)-8 {
		return nil, fmt.Errorf("safetensors %s: header length %d runs past the end of the %d-byte file (truncated or not a safetensors file)", name, n, size)
	}
	if n > MaxHeaderBytes {
		return nil, fmt.Errorf("safetensors %s: header length %d exceeds the %d-byte limit", name, n, MaxHeaderBytes)
	}
	if n < 2 {
		return nil, fmt.Errorf("safetensors %s: header length %d is too short for a JSON object", name, n)
	}
	buf := make([]byte, n)
	if _, err := r.ReadAt(buf, 8); err != nil {
		return nil, fmt.Errorf("safetensors %s: read header: %w", name, err)
	}
	h := &Header{DataStart: 8 + n}
	dataLen := uint64(size) - h.DataStart
	if err := parseHeaderJSON(buf, name, dataLen, h); err != nil {
		return nil, err
	}
	return h, nil
}

type rawTensor struct {
	DType       DType     `json:"dtype"`
	Shape       *[]uint64 `json:"shape"`
	DataOffsets *[]uint64 `json:"data_offsets"`
}

func parseHeaderJSON(buf []byte, name string, dataLen uint64, h *Header) error {
	dec := json.NewDecoder(bytes.NewReader(buf))
	bad := func(format string, args ...any) error {
		return fmt.Errorf("safetensors %s: header: "+format, append([]any{name}, args...)...)
	}
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return bad("not a JSON object")
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return bad("%v", err)
		}
		key := tok.(string) // object keys are always strings
		if seen[key] {
			return bad("key %q appears twice", key)
		}
		seen[key] = true
		if key == "__metadata__" {
			var md map[string]string
			if err := dec.Decode(&md); err != nil {
				return bad("__metadata__ is not a map of strings: %v", err)
			}
			h.Metadata = md
			continue
		}
		var rt rawTensor
		if err := dec.Decode(&rt); err != nil {
			var ute *json.UnmarshalTypeError
			if errors.As(err, &ute) && (ute.Field == "shape" || ute.Field == "data_offsets") {
				return bad("tensor %q: %s must be a list of non-negative integers (have %s); fix or re-save the checkpoint", key, ute.Field, ute.Value)
			}
			return bad("tensor %q: %v", key, err)
		}
		ref, err := checkTensor(key, rt, dataLen)
		if err != nil {
			return bad("%v", err)
		}
		ref.File = name
		ref.Offset += h.DataStart
		h.Tensors = append(h.Tensors, ref)
	}
	if _, err := dec.Token(); err != nil {
		return bad("%v", err)
	}
	// Only white space may follow (writers pad with spaces).
	if off := dec.InputOffset(); len(bytes.TrimLeft(buf[off:], " \t\r\n")) != 0 {
		return bad("data after the JSON object")
	}
	// Overlap check in data order.
	byOff := make([]TensorRef, len(h.Tensors))
	copy(byOff, h.Tensors)
	sort.Slice(byOff, func(i, j int) bool { return byOff[i].Offset < byOff[j].Offset })
	for i := 1; i < len(byOff); i++ {
		p, c := byOff[i-1], byOff[i]
		if c.Offset < p.Offset+p.Size {
			return bad("tensors %q and %q overlap", p.Name, c.Name)
		}
	}
	sort.Slice(h.Tensors, func(i, j int) bool { return h.Tensors[i].Name < h.Tensors[j].Name })
	return nil
}

// checkTensor validates one header entry; the returned Offset is relative
// to the data section.
func checkTensor(name string, rt rawTensor, dataLen uint64) (TensorRef, error) {
	if rt.DType == "" || rt.Shape == nil || rt.DataOffsets == nil {
		return TensorRef{}, fmt.Errorf("tensor %q needs dtype, shape and data_offsets", name)
	}
	es := rt.DType.Size()
	if es == 0 {
		return TensorRef{}, fmt.Errorf("tensor %q has unknown dtype %q", name, rt.DType)
	}
	offs := *rt.DataOffsets
	if len(offs) != 2 {
		return TensorRef{}, fmt.Errorf("tensor %q: data_offsets has %d entries, want 2", name, len(offs))
	}
	begin, end := offs[0], offs[1]
	if begin > end {
		return TensorRef{}, fmt.Errorf("tensor %q: data_offsets [%d, %d] are reversed", name, begin, end)
	}
	if end > dataLen {
		return TensorRef{}, fmt.Errorf("tensor %q: data_offsets end %d is beyond the %d-byte data section (file truncated?)", name, end, dataLen)
	}
	nbytes := es
	shape := append([]uint64{}, (*rt.Shape)...)
	for _, d := range shape {
		hi, lo := bits.Mul64(nbytes, d)
		if hi != 0 {
			return TensorRef{}, fmt.Errorf("tensor %q: shape %v × %d bytes overflows 64 bits", name, shape, es)
		}
		nbytes = lo
	}
	if nbytes != end-begin {
		return TensorRef{}, fmt.Errorf("tensor %q: %s shape %v needs %d bytes but data_offsets span %d", name, rt.DType, shape, nbytes, end-begin)
	}
	return TensorRef{Name: name, DType: rt.DType, Shape: shape, Offset: begin, Size: nbytes}, nil
}

// errShortWrite reports a WriteTensor.Data callback that wrote the wrong
// number of bytes.
var errShortWrite = errors.New("wrong number of bytes written")
