package torchpt

import (
	"bytes"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"math/bits"
	"os"
	"sort"
	"strconv"
	"strings"
)

// DType is a tensor element type as torch pickles it: the storage class
// torch.<Name>Storage and its element size in bytes.
type DType struct {
	storage string
	size    int
}

// The element types of the checkpoints this package writes and reads.
var (
	BFloat16 = DType{"BFloat16Storage", 2}
	Float16  = DType{"HalfStorage", 2}
	Float32  = DType{"FloatStorage", 4}
	Int8     = DType{"CharStorage", 1}
	Uint8    = DType{"ByteStorage", 1}
	Int32    = DType{"IntStorage", 4}
	Int64    = DType{"LongStorage", 8}
)

var dtypes = []DType{BFloat16, Float16, Float32, Int8, Uint8, Int32, Int64}

func dtypeByStorage(name string) (DType, bool) {
	for _, d := range dtypes {
		if d.storage == name {
			return d, true
		}
	}
	return DType{}, false
}

// String is torch's dtype name ("bfloat16", "int8", …).
func (d DType) String() string {
	switch d {
	case BFloat16:
		return "bfloat16"
	case Float16:
		return "float16"
	case Float32:
		return "float32"
	case Int8:
		return "int8"
	case Uint8:
		return "uint8"
	case Int32:
		return "int32"
	case Int64:
		return "int64"
	}
	return "unknown"
}

// Size is the element size in bytes.
func (d DType) Size() int { return d.size }

// Tensor is one entry of a state dict to write: a contiguous tensor of the
// given shape (torch's size, outermost first) whose Data callback writes its
// NumElements()·DType.Size() bytes, little-endian, row-major.
type Tensor struct {
	Name  string
	DType DType
	Shape []int64
	Data  func(w io.Writer) error
}

// NumElements is the product of the shape (1 for a 0-d tensor).
func (t *Tensor) NumElements() int64 {
	n := int64(1)
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// Bytes is the storage size in bytes.
func (t *Tensor) Bytes() int64 { return t.NumElements() * int64(t.DType.size) }

// ArchiveName is the directory torch.save puts the records under for a file
// path: its base name without the extension (PyTorchStreamWriter's
// basename), "archive" when that is empty.
func ArchiveName(path string) string {
	base := path[strings.LastIndexAny(path, `/\`)+1:]
	if i := strings.LastIndexByte(base, '.'); i >= 0 {
		base = base[:i]
	}
	if base == "" {
		return "archive"
	}
	return base
}

// Write writes the state dict ts (in this order) as a PyTorch zip
// checkpoint with records under archive/ to w, which must be at offset 0
// (nothing is read back or patched: w may be a pipe). The storage of ts[i] has key i; data records are written in the
// string order of the keys, as torch.save does, so ts[i].Data is called in
// that order. Errors: a name or shape torch cannot hold, a Data callback's
// error or a wrong byte count.
func Write(w io.Writer, archive string, ts []Tensor) error { return write(w, archive, ts, true) }

// write is Write; byteorder false leaves out the byteorder record, as
// torch < 2.0 (Debian's 1.13) does, for byte-for-byte comparison with files
// it wrote.
func write(w io.Writer, archive string, ts []Tensor, byteorder bool) error {
	seen := map[string]bool{}
	for _, t := range ts {
		if seen[t.Name] {
			return fmt.Errorf("tensor %s: duplicate name", t.Name)
		}
		seen[t.Name] = true
		if t.DType.size == 0 {
			return fmt.Errorf("tensor %s: no dtype", t.Name)
		}
		n := int64(1)
		for _, d := range t.Shape {
			hi, lo := bits.Mul64(uint64(n), uint64(d))
			if d < 0 || hi != 0 || lo > math.MaxInt64/8 {
				return fmt.Errorf("tensor %s: shape %v overflows", t.Name, t.Shape)
			}
			n = int64(lo)
		}
	}
	z := newZipWriter(w)
	pkl := pickleStateDict(ts)
	if err := z.record(archive+"/data.pkl", uint64(len(pkl)), rawData(pkl)); err != nil {
		return err
	}
	if byteorder {
		if err := z.record(archive+"/byteorder", 6, rawData([]byte("little"))); err != nil {
			return err
		}
	}
	keys := make([]string, len(ts))
	for i := range ts {
		keys[i] = strconv.Itoa(i)
	}
	sort.Strings(keys)
	for _, k := range keys {
		i, _ := strconv.Atoi(k)
		t := &ts[i]
		if err := z.record(archive+"/data/"+k, uint64(t.Bytes()), t.Data); err != nil {
			return fmt.Errorf("tensor %s: %w", t.Name, err)
		}
	}
	if err := z.record(archive+"/version", 2, rawData([]byte("3\n"))); err != nil {
		return err
	}
	return z.close()
}

func rawData(b []byte) func(io.Writer) error {
	return func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	}
}

// TensorInfo is one tensor of a read checkpoint.
type TensorInfo struct {
	Name   string
	DType  DType
	Shape  []int64
	Stride []int64
	// Offset is the storage offset in elements; Key names the storage
	// record data/<Key>.
	Offset int64
	Key    string
}

// File is a parsed checkpoint: its tensors in dict order and the records.
type File struct {
	// Archive is the records' directory name.
	Archive string
	// Records lists the record names (without the archive prefix) in
	// central-directory order.
	Records []string
	Tensors []TensorInfo
	r       io.ReaderAt
	recs    map[string]zipRecord
}

// Open reads the checkpoint at path (see Parse); the file stays open until
// Close.
func Open(path string) (*File, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := fh.Stat()
	if err != nil {
		fh.Close()
		return nil, err
	}
	f, err := Parse(fh, st.Size())
	if err != nil {
		fh.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

// Close closes the file Open opened (nothing for Parse).
func (f *File) Close() error {
	if c, ok := f.r.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// maxPickle bounds data.pkl (a 30-layer state dict's is ~40 kB).
const maxPickle = 64 << 20

// Parse reads the zip directory of r (size bytes), unpickles data.pkl and
// checks every tensor against its storage record (the storage must hold
// offset + the tensor's extent). Errors wrap ErrFormat.
func Parse(r io.ReaderAt, size int64) (*File, error) {
	recs, err := readZip(r, size)
	if err != nil {
		return nil, err
	}
	f := &File{r: r, recs: map[string]zipRecord{}}
	var pkl *zipRecord
	for i := range recs {
		name := recs[i].name
		if strings.HasSuffix(name, "/data.pkl") && strings.Count(name, "/") == 1 && pkl == nil {
			f.Archive = strings.TrimSuffix(name, "/data.pkl")
			pkl = &recs[i]
		}
	}
	if pkl == nil {
		return nil, formatErr("no <archive>/data.pkl record")
	}
	for _, rec := range recs {
		rel, ok := strings.CutPrefix(rec.name, f.Archive+"/")
		if !ok {
			return nil, formatErr("record %s is outside the archive directory %s/", rec.name, f.Archive)
		}
		if _, dup := f.recs[rel]; dup {
			return nil, formatErr("record %s appears twice", rec.name)
		}
		f.recs[rel] = rec
		f.Records = append(f.Records, rel)
	}
	if pkl.size > maxPickle {
		return nil, formatErr("data.pkl is %d bytes (limit %d)", pkl.size, maxPickle)
	}
	data, err := f.Record("data.pkl")
	if err != nil {
		return nil, err
	}
	obj, err := unpickle(data)
	if err != nil {
		return nil, err
	}
	d, ok := obj.(*pyDict)
	if !ok {
		return nil, formatErr("data.pkl holds a %T, not a dict of tensors", obj)
	}
	names := map[string]bool{}
	for i, k := range d.keys {
		name, ok := k.(string)
		if !ok {
			return nil, formatErr("dict key %d is a %T, not a string", i, k)
		}
		t, ok := d.vals[i].(*pyTensor)
		if !ok {
			return nil, formatErr("entry %s is a %T, not a tensor", name, d.vals[i])
		}
		if names[name] {
			return nil, formatErr("entry %s appears twice", name)
		}
		names[name] = true
		rec, ok := f.recs["data/"+t.storage.key]
		if !ok {
			return nil, formatErr("tensor %s: no record data/%s", name, t.storage.key)
		}
		elem := uint64(t.storage.dtype.size)
		if hi, lo := bits.Mul64(uint64(t.storage.numel), elem); hi != 0 || lo != rec.size {
			return nil, formatErr("tensor %s: storage data/%s has %d bytes, want %d elements of %d", name, t.storage.key, rec.size, t.storage.numel, elem)
		}
		// extent: offset + Σ (size_i − 1)·stride_i + 1 elements (none for an empty tensor)
		extent, empty := uint64(t.offset), false
		for j, n := range t.shape {
			if n == 0 {
				empty = true
				break
			}
			hi, lo := bits.Mul64(uint64(n-1), uint64(t.stride[j]))
			if hi != 0 || lo > math.MaxInt64-extent {
				return nil, formatErr("tensor %s: shape %v stride %v overflows", name, t.shape, t.stride)
			}
			extent += lo
		}
		if !empty && extent+1 > uint64(t.storage.numel) {
			return nil, formatErr("tensor %s: shape %v stride %v offset %d exceeds its storage of %d elements", name, t.shape, t.stride, t.offset, t.storage.numel)
		}
		f.Tensors = append(f.Tensors, TensorInfo{Name: name, DType: t.storage.dtype, Shape: t.shape, Stride: t.stride, Offset: t.offset, Key: t.storage.key})
	}
	return f, nil
}

// Record returns the bytes of the record rel (a name relative to the
// archive directory, e.g. "version"), checked against its CRC-32.
func (f *File) Record(rel string) ([]byte, error) {
	rec, ok := f.recs[rel]
	if !ok {
		return nil, fmt.Errorf("no record %s/%s", f.Archive, rel)
	}
	if rec.size > math.MaxInt32 {
		return nil, fmt.Errorf("record %s/%s: %d bytes is too large to read at once", f.Archive, rel, rec.size)
	}
	b := make([]byte, rec.size)
	if _, err := f.r.ReadAt(b, int64(rec.dataStart)); err != nil && !(err == io.EOF && len(b) == 0) {
		return nil, fmt.Errorf("record %s/%s: %w", f.Archive, rel, err)
	}
	if crc32.ChecksumIEEE(b) != rec.crc {
		return nil, formatErr("record %s/%s: CRC-32 mismatch", f.Archive, rel)
	}
	return b, nil
}

// Tensor returns the tensor called name.
func (f *File) Tensor(name string) (TensorInfo, bool) {
	for _, t := range f.Tensors {
		if t.Name == name {
			return t, true
		}
	}
	return TensorInfo{}, false
}

// Contiguous reports whether t's strides are the row-major ones of its
// shape.
func (t TensorInfo) Contiguous() bool {
	s := contiguousStrides(t.Shape)
	for i := range s {
		if t.Shape[i] != 1 && s[i] != t.Stride[i] {
			return false
		}
	}
	return true
}

// NumElements is the product of the shape.
func (t TensorInfo) NumElements() int64 {
	n := int64(1)
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// Section returns a reader of the bytes of the contiguous tensor name (its
// elements row-major, little-endian). The CRC is not checked (use TensorData
// for that). Errors: no such tensor, a non-contiguous tensor.
func (f *File) Section(name string) (*io.SectionReader, error) {
	t, ok := f.Tensor(name)
	if !ok {
		return nil, fmt.Errorf("no tensor %s", name)
	}
	if !t.Contiguous() {
		return nil, fmt.Errorf("tensor %s: shape %v stride %v is not contiguous", name, t.Shape, t.Stride)
	}
	rec := f.recs["data/"+t.Key]
	es := int64(t.DType.size)
	return io.NewSectionReader(f.r, int64(rec.dataStart)+t.Offset*es, t.NumElements()*es), nil
}

// TensorData returns the bytes of the contiguous tensor name, after checking
// its storage record's CRC-32.
func (f *File) TensorData(name string) ([]byte, error) {
	t, ok := f.Tensor(name)
	if !ok {
		return nil, fmt.Errorf("no tensor %s", name)
	}
	if !t.Contiguous() {
		return nil, fmt.Errorf("tensor %s: shape %v stride %v is not contiguous", name, t.Shape, t.Stride)
	}
	all, err := f.Record("data/" + t.Key)
	if err != nil {
		return nil, err
	}
	es := int64(t.DType.size)
	return bytes.Clone(all[t.Offset*es : (t.Offset+t.NumElements())*es]), nil
}
