package reader

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/internal/fsutil"
	"github.com/bitnet-convert/bitnet-convert/internal/osx"
)

// Sentinel errors, returned wrapped with the key, tensor or offset concerned.
var (
	// ErrBadMagic: the file does not start with "GGUF".
	ErrBadMagic = errors.New("not a GGUF file (bad magic)")
	// ErrVersion: a GGUF version other than 2 or 3 (v1 used 32-bit counts
	// and is not supported), or a big-endian file.
	ErrVersion = errors.New("unsupported GGUF version")
	// ErrTruncated: the header ends inside a field, or a count or length
	// claims more bytes than remain.
	ErrTruncated = errors.New("truncated or oversized field")
	// ErrAlignment: general.alignment is not a power of two, or a tensor
	// offset is not a multiple of it.
	ErrAlignment = errors.New("bad alignment")
	// ErrOutOfBounds: a tensor's data extends past the end of the file.
	ErrOutOfBounds = errors.New("tensor data beyond end of file")
	// ErrOverlap: two tensors' data ranges overlap.
	ErrOverlap = errors.New("tensor data overlaps another tensor")
	// ErrNoTensor: TensorData was asked for a name the file lacks.
	ErrNoTensor = errors.New("no such tensor")
)

// File is a parsed GGUF file. Its KVs and Tensors are plain Go values owned
// by the caller; TensorData slices share the mapped bytes, which stay valid
// until Close.
type File struct {
	// Version is the GGUF version (2 or 3).
	Version uint32
	// KVs holds the metadata in file order; arrays are decoded into Go slices
	// ([]string, []int32, []float32, []uint8, []bool, …).
	KVs []gguf.KV
	// Tensors holds the tensor infos in file order; Ne is GGUF order and
	// Offset is relative to the data section.
	Tensors []gguf.TensorInfo
	// Alignment is general.alignment, or gguf.DefaultAlignment (32) when
	// absent.
	Alignment uint64
	// DataOffset is the absolute file offset of the data section (the end of
	// the tensor infos rounded up to Alignment).
	DataOffset uint64
	// Layouts holds, per tensor name, the one-line note of a stored id
	// whose layout the data did not settle (gguf.ResolveLayout: "type 42:
	// layout ambiguous (…)" or "type 41: layout unknown (…)"); nil when
	// every id was settled.
	Layouts map[string]string

	data    []byte       // whole file
	mapping *osx.Mapping // nil for a File from Parse
	nbytes  []uint64
	kvIdx   map[string]int
	tensIdx map[string]int
}

// Open maps path read-only and parses it (see Parse). The mapping is released
// by Close. Errors name the path.
func Open(path string) (*File, error) { return open(path, false) }

// OpenInMemory reads the whole file at path into anonymous memory and
// parses it: llama.cpp's --no-mmap (osx.ReadIn: on Linux the bytes sit in
// 2 MiB pages, so a model's speed no longer depends on how the page cache
// holds the file). It needs the file's size in available memory besides
// the page cache's copy, and refuses a file larger than the memory the
// system reports available. Close frees the memory; Release does nothing.
// Errors name the path.
func OpenInMemory(path string) (*File, error) { return open(path, true) }

// open is Open, or OpenInMemory when inMemory.
func open(path string, inMemory bool) (*File, error) {
	fd, err := fsutil.Open(path)
	if err != nil {
		return nil, fmt.Errorf("gguf: %w", err) // *PathError names the path
	}
	defer fd.Close()
	st, err := fd.Stat()
	if err != nil {
		return nil, fmt.Errorf("gguf %s: %w", path, err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("gguf %s: not a regular file", path)
	}
	size := st.Size()
	if size < 24 {
		return nil, fmt.Errorf("gguf %s: file is %d bytes, shorter than a GGUF header: %w", path, size, ErrTruncated)
	}
	view := osx.Map
	if inMemory {
		// The magic first: a file that is no GGUF is reported as such,
		// not as too large for memory.
		var head [4]byte
		if _, err := fd.ReadAt(head[:], 0); err != nil {
			return nil, fmt.Errorf("gguf %s: read magic: %w", path, err)
		}
		if binary.LittleEndian.Uint32(head[:]) != gguf.Magic {
			return nil, fmt.Errorf("gguf %s: %w: starts with %q", path, ErrBadMagic, head[:])
		}
		view = osx.ReadIn
	}
	m, err := view(fd, size, path) // errors name path (and a size a 32-bit build cannot map)
	if err != nil {
		return nil, fmt.Errorf("gguf: %w", err)
	}
	f, err := Parse(m.Bytes())
	if err != nil {
		m.Close()
		return nil, fmt.Errorf("gguf %s: %w", path, err)
	}
	f.mapping = m
	return f, nil
}

// Close releases the mapping made by Open; TensorData slices must not be used
// afterwards. It is a no-op for a File from Parse, and safe to call twice.
func (f *File) Close() error {
	f.data = nil
	if f.mapping == nil {
		return nil
	}
	m := f.mapping
	f.mapping = nil
	if err := m.Close(); err != nil {
		return fmt.Errorf("gguf: unmap: %w", err)
	}
	return nil
}

// Release tells the operating system that the pages wholly inside b, a
// sub-slice of a TensorData result, are not needed for now
// (osx.Mapping.Release: madvise MADV_DONTNEED on Unix, VirtualUnlock on
// Windows): they leave the process's resident set and are read again from the
// file (usually the page cache) when touched. The bytes stay valid. It is
// only advice and does nothing for a File from Parse, after Close, or for b
// outside the file.
func (f *File) Release(b []byte) {
	if f.mapping != nil && f.data != nil {
		f.mapping.Release(b)
	}
}

// Parse parses a whole GGUF file held in data. The File keeps data (TensorData
// returns sub-slices of it); KVs and tensor infos are copied out. It never
// panics on bad input; every error says where it happened.
func Parse(data []byte) (*File, error) {
	d := &decoder{b: data}
	magic, err := d.u32()
	if err != nil {
		return nil, fmt.Errorf("read magic: %w", err)
	}
	if magic != gguf.Magic {
		return nil, fmt.Errorf("%w: starts with %q", ErrBadMagic, data[:4])
	}
	version, err := d.u32()
	if err != nil {
		return nil, fmt.Errorf("read version: %w", err)
	}
	switch {
	case version == 2 || version == 3:
	case version&0xFFFF == 0 && version != 0 && bits.ReverseBytes32(version) <= 3:
		return nil, fmt.Errorf("%w: version %d looks big-endian; only little-endian GGUF is supported", ErrVersion, bits.ReverseBytes32(version))
	default:
		return nil, fmt.Errorf("%w %d (want 2 or 3)", ErrVersion, version)
	}
	nTensors, err := d.u64()
	if err != nil {
		return nil, fmt.Errorf("read tensor count: %w", err)
	}
	nKV, err := d.u64()
	if err != nil {
		return nil, fmt.Errorf("read kv count: %w", err)
	}
	// Smallest encodings: a KV is a key length (8), a type (4) and at least
	// a 1-byte value; a tensor info is a name length (8), n_dims (4), a type
	// (4) and an offset (8).
	if nKV > d.remaining()/13 {
		return nil, fmt.Errorf("kv count %d: %w: only %d bytes follow", nKV, ErrTruncated, d.remaining())
	}
	if nTensors > d.remaining()/24 {
		return nil, fmt.Errorf("tensor count %d: %w: only %d bytes follow", nTensors, ErrTruncated, d.remaining())
	}

	f := &File{Version: version, data: data, Alignment: gguf.DefaultAlignment}
	f.KVs = make([]gguf.KV, 0, nKV)
	f.kvIdx = make(map[string]int, nKV)
	for i := uint64(0); i < nKV; i++ {
		key, err := d.str()
		if err != nil {
			return nil, fmt.Errorf("read kv %d: key: %w", i, err)
		}
		v, err := d.value()
		if err != nil {
			return nil, fmt.Errorf("read kv %d (%s): %w", i, Printable(key), err)
		}
		if _, dup := f.kvIdx[key]; dup {
			return nil, fmt.Errorf("read kv %d (%s): %w", i, Printable(key), gguf.ErrDuplicateKey)
		}
		f.kvIdx[key] = len(f.KVs)
		f.KVs = append(f.KVs, gguf.KV{Key: key, Value: v})
	}
	if v, ok := f.Get("general.alignment"); ok {
		a, ok := v.Uint()
		if !ok {
			// "32" or 32.0 is a power of two of the wrong type (H14).
			return nil, fmt.Errorf("general.alignment = %v has type %s: %w: want an unsigned integer power of two", v, v.Type, ErrAlignment)
		}
		if a == 0 || a&(a-1) != 0 || a > math.MaxUint32 {
			return nil, fmt.Errorf("general.alignment = %v: %w: want a power of two", v, ErrAlignment)
		}
		f.Alignment = a
	}
	// Every reader of the file keys on the architecture's name (the
	// hyper-parameters are {arch}.*); llama.cpp's loader too refuses a
	// general.architecture of another type (llama-model-loader.cpp,
	// get_key: "has wrong type").
	if v, ok := f.Get("general.architecture"); ok && v.Type != gguf.ValueString {
		return nil, fmt.Errorf("key general.architecture: a %s: %w: want a string such as bitnet; fix the GGUF metadata", v.Type, gguf.ErrValueType)
	}

	f.Tensors = make([]gguf.TensorInfo, 0, nTensors)
	f.nbytes = make([]uint64, 0, nTensors)
	f.tensIdx = make(map[string]int, nTensors)
	for i := uint64(0); i < nTensors; i++ {
		ti, err := d.tensorInfo()
		if err != nil {
			if ti.Name != "" {
				return nil, fmt.Errorf("read tensor info %d (%s): %w", i, Printable(ti.Name), err)
			}
			return nil, fmt.Errorf("read tensor info %d: %w", i, err)
		}
		if _, dup := f.tensIdx[ti.Name]; dup {
			return nil, fmt.Errorf("read tensor info %d (%s): %w", i, Printable(ti.Name), gguf.ErrDuplicateTensor)
		}
		if ti.Offset%f.Alignment != 0 {
			return nil, fmt.Errorf("read tensor info %d (%s): offset %d: %w: not a multiple of %d", i, Printable(ti.Name), ti.Offset, ErrAlignment, f.Alignment)
		}
		f.tensIdx[ti.Name] = len(f.Tensors)
		f.Tensors = append(f.Tensors, ti)
	}

	// The data section starts at the next multiple of the alignment. A file
	// without tensors may end before it (the padding is optional then).
	f.DataOffset, err = gguf.Pad(d.pos, f.Alignment)
	if err != nil {
		return nil, fmt.Errorf("data section offset: %w", err)
	}
	size := uint64(len(data))
	if len(f.Tensors) > 0 && f.DataOffset > size {
		return nil, fmt.Errorf("data section at %d: %w: file is %d bytes", f.DataOffset, ErrOutOfBounds, size)
	}
	avail := uint64(0)
	if f.DataOffset <= size {
		avail = size - f.DataOffset
	}
	// A type id that means different types in bitnet.cpp and mainline
	// ggml (39: TL2 or MXFP4) is decided per tensor from the arch and the
	// room its data has (gguf.ResolveCollision).
	f.resolveCollisions(avail)
	unknown := f.resolveLayouts(avail)
	for i, ti := range f.Tensors {
		if sz, ok := unknown[i]; ok {
			// No documented layout fits: the tensor is its span, named
			// by Layouts; nothing computes or converts it.
			f.nbytes = append(f.nbytes, sz)
			continue
		}
		nb, err := gguf.NBytes(ti.Type, ti.Ne)
		if err != nil {
			return nil, fmt.Errorf("read tensor info %d (%s): %w", i, Printable(ti.Name), err)
		}
		// ggml keeps sizes in size_t/int64 and pads them to the alignment;
		// a size that wraps there is an overflow (llama.cpp #26978).
		if _, perr := gguf.Pad(nb, f.Alignment); perr != nil || nb > math.MaxInt64 {
			return nil, fmt.Errorf("read tensor info %d (%s): %s %v is %d bytes: %w", i, Printable(ti.Name), ti.Type, ti.Ne, nb, gguf.ErrOverflow)
		}
		f.nbytes = append(f.nbytes, nb)
	}
	for i, ti := range f.Tensors {
		end, carry := bits.Add64(ti.Offset, f.nbytes[i], 0)
		if carry != 0 {
			return nil, fmt.Errorf("tensor %d (%s): offset %d + %d bytes: %w", i, Printable(ti.Name), ti.Offset, f.nbytes[i], gguf.ErrOverflow)
		}
		if end > avail {
			return nil, fmt.Errorf("tensor %d (%s): %w: bytes [%d, %d) of the data section, which holds %d", i, Printable(ti.Name), ErrOutOfBounds, ti.Offset, end, avail)
		}
	}
	if err := f.checkOverlap(); err != nil {
		return nil, err
	}
	return f, nil
}

// resolveCollisions replaces the type of every tensor whose stored id is
// ambiguous by the one gguf.ResolveCollision picks, given the bytes from its
// offset to the next tensor's (or to the end of the avail data bytes).
func (f *File) resolveCollisions(avail uint64) {
	var offs []uint64
	for i, ti := range f.Tensors {
		if !ti.Type.Ambiguous() {
			continue
		}
		if offs == nil {
			offs = make([]uint64, len(f.Tensors))
			for j, tj := range f.Tensors {
				offs[j] = tj.Offset
			}
			slices.Sort(offs)
		}
		span := uint64(0)
		if ti.Offset < avail {
			span = avail - ti.Offset
		}
		if k, _ := slices.BinarySearch(offs, ti.Offset+1); k < len(offs) {
			span = min(span, offs[k]-ti.Offset)
		}
		f.Tensors[i].Type = gguf.ResolveCollision(ti.Type, f.Arch(), ti.Ne, span)
	}
}

// spans returns, per tensor, the bytes from its offset to the next tensor's
// offset or to the end of the avail data bytes.
func (f *File) spans(avail uint64) []uint64 {
	offs := make([]uint64, len(f.Tensors))
	for j, tj := range f.Tensors {
		offs[j] = tj.Offset
	}
	slices.Sort(offs)
	out := make([]uint64, len(f.Tensors))
	for i, ti := range f.Tensors {
		span := uint64(0)
		if ti.Offset < avail {
			span = avail - ti.Offset
		}
		if k, _ := slices.BinarySearch(offs, ti.Offset+1); k < len(offs) {
			span = min(span, offs[k]-ti.Offset)
		}
		out[i] = span
	}
	return out
}

// resolveLayouts decides the layout of every tensor whose stored id has
// several documented layouts (gguf.ResolveLayout) from its span. A tensor
// that more than one layout fits takes the layout the file's settled
// tensors of the same id agree on (a file is written by one program); if
// they do not settle it, it keeps the id's mainline layout and Layouts
// names the doubt. It returns the span of each tensor no layout fits (its
// type becomes gguf.LayoutUnknown).
func (f *File) resolveLayouts(avail uint64) map[int]uint64 {
	var spans []uint64
	var unknown map[int]uint64
	settled := map[gguf.Type]map[gguf.Type]bool{}
	var doubtful []int
	for i, ti := range f.Tensors {
		if !ti.Type.HasLayouts() {
			continue
		}
		if spans == nil {
			spans = f.spans(avail)
		}
		t, note := gguf.ResolveLayout(ti.Type, ti.Ne, spans[i], f.Alignment)
		switch {
		case t.IsLayoutUnknown():
			if unknown == nil {
				unknown = map[int]uint64{}
			}
			unknown[i] = spans[i]
			f.note(ti.Name, note)
		case note != "":
			doubtful = append(doubtful, i)
			f.note(ti.Name, note)
		default:
			if settled[ti.Type] == nil {
				settled[ti.Type] = map[gguf.Type]bool{}
			}
			settled[ti.Type][t] = true
		}
		f.Tensors[i].Type = t
	}
	for _, i := range doubtful {
		ti := f.Tensors[i]
		if s := settled[ti.Type]; len(s) == 1 {
			for t := range s {
				f.Tensors[i].Type = t
			}
			delete(f.Layouts, ti.Name)
		}
	}
	return unknown
}

func (f *File) note(name, s string) {
	if f.Layouts == nil {
		f.Layouts = map[string]string{}
	}
	f.Layouts[name] = s
}

// checkOverlap sorts the tensors by offset and checks each non-empty one
// starts at or after the furthest end seen so far (zero-byte tensors overlap
// nothing).
func (f *File) checkOverlap() error {
	order := make([]int, 0, len(f.Tensors))
	for i := range f.Tensors {
		if f.nbytes[i] > 0 {
			order = append(order, i)
		}
	}
	sort.SliceStable(order, func(a, b int) bool { return f.Tensors[order[a]].Offset < f.Tensors[order[b]].Offset })
	last := -1 // the tensor reaching furthest so far
	for _, q := range order {
		if last >= 0 {
			p := f.Tensors[last]
			if pEnd := p.Offset + f.nbytes[last]; pEnd > f.Tensors[q].Offset {
				return fmt.Errorf("tensors %s [%d, %d) and %s [%d, %d): %w", Printable(p.Name), p.Offset, pEnd,
					Printable(f.Tensors[q].Name), f.Tensors[q].Offset, f.Tensors[q].Offset+f.nbytes[q], ErrOverlap)
			}
		}
		last = q
	}
	return nil
}

// Get returns the value of key and whether it is present.
func (f *File) Get(key string) (gguf.Value, bool) {
	i, ok := f.kvIdx[key]
	if !ok {
		return gguf.Value{}, false
	}
	return f.KVs[i].Value, true
}

// String returns the value of key when it is a string.
func (f *File) String(key string) (string, bool) {
	v, ok := f.Get(key)
	if !ok {
		return "", false
	}
	s, ok := v.V.(string)
	return s, ok
}

// Uint returns the value of key when it is a non-negative integer of any
// width (see gguf.Value.Uint).
func (f *File) Uint(key string) (uint64, bool) {
	v, ok := f.Get(key)
	if !ok {
		return 0, false
	}
	return v.Uint()
}

// Float returns the value of key when it is a float or integer scalar.
func (f *File) Float(key string) (float64, bool) {
	v, ok := f.Get(key)
	if !ok {
		return 0, false
	}
	return v.Float()
}

// Arch returns general.architecture, or "" when absent.
func (f *File) Arch() string {
	s, _ := f.String("general.architecture")
	return s
}

// Tensor returns the info of the tensor called name.
func (f *File) Tensor(name string) (gguf.TensorInfo, bool) {
	i, ok := f.tensIdx[name]
	if !ok {
		return gguf.TensorInfo{}, false
	}
	return f.Tensors[i], true
}

// TensorData returns the stored bytes of tensor name: exactly its NBytes
// bytes, a sub-slice of the file (no copy; capacity clipped so appends cannot
// touch the file). The bytes are read-only (a read-only mapping when from Open) and
// valid until Close. Errors: ErrNoTensor naming the tensor, or use after
// Close.
func (f *File) TensorData(name string) ([]byte, error) {
	i, ok := f.tensIdx[name]
	if !ok {
		return nil, fmt.Errorf("gguf: tensor %s: %w", name, ErrNoTensor)
	}
	if f.data == nil {
		return nil, fmt.Errorf("gguf: tensor %s: file is closed", name)
	}
	start := f.DataOffset + f.Tensors[i].Offset
	end := start + f.nbytes[i] // bounds checked in Parse
	return f.data[start:end:end], nil
}

// decoder reads little-endian fields from b, checking every length against
// what remains.
type decoder struct {
	b   []byte
	pos uint64
}

func (d *decoder) remaining() uint64 { return uint64(len(d.b)) - d.pos }

func (d *decoder) take(n uint64) ([]byte, error) {
	if n > d.remaining() {
		return nil, fmt.Errorf("%w: need %d bytes at offset %d, %d remain", ErrTruncated, n, d.pos, d.remaining())
	}
	p := d.b[d.pos : d.pos+n]
	d.pos += n
	return p, nil
}

func (d *decoder) u8() (uint8, error) {
	p, err := d.take(1)
	if err != nil {
		return 0, err
	}
	return p[0], nil
}

func (d *decoder) u16() (uint16, error) {
	p, err := d.take(2)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint16(p), nil
}

func (d *decoder) u32() (uint32, error) {
	p, err := d.take(4)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(p), nil
}

func (d *decoder) u64() (uint64, error) {
	p, err := d.take(8)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(p), nil
}

func (d *decoder) str() (string, error) {
	n, err := d.u64()
	if err != nil {
		return "", err
	}
	p, err := d.take(n)
	if err != nil {
		return "", fmt.Errorf("string of %d bytes: %w", n, err)
	}
	return string(p), nil
}

func (d *decoder) tensorInfo() (gguf.TensorInfo, error) {
	var ti gguf.TensorInfo
	name, err := d.str()
	if err != nil {
		return ti, fmt.Errorf("name: %w", err)
	}
	ti.Name = name
	nd, err := d.u32()
	if err != nil {
		return ti, fmt.Errorf("n_dims: %w", err)
	}
	if nd > gguf.MaxDims {
		return ti, fmt.Errorf("n_dims %d: more than ggml's %d", nd, gguf.MaxDims)
	}
	ti.Ne = make([]uint64, nd)
	for j := range ti.Ne {
		if ti.Ne[j], err = d.u64(); err != nil {
			return ti, fmt.Errorf("ne[%d]: %w", j, err)
		}
		if ti.Ne[j] > math.MaxInt64 {
			return ti, fmt.Errorf("ne[%d] = %d: %w", j, ti.Ne[j], gguf.ErrOverflow)
		}
	}
	t, err := d.u32()
	if err != nil {
		return ti, fmt.Errorf("type: %w", err)
	}
	ti.Type = gguf.Type(t)
	if _, ok := ti.Type.Traits(); !ok {
		return ti, fmt.Errorf("%w %d", gguf.ErrUnknownType, t)
	}
	if ti.Offset, err = d.u64(); err != nil {
		return ti, fmt.Errorf("offset: %w", err)
	}
	return ti, nil
}

// Quote is s Go-quoted for a message, as %q gives it, but through
// Printable when s is longer than 128 bytes: a string read from a file
// (an arch, a key) never makes a line longer than about 100 bytes.
func Quote(s string) string {
	if len(s) > 128 {
		return Printable(s)
	}
	return strconv.Quote(s)
}

// Printable returns a string read from a file (a key, a tensor name, an
// arch) for a message: unchanged when it is short (≤ 128 bytes), valid
// UTF-8 text without control characters, else Go-quoted (non-printables
// escaped) and cut to 64 bytes with the full length given, so a damaged
// length field that swallows binary data gives one readable line, not
// kilobytes of raw bytes. The empty string is returned as "".
func Printable(s string) string {
	if s != "" && len(s) <= 128 && utf8.ValidString(s) && !strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return s
	}
	if len(s) > 64 {
		return fmt.Sprintf("%s… (%d bytes)", strconv.Quote(s[:64]), len(s))
	}
	return strconv.Quote(s)
}
