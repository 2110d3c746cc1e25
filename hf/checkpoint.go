package hf

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/bitnet-convert/bitnet-convert/internal/atomicfile"
	"github.com/bitnet-convert/bitnet-convert/internal/fsutil"
	"github.com/bitnet-convert/bitnet-convert/internal/osx"
)

// File names looked for in a checkpoint directory.
const (
	ConfigFile      = "config.json"
	SingleFile      = "model.safetensors"
	IndexFile       = "model.safetensors.index.json"
	safetensorsExt  = ".safetensors"
	maxIndexBytes   = 64 << 20
	maxListedInErrs = 5
)

// ErrNoCheckpoint is wrapped by Open's error when the directory holds no
// config.json or no *.safetensors file.
var ErrNoCheckpoint = errors.New("not a Hugging Face checkpoint")

// Checkpoint is an opened HF checkpoint directory. Its methods are safe for
// concurrent use.
type Checkpoint struct {
	// Dir is the directory as given to Open.
	Dir string
	// Config is the parsed config.json.
	Config *Config
	// Tensors lists every tensor in conversion order: shard files in order
	// (the index's shards sorted by name, or the single file), then within a
	// file the keys sorted lexicographically (spec conversion.md §5.4).
	Tensors []TensorRef
	// Files lists the shard base names in the order used.
	Files []string
	// Notices are human-readable remarks about choices Open made (stray
	// files ignored, shards found without an index).
	Notices []string

	byName map[string]int
	mu     sync.Mutex
	maps   map[string]*osx.Mapping
	files  map[string]*os.File // each mapped shard, kept open for TensorData.ReadAt
	closed bool
}

// Open reads DIR/config.json and the safetensors headers of a checkpoint.
// Which files hold the weights (spec §5.4, BR-20):
//   - DIR/model.safetensors.index.json present: exactly the shards its
//     weight_map names (sorted by name); any other *.safetensors (e.g. a
//     stray model.safetensors) is ignored with a notice. A missing shard is
//     an error naming it and the tensors it should hold; a tensor the index
//     puts in a shard that lacks it is an error naming both.
//   - otherwise DIR/model.safetensors alone, or, with several *.safetensors
//     and no index, all of them in sorted name order (with a notice).
//
// A tensor name found in two files is an error naming it. Shard names must
// be local paths inside DIR; a shard that is a symlink must resolve to a
// regular file (anywhere: the hub cache's blobs/, or a user's own link to
// another disk), and dangling links are errors. Files that
// are not model files (optimizer.pt, trainer_state.json, tokenizer files …)
// are ignored. No file is mapped until Read.
func Open(dir string) (*Checkpoint, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("open checkpoint: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("open checkpoint: %s is not a directory", dir)
	}
	cfgPath := filepath.Join(dir, ConfigFile)
	if _, err := os.Stat(cfgPath); errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: no %s found (looked for %s): %w", dir, ConfigFile, cfgPath, ErrNoCheckpoint)
	}
	cfg, err := ReadConfig(cfgPath)
	if err != nil {
		return nil, err
	}
	c := &Checkpoint{Dir: dir, Config: cfg, byName: map[string]int{}, maps: map[string]*osx.Mapping{}, files: map[string]*os.File{}}
	files, expect, err := c.chooseFiles()
	if err != nil {
		return nil, err
	}
	c.Files = files
	owner := map[string]string{}
	var unlisted []string // tensors in a listed shard but not in weight_map
	for _, name := range files {
		h, err := ReadHeader(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		for _, t := range h.Tensors {
			t.File = name
			if prev, dup := owner[t.Name]; dup {
				return nil, fmt.Errorf("%s: tensor %q is in both %s and %s; remove the duplicate shard or fix %s", dir, t.Name, prev, name, IndexFile)
			}
			owner[t.Name] = name
			if expect != nil {
				if want, listed := expect[t.Name]; !listed {
					unlisted = append(unlisted, t.Name)
				} else if want != name {
					return nil, fmt.Errorf("%s: %s puts tensor %q in %s, but it is in %s", dir, IndexFile, t.Name, want, name)
				}
			}
			c.byName[t.Name] = len(c.Tensors)
			c.Tensors = append(c.Tensors, t)
		}
	}
	if len(unlisted) > 0 {
		c.Notices = append(c.Notices, fmt.Sprintf("%d tensor(s) in the shards are not listed in %s; using them anyway: %s%s",
			len(unlisted), IndexFile, strings.Join(unlisted[:min(len(unlisted), maxListedInErrs)], ", "), andMore(len(unlisted)-maxListedInErrs, "more")))
	}
	if expect != nil {
		var missing []string
		for name := range expect {
			if _, ok := owner[name]; !ok {
				missing = append(missing, name)
			}
		}
		if len(missing) > 0 {
			sort.Strings(missing)
			t := missing[0]
			return nil, fmt.Errorf("%s: %s puts tensor %q in %s, but that shard has no such tensor%s", dir, IndexFile, t, expect[t], andMore(len(missing)-1, "missing tensors"))
		}
	}
	return c, nil
}

// chooseFiles applies the file-selection rules of Open. expect is the index's
// weight_map (nil without an index).
func (c *Checkpoint) chooseFiles() (files []string, expect map[string]string, err error) {
	entries, err := os.ReadDir(c.Dir)
	if err != nil {
		return nil, nil, fmt.Errorf("open checkpoint: %w", err)
	}
	var present []string
	for _, e := range entries {
		n := e.Name()
		if strings.HasSuffix(n, safetensorsExt) && !strings.HasPrefix(n, ".") && !atomicfile.IsTemp(n) && !e.IsDir() {
			present = append(present, n)
		}
	}
	sort.Strings(present)
	indexPath := filepath.Join(c.Dir, IndexFile)
	if _, statErr := os.Lstat(indexPath); statErr == nil {
		wm, err := readIndex(indexPath)
		if err != nil {
			return nil, nil, err
		}
		byShard := map[string][]string{}
		for t, shard := range wm {
			if strings.ContainsFunc(shard, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
				// A NUL or control character: no file can have the name,
				// and the raw byte would end up in the message (defect D17).
				return nil, nil, fmt.Errorf("%s: weight_map gives tensor %q the shard %q, which is not a valid file name; fix the index", indexPath, t, shard)
			}
			if filepath.IsLocal(shard) {
				shard = filepath.Clean(shard) // "./a" and "a" are one file
				wm[t] = shard
			}
			byShard[shard] = append(byShard[shard], t)
		}
		for shard := range byShard {
			files = append(files, shard)
		}
		sort.Strings(files)
		for _, shard := range files {
			if err := c.checkShardPath(shard, byShard[shard]); err != nil {
				return nil, nil, err
			}
		}
		listed := map[string]bool{}
		for _, f := range files {
			listed[f] = true
		}
		for _, p := range present {
			if !listed[p] {
				c.Notices = append(c.Notices, fmt.Sprintf("ignoring %s: not listed in %s", p, IndexFile))
			}
		}
		if len(files) == 0 {
			return nil, nil, fmt.Errorf("%s: weight_map is empty: %w", indexPath, ErrNoCheckpoint)
		}
		return files, wm, nil
	}
	switch {
	case len(present) == 0:
		return nil, nil, fmt.Errorf("%s: no %s or %s found (pytorch .bin checkpoints are not supported; convert them to safetensors first): %w", c.Dir, SingleFile, IndexFile, ErrNoCheckpoint)
	case len(present) == 1 && present[0] == SingleFile:
	case len(present) == 1:
		c.Notices = append(c.Notices, fmt.Sprintf("no %s or %s; using %s", SingleFile, IndexFile, present[0]))
	default:
		c.Notices = append(c.Notices, fmt.Sprintf("no %s: using all %d *.safetensors files in name order (%s)", IndexFile, len(present), strings.Join(present, ", ")))
	}
	for _, p := range present {
		if err := c.checkShardPath(p, nil); err != nil {
			return nil, nil, err
		}
	}
	return present, nil, nil
}

// readIndex returns the weight_map of a model.safetensors.index.json.
func readIndex(path string) (map[string]string, error) {
	f, err := fsutil.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxIndexBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(data) > maxIndexBytes {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, maxIndexBytes)
	}
	var idx struct {
		WeightMap map[string]string `json:"weight_map"`
	}
	if err := json.Unmarshal(data, &idx); err != nil {
		return nil, fmt.Errorf("%s is not a valid safetensors index: %v", path, err)
	}
	if idx.WeightMap == nil {
		return nil, fmt.Errorf("%s has no weight_map object", path)
	}
	return idx.WeightMap, nil
}

// checkShardPath verifies that shard is a local name whose target is a
// regular file inside the checkpoint directory. tensors (may be nil) are
// named in the missing-shard error.
func (c *Checkpoint) checkShardPath(shard string, tensors []string) error {
	if shard == "" || !filepath.IsLocal(shard) {
		return fmt.Errorf("%s: shard name %q is not a file inside the checkpoint directory", c.Dir, shard)
	}
	p := filepath.Join(c.Dir, shard)
	li, err := os.Lstat(p)
	if errors.Is(err, os.ErrNotExist) {
		sort.Strings(tensors)
		list := strings.Join(tensors[:min(len(tensors), maxListedInErrs)], ", ")
		return fmt.Errorf("%s: shard %s is missing; %s lists %d tensor(s) in it: %s%s", c.Dir, shard, IndexFile, len(tensors), list, andMore(len(tensors)-maxListedInErrs, "more"))
	}
	if err != nil {
		return fmt.Errorf("shard %s: %w", p, err)
	}
	if li.Mode()&os.ModeSymlink == 0 && !strings.Contains(shard, string(filepath.Separator)) {
		if !li.Mode().IsRegular() {
			return fmt.Errorf("shard %s is not a regular file", p)
		}
		return nil
	}
	target, err := filepath.EvalSymlinks(p)
	if err != nil {
		return fmt.Errorf("shard %s is a dangling symlink: %v", p, err)
	}
	// A link may lead anywhere (the hub cache's ../../blobs/…, or a shard
	// the user keeps on another disk): the index cannot name a file outside
	// the directory (IsLocal above), and a link there is the user's own
	// choice, so only its target's kind is checked.
	ti, err := os.Stat(target)
	if err != nil || !ti.Mode().IsRegular() {
		return fmt.Errorf("shard %s does not resolve to a regular file", p)
	}
	return nil
}

func andMore(n int, what string) string {
	if n <= 0 {
		return ""
	}
	return fmt.Sprintf(" (and %d %s)", n, what)
}

// Lookup returns the tensor named name (HF name).
func (c *Checkpoint) Lookup(name string) (TensorRef, bool) {
	i, ok := c.byName[name]
	if !ok {
		return TensorRef{}, false
	}
	return c.Tensors[i], true
}

// Read returns the bytes of one tensor as a sub-slice of its shard's
// read-only memory map (mapped on first use and kept until Close). The
// slice must not be written to, and is invalid after Close. Read returns an
// error naming the tensor for an unsupported dtype (anything but BF16, F16,
// F32, U8), for a shard that changed size since Open, or after Close.
func (c *Checkpoint) Read(ref TensorRef) (*TensorData, error) {
	if !ref.DType.Supported() {
		return nil, fmt.Errorf("tensor %s in %s has dtype %s; only BF16, F16, F32 and U8 are supported", ref.Name, ref.File, ref.DType)
	}
	mp, f, err := c.mapping(ref.File)
	if err != nil {
		return nil, err
	}
	m := mp.Bytes()
	if ref.Offset > uint64(len(m)) || ref.Size > uint64(len(m))-ref.Offset {
		return nil, fmt.Errorf("tensor %s: bytes [%d, %d) are beyond the end of %s (%d bytes); was the file changed?", ref.Name, ref.Offset, ref.Offset+ref.Size, ref.File, len(m))
	}
	return &TensorData{Ref: ref, Raw: m[ref.Offset : ref.Offset+ref.Size : ref.Offset+ref.Size], mapping: mp, file: f}, nil
}

// mapping returns the view of shard file, mapping it on first use, and the
// open file when the view is a memory map (nil for the ReadAt fallback,
// whose bytes are already in memory).
func (c *Checkpoint) mapping(file string) (*osx.Mapping, *os.File, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, nil, fmt.Errorf("read %s: checkpoint is closed", file)
	}
	if m, ok := c.maps[file]; ok {
		return m, c.files[file], nil
	}
	p := filepath.Join(c.Dir, file)
	f, err := fsutil.Open(p)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	// Errors name p: an empty shard, a size this build's int cannot hold
	// (32-bit targets), or a failed mapping.
	m, err := osx.Map(f, fi.Size(), p)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	c.maps[file] = m
	if !m.Mapped() {
		f.Close()
		return m, nil, nil
	}
	c.files[file] = f
	return m, f, nil
}

// Close unmaps every shard. TensorData obtained from c must not be used
// afterwards.
func (c *Checkpoint) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	var first error
	for f, m := range c.maps {
		if err := m.Close(); err != nil && first == nil {
			first = fmt.Errorf("unmap %s: %w", f, err)
		}
		delete(c.maps, f)
	}
	for name, f := range c.files {
		f.Close() // read-only: nothing to lose
		delete(c.files, name)
	}
	return first
}

// TensorData is one tensor's bytes as stored (little-endian, HF order).
type TensorData struct {
	Ref TensorRef
	// Raw is exactly the tensor's Ref.Size bytes, a read-only sub-slice of
	// the shard's memory map; it need not be aligned.
	Raw []byte

	mapping *osx.Mapping // the shard's view, for Release; nil when built by hand
	file    *os.File     // the mapped shard, for ReadAt; nil otherwise
}

// ReadAt copies Raw[off:off+len(p)] into p (io.ReaderAt; fewer bytes and
// io.EOF at the end of the tensor). For a mapped shard it reads the file
// (pread) instead of touching the mapping: on Linux, copying page-cache
// pages into a small reused buffer costs a quarter of the CPU time of
// faulting the same pages into the mapping and reading them there
// (docs/performance.md, "Conversion (acceptance c)"), and it leaves no
// input pages resident. Converters that stream a tensor through a buffer
// use it; Raw stays valid for everything else. Errors name the tensor and
// the shard; a shard that got shorter since Open is io.ErrUnexpectedEOF.
func (d *TensorData) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || off > int64(len(d.Raw)) {
		return 0, fmt.Errorf("read tensor %s: offset %d outside its %d bytes", d.Ref.Name, off, len(d.Raw))
	}
	n := min(len(p), len(d.Raw)-int(off))
	if d.file == nil {
		copy(p, d.Raw[off:int(off)+n])
	} else if k, err := d.file.ReadAt(p[:n], int64(d.Ref.Offset)+off); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return k, fmt.Errorf("read tensor %s from %s: %w; was the file changed?", d.Ref.Name, d.Ref.File, err)
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// Float32s decodes a BF16, F16 or F32 tensor to float32 exactly (bf16 bits
// shifted into the high half; f16 via IEEE conversion; f32 copied) and
// returns the NElements values, reusing dst when its capacity suffices. U8
// and other dtypes are an error naming the tensor.
func (d *TensorData) Float32s(dst []float32) ([]float32, error) {
	n := d.Ref.NElements()
	es := d.Ref.DType.Size()
	if es == 0 || n*es != uint64(len(d.Raw)) {
		return nil, fmt.Errorf("tensor %s: %d bytes do not hold %d %s values", d.Ref.Name, len(d.Raw), n, d.Ref.DType)
	}
	if !d.Ref.DType.IsFloat() {
		return nil, fmt.Errorf("tensor %s in %s has dtype %s, which is not a float type", d.Ref.Name, d.Ref.File, d.Ref.DType)
	}
	if uint64(cap(dst)) >= n {
		dst = dst[:n]
	} else {
		dst = make([]float32, n)
	}
	DecodeFloats(dst, d.Raw, d.Ref.DType)
	return dst, nil
}

// Release tells the OS the pages of Raw are not needed any more (see
// osx.Mapping.Release: madvise MADV_DONTNEED on Unix, VirtualUnlock on
// Windows, on the page-aligned interior of Raw; pages shared with
// neighbouring tensors are kept), so resident memory stays near one tensor
// while a whole model streams through. Raw stays readable: the pages are
// faulted in again from the file if touched. It does nothing for a
// TensorData not from Checkpoint.Read or a shard read without a mapping.
func (d *TensorData) Release() { d.mapping.Release(d.Raw) }
