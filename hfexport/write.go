package hfexport

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/bitnet-convert/bitnet-convert/convert"
	"github.com/bitnet-convert/bitnet-convert/format"
	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
	"github.com/bitnet-convert/bitnet-convert/hf"
	"github.com/bitnet-convert/bitnet-convert/internal/atomicfile"
	"github.com/bitnet-convert/bitnet-convert/internal/osx"
	"github.com/bitnet-convert/bitnet-convert/quantize"
)

// Export writes the Hugging Face checkpoint of the GGUF at in to the
// directory out (NewPlan, then every tensor streamed into its shard). The
// directory is built as a hidden sibling (".NAME.partial-PID-…") and
// renamed to out when complete; on any error or cancellation it is removed
// and out is untouched. An existing out is an error unless opts.Force
// (then it is replaced only once the new one is complete).
func Export(ctx context.Context, in, out string, opts Options) (*Plan, error) {
	out = filepath.Clean(out) // "newdir/" names newdir, not a child of it
	f, err := reader.Open(in)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	p, err := NewPlan(f, in, opts)
	if err != nil {
		return nil, err
	}
	if err := checkOut(in, out, opts.Force); err != nil {
		return p, err
	}
	src, err := os.Open(in)
	if err != nil {
		return p, err
	}
	defer src.Close()
	parent, base := filepath.Dir(out), filepath.Base(out)
	// A missing parent is created, as save_pretrained's os.makedirs does,
	// and removed again when the export fails.
	made, err := mkdirParents(parent)
	committed := false
	defer func() {
		if !committed {
			for i := len(made) - 1; i >= 0; i-- {
				_ = os.Remove(made[i])
			}
		}
	}()
	if err != nil {
		return p, fmt.Errorf("output %s: %w", out, err)
	}
	removeStale(parent, base)
	tmp, err := os.MkdirTemp(parent, "."+atomicfile.TempBase(base)+".partial-"+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return p, fmt.Errorf("output %s: %w", out, err)
	}
	// MkdirTemp creates 0700; a checkpoint is as readable as any new
	// directory (0777 less the umask, applied by Mkdir)
	if err := os.Remove(tmp); err == nil {
		err = os.Mkdir(tmp, 0o777)
		if err != nil {
			return p, fmt.Errorf("output %s: %w", out, err)
		}
	}
	done := false
	defer func() {
		if !done {
			os.RemoveAll(tmp)
		}
	}()
	if err := p.write(ctx, f, src, tmp, opts); err != nil {
		if ctx.Err() != nil {
			return p, fmt.Errorf("interrupted; %s was not written", out)
		}
		return p, err
	}
	if err := commitDir(tmp, out, opts.Force); err != nil {
		return p, err
	}
	done, committed = true, true
	return p, nil
}

// mkdirParents creates dir and its missing parents (os.MkdirAll) and
// returns the directories it created, outermost first.
func mkdirParents(dir string) ([]string, error) {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil || !errors.Is(err, fs.ErrNotExist) {
			break
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	if len(missing) == 0 {
		return nil, nil
	}
	slices.Reverse(missing)
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return missing, err
	}
	return missing, nil
}

// removeStale removes the temporary directories (".BASE.partial-PID-…")
// that exports killed before they could clean up left in parent: those
// whose process is gone (osx.ProcessAlive), never a running export's.
func removeStale(parent, base string) {
	ents, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	prefix := "." + atomicfile.TempBase(base) + ".partial-"
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok || !e.IsDir() {
			continue
		}
		pidStr, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidStr)
		if err != nil || pid == os.Getpid() || osx.ProcessAlive(pid) {
			continue
		}
		_ = os.RemoveAll(filepath.Join(parent, e.Name()))
	}
}

// checkOut refuses an existing out without force, an out that is a file,
// an out that holds the input (directly or below it: replacing it would
// delete the input), and, with force, an out holding anything an export
// does not write (exportFile): --force replaces an earlier export, never a
// directory of other files.
func checkOut(in, out string, force bool) error {
	fi, err := os.Stat(out)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("output %s: %w", out, err)
	case !fi.IsDir():
		return fmt.Errorf("output %s exists and is not a directory; choose another --out", out)
	}
	if absIn, err := filepath.Abs(in); err == nil {
		if absOut, err := filepath.Abs(out); err == nil {
			if rel, err := filepath.Rel(absOut, absIn); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				return fmt.Errorf("output directory %s holds the input %s; choose another --out", out, in)
			}
		}
	}
	if !force {
		return fmt.Errorf("output directory %s exists; pass --force to replace it", out)
	}
	entries, err := os.ReadDir(out)
	if err != nil {
		return fmt.Errorf("output %s: %w", out, err)
	}
	for _, e := range entries {
		if !exportFile(e.Name()) || e.IsDir() {
			return fmt.Errorf("output directory %s holds %s, which gguf2hf does not write; --force replaces only an earlier export: choose another --out", out, e.Name())
		}
	}
	return nil
}

// shardName is a safetensors shard name as transformers writes it.
var shardName = regexp.MustCompile(`^model-\d{5}-of-\d{5}\.safetensors$`)

// exportFile says whether name is a file an export writes (or one a
// Hugging Face checkpoint of the same layout carries beside it).
func exportFile(name string) bool {
	switch name {
	case "config.json", "generation_config.json", "tokenizer.json", "tokenizer.model", "tokenizer_config.json",
		"special_tokens_map.json", "model.safetensors", "model.safetensors.index.json":
		return true
	}
	return shardName.MatchString(name)
}

// commitDir moves the finished tmp directory to out, replacing an existing
// out (force) only after the new one is in place under its name.
func commitDir(tmp, out string, force bool) error {
	if err := syncDir(tmp); err != nil {
		return err
	}
	if _, err := os.Stat(out); err == nil && force {
		old := tmp + ".old"
		if err := os.Rename(out, old); err != nil {
			return fmt.Errorf("output %s: %w", out, err)
		}
		if err := os.Rename(tmp, out); err != nil {
			_ = os.Rename(old, out)
			return fmt.Errorf("output %s: %w", out, err)
		}
		_ = os.RemoveAll(old)
	} else if err := os.Rename(tmp, out); err != nil {
		return fmt.Errorf("output %s: %w", out, err)
	}
	_ = syncDir(filepath.Dir(out))
	return nil
}

// syncDir fsyncs a directory, best effort: Windows cannot fsync a
// directory handle (the files in it are synced one by one).
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	_ = d.Sync()
	return d.Close()
}

// writer holds the buffers reused from one tensor to the next.
type writer struct {
	f       *reader.File
	src     io.ReaderAt
	threads int
	data    []byte
	data2   []byte
	codes   []int8
	packed  []byte
	f32     []float32
	out     []byte
	scales  map[string]float32
}

// write writes every shard, the index and the side files into dir.
func (p *Plan) write(ctx context.Context, f *reader.File, src io.ReaderAt, dir string, opts Options) error {
	w := &writer{f: f, src: src, threads: max(1, opts.Threads), scales: map[string]float32{}}
	done := 0
	weightMap := map[string]string{}
	// own is the first error of our own tensor code, returned as it is
	// (the safetensors writer would wrap it with the temporary file name)
	var own error
	for si, idx := range p.Shards {
		name := ShardName(si, len(p.Shards))
		var wts []hf.WriteTensor
		for _, i := range idx {
			t := p.Tensors[i]
			weightMap[t.Name] = name
			wts = append(wts, hf.WriteTensor{Name: t.Name, DType: t.DType, Shape: t.Shape, Data: func(out io.Writer) error {
				if err := ctx.Err(); err != nil {
					return err
				}
				if err := w.tensor(out, &t); err != nil {
					if own == nil {
						own = err
					}
					return err
				}
				done++
				if opts.Progress != nil {
					opts.Progress(done, len(p.Tensors), t.Name)
				}
				return nil
			}})
		}
		if err := hf.WriteSafetensors(filepath.Join(dir, name), wts, map[string]string{"format": "pt"}); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if own != nil {
				return own
			}
			if u := errors.Unwrap(err); u != nil {
				// name the shard, not its temporary path
				return fmt.Errorf("write %s: %w", name, u)
			}
			return err
		}
	}
	if len(p.Shards) > 1 {
		idx := map[string]any{"metadata": map[string]any{"total_size": p.TotalBytes()}, "weight_map": weightMap}
		b, err := marshalSorted(idx)
		if err != nil {
			return err
		}
		p.Files["model.safetensors.index.json"] = b
	}
	for name, b := range p.Files {
		if err := writeFileSync(filepath.Join(dir, name), b); err != nil {
			return err
		}
	}
	return nil
}

func writeFileSync(path string, b []byte) error {
	fd, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := fd.Write(b); err != nil {
		fd.Close()
		return err
	}
	if err := fd.Sync(); err != nil {
		fd.Close()
		return err
	}
	return fd.Close()
}

// tensor writes the data of t.
func (w *writer) tensor(out io.Writer, t *Tensor) error {
	switch t.kind {
	case kindPacked:
		return w.packed1(out, t)
	case kindScale:
		s, ok := w.scales[t.Source.Name]
		if !ok {
			return fmt.Errorf("tensor %s: the scale of %s was not computed", t.Name, t.Source.Name)
		}
		_, err := out.Write(encodeFloats(w.grow(4), t.DType, []float32{s}))
		return err
	default:
		return w.float1(out, t)
	}
}

func (w *writer) grow(n int) []byte {
	if cap(w.out) < n {
		w.out = make([]byte, n)
	}
	return w.out[:n]
}

func grow[T any](b []T, n int) []T {
	if cap(b) < n {
		return make([]T, n)
	}
	return b[:n]
}

// section is a reader of the stored bytes of ti.
func (w *writer) section(ti gguf.TensorInfo) (*io.SectionReader, int64, error) {
	n, err := ti.NBytes()
	if err != nil {
		return nil, 0, fmt.Errorf("tensor %s: %w", ti.Name, err)
	}
	return io.NewSectionReader(w.src, int64(w.f.DataOffset+ti.Offset), int64(n)), int64(n), nil
}

// packed1 decodes projection t.Source to codes and one scale (codes), puts
// the rows back in HF order and packs them as transformers' pack_weights
// does: byte [r, k] = Σ_i (code[i·R + r, k] + 1) << 2i, R = out/4.
func (w *writer) packed1(out io.Writer, t *Tensor) error {
	ti := t.Source
	k, m := int(ti.Ne[0]), int(ti.Ne[1])
	codes, scale, err := w.ternary(t)
	if err != nil {
		return err
	}
	w.scales[ti.Name] = scale
	r := m / 4
	w.packed = grow(w.packed, r*k)
	row := func(hr int) int { return hr }
	if n := t.RopeHeads; n > 0 {
		d := m / n
		half := d / 2
		// HF row h·d + j·d/2 + i is GGUF row h·d + 2i + j (the inverse of
		// convert.RopePermuter's move).
		row = func(hr int) int {
			h, rem := hr/d, hr%d
			j, i := rem/half, rem%half
			return h*d + 2*i + j
		}
	}
	if !packRows(w.packed, codes, k, r, row) {
		return nonTernary(ti, codes, k)
	}
	_, err = out.Write(w.packed)
	return err
}

// packRows packs the 4·r rows of k codes (HF row hr is row(hr) of codes)
// into dst ([r, k] bytes) as transformers' pack_weights does: byte [p, c]
// holds code + 1 of row i·r + p in bits 2i..2i+1. It reports false when a
// code is outside −1…+1. Eight columns at a time: a uint64 holds eight codes
// of one row, one per byte lane; code + 1 is 0…2 in every lane, and a lane
// shifted by at most 6 stays in its byte.
func packRows(dst []byte, codes []int8, k, r int, row func(int) int) bool {
	cb := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(codes))), len(codes))
	var bad uint64
	for p := 0; p < r; p++ {
		d := dst[p*k : (p+1)*k]
		s0 := cb[row(p)*k:][:k]
		s1 := cb[row(r+p)*k:][:k]
		s2 := cb[row(2*r+p)*k:][:k]
		s3 := cb[row(3*r+p)*k:][:k]
		c := 0
		for ; c+8 <= k; c += 8 {
			w0 := lanesPlus1(binary.LittleEndian.Uint64(s0[c:]))
			w1 := lanesPlus1(binary.LittleEndian.Uint64(s1[c:]))
			w2 := lanesPlus1(binary.LittleEndian.Uint64(s2[c:]))
			w3 := lanesPlus1(binary.LittleEndian.Uint64(s3[c:]))
			bad |= lanesBad(w0) | lanesBad(w1) | lanesBad(w2) | lanesBad(w3)
			binary.LittleEndian.PutUint64(d[c:], w0|w1<<2|w2<<4|w3<<6)
		}
		for ; c < k; c++ {
			x0, x1, x2, x3 := uint64(s0[c]+1), uint64(s1[c]+1), uint64(s2[c]+1), uint64(s3[c]+1)
			bad |= lanesBad(x0) | lanesBad(x1) | lanesBad(x2) | lanesBad(x3)
			d[c] = byte(x0 | x1<<2 | x2<<4 | x3<<6)
		}
	}
	return bad == 0
}

// laneOnes has 1 in every byte lane.
const laneOnes = 0x0101010101010101

// lanesPlus1 adds 1 to every byte lane of w without carries between lanes
// (codes −1, 0, +1 become 0, 1, 2; another code becomes a lane lanesBad
// reports).
func lanesPlus1(w uint64) uint64 {
	const high = 0x8080808080808080
	return ((w &^ high) + laneOnes) ^ (w & high)
}

// lanesBad is non-zero when a byte lane of w is not 0, 1 or 2.
func lanesBad(w uint64) uint64 {
	return w&0xFCFCFCFCFCFCFCFC | w&(w>>1)&laneOnes
}

// nonTernary returns the error naming the first code of codes outside
// −1…+1 (a Q2_0 code 3 decodes to +2), or nil.
func nonTernary(ti gguf.TensorInfo, codes []int8, k int) error {
	for at, c := range codes {
		if c < -1 || c > 1 {
			return fmt.Errorf("tensor %s: element %d (row %d, column %d) has code %d (stored code %d), which is not ternary; Hugging Face's packed layout holds −1, 0, +1 only", ti.Name, at, at/k, at%k, c, int(c)+1)
		}
	}
	return nil
}

// ternary returns the codes (HF [out, in] order as the GGUF stores rows)
// and the one scale of projection t: decoded by its format, or read from a
// float tensor (codes = sign, scale = the common |value|). It refuses a code
// outside −1…+1 and scale groups with codes that carry different scales.
func (w *writer) ternary(t *Tensor) ([]int8, float32, error) {
	ti := t.Source
	k, m := int(ti.Ne[0]), int(ti.Ne[1])
	w.codes = grow(w.codes, k*m)
	if t.from == nil {
		s, err := w.floatCodes(ti, w.codes)
		return w.codes, s, err
	}
	s, n, err := w.section(ti)
	if err != nil {
		return nil, 0, err
	}
	w.data = grow(w.data, int(n))
	if _, err := io.ReadFull(s, w.data); err != nil {
		return nil, 0, fmt.Errorf("tensor %s: %w", ti.Name, err)
	}
	scales, err := format.DecodeParallel(t.from, w.codes, w.data, k, m, w.threads)
	if err != nil {
		return nil, 0, fmt.Errorf("tensor %s: %w", ti.Name, err)
	}
	scale, err := oneScale(ti, t.from, w.codes, scales, k)
	return w.codes, scale, err
}

// oneScale returns the scale shared by every scale group of codes whose
// codes are not all 0 (0 when there is none). It fails naming the tensor on
// a scale that is not finite and on two groups with different scales:
// Hugging Face's BitNet layout keeps one scale per tensor. Only the groups
// whose scale differs from the one found so far have their codes looked at
// (to ignore all-zero groups), so a file with one scale costs one pass over
// the scales.
func oneScale(ti gguf.TensorInfo, fm format.Format, codes []int8, scales []float32, k int) (float32, error) {
	g := fm.ScaleGroup(k)
	if g == 0 {
		g = len(codes)
	}
	nonzero := func(gi int) bool {
		if (gi+1)*g > len(codes) {
			return false
		}
		for _, c := range codes[gi*g : (gi+1)*g] {
			if c != 0 {
				return true
			}
		}
		return false
	}
	first := -1
	var scale float32
	for gi, s := range scales {
		if first >= 0 && s == scale {
			continue
		}
		if !nonzero(gi) {
			continue
		}
		if f := float64(s); math.IsNaN(f) || math.IsInf(f, 0) {
			return 0, fmt.Errorf("tensor %s: %s scale %d is %v; the input is damaged", ti.Name, ti.Type, gi, s)
		}
		if first < 0 {
			first, scale = gi, s
			continue
		}
		return 0, fmt.Errorf("tensor %s: %s %s is %v but %s is %v: Hugging Face's BitNet layout has one scale per tensor, so a file with %s scales cannot be exported", ti.Name, ti.Type, groupName(fm, gi, g, k, len(codes)), s, groupName(fm, first, g, k, len(codes)), scale, groupKind(fm, k))
	}
	return scale, nil
}

func groupName(fm format.Format, gi, g, k, n int) string {
	switch {
	case g == n:
		return "the tensor scale"
	case perRow(fm, k):
		return fmt.Sprintf("the scale of row %d", gi)
	}
	return fmt.Sprintf("the scale of block %d (row %d)", gi, gi*g/k)
}

// perRow reports whether fm keeps one scale per row (its group follows the
// row length) rather than per fixed-size block.
func perRow(fm format.Format, k int) bool { return fm.ScaleGroup(2*k) == 2*k }

func groupKind(fm format.Format, k int) string {
	if perRow(fm, k) {
		return "per-row"
	}
	return "per-block"
}

// floatRowBytes bounds the bytes read at a time from a float tensor.
const floatRowBytes = 4 << 20

// floatCodes reads a float projection (F32/F16/BF16, a ternary model's
// weights as bitnet.cpp's F32/F16 pipeline stores them) in row blocks into
// codes: the sign of each value, with one common |value| as the scale.
func (w *writer) floatCodes(ti gguf.TensorInfo, codes []int8) (float32, error) {
	var scale float32
	err := w.floatRows(ti, func(lo int, x []float32) error {
		for e, v := range x {
			a := float32(math.Abs(float64(v)))
			switch {
			case a == 0:
				codes[lo+e] = 0
				continue
			case math.IsNaN(float64(a)) || math.IsInf(float64(a), 0):
				return fmt.Errorf("tensor %s: element %d is %v", ti.Name, lo+e, v)
			case scale == 0:
				scale = a
			case a != scale:
				return fmt.Errorf("tensor %s: element %d is %v but others are ±%v: not a ternary tensor with one scale, which Hugging Face's BitNet layout needs", ti.Name, lo+e, v, scale)
			}
			if v > 0 {
				codes[lo+e] = 1
			} else {
				codes[lo+e] = -1
			}
		}
		return nil
	})
	return scale, err
}

// rawRows reads the stored bytes of ti in blocks of whole rows (about
// floatRowBytes) and calls fn with each.
func (w *writer) rawRows(ti gguf.TensorInfo, fn func(b []byte) error) error {
	s, n, err := w.section(ti)
	if err != nil {
		return err
	}
	tr, ok := ti.Type.Traits()
	if !ok || tr.BlockSize == 0 {
		return fmt.Errorf("tensor %s: type %s has no size", ti.Name, ti.Type)
	}
	rowElems := int(ti.Ne[0])
	if rowElems%int(tr.BlockSize) != 0 {
		return fmt.Errorf("tensor %s: row of %d is not a multiple of the %s block %d", ti.Name, rowElems, ti.Type, tr.BlockSize)
	}
	rowBytes := rowElems / int(tr.BlockSize) * int(tr.TypeSize)
	rows := max(1, floatRowBytes/max(1, rowBytes))
	total := int(n) / max(1, rowBytes)
	// One goroutine reads the next row block while this one converts and
	// writes the current one (two buffers), so that the disk and the CPU
	// work at the same time; it has stopped before floatRows returns, so
	// the buffers can be reused by the next tensor.
	w.data = grow(w.data, min(total, rows)*rowBytes)
	w.data2 = grow(w.data2, min(total, rows)*rowBytes)
	free := make(chan []byte, 2)
	free <- w.data
	free <- w.data2
	type chunk struct {
		b   []byte
		err error
	}
	ready := make(chan chunk, 2)
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		defer close(ready)
		for r0 := 0; r0 < total; r0 += rows {
			var b []byte
			select {
			case b = <-free:
			case <-stop:
				return
			}
			b = b[:min(rows, total-r0)*rowBytes]
			_, err := s.ReadAt(b, int64(r0*rowBytes))
			ready <- chunk{b, err} // never blocks: at most two buffers are out
			if err != nil {
				return
			}
		}
	}()
	defer func() {
		close(stop)
		<-done
	}()
	for c := range ready {
		if c.err != nil {
			return fmt.Errorf("tensor %s: %w", ti.Name, c.err)
		}
		err := fn(c.b)
		free <- c.b
		if err != nil {
			return err
		}
	}
	return nil
}

// floatRows decodes ti in blocks of whole rows and calls fn with the index
// of the block's first element and its values.
func (w *writer) floatRows(ti gguf.TensorInfo, fn func(lo int, x []float32) error) error {
	tr, _ := ti.Type.Traits()
	lo := 0
	return w.rawRows(ti, func(b []byte) error {
		ne := len(b) / int(tr.TypeSize) * int(tr.BlockSize)
		w.f32 = grow(w.f32, ne)
		if err := convert.DecodeFloats(w.f32, ti.Type, b); err != nil {
			return fmt.Errorf("tensor %s: %w", ti.Name, err)
		}
		err := fn(lo, w.f32)
		lo += ne
		return err
	})
}

// f16Table maps every f16 bit pattern to its float32 value (quantize.F16ToF32),
// built on first use: the F16 embedding of a large model is hundreds of
// millions of values, and a lookup is several times cheaper than the
// conversion.
var f16Table = sync.OnceValue(func() *[1 << 16]float32 {
	var t [1 << 16]float32
	for i := range t {
		t[i] = quantize.F16ToF32(uint16(i))
	}
	return &t
})

// f16BF16Table maps every f16 bit pattern to the bf16 bits of its value
// (quantize.F32ToBF16 of f16Table: round to nearest even).
var f16BF16Table = sync.OnceValue(func() *[1 << 16]uint16 {
	var t [1 << 16]uint16
	for i, v := range f16Table() {
		t[i] = quantize.F32ToBF16(v)
	}
	return &t
})

// float1 writes a float tensor in the export dtype, a row block at a time.
func (w *writer) float1(out io.Writer, t *Tensor) error {
	if t.Source.Type == gguf.TypeF16 {
		// F16 → BF16/F32 through the table, straight from the bytes
		tab := f16Table()
		lo := 0
		return w.rawRows(t.Source, func(b []byte) error {
			n := len(b) / 2
			for i := 0; i < n; i++ {
				if h := binary.LittleEndian.Uint16(b[2*i:]); h&0x7c00 == 0x7c00 {
					return notFinite(t.Source.Name, lo+i, tab[h])
				}
			}
			lo += n
			dst := w.grow(n * int(t.DType.Size()))
			if t.DType == hf.F32 {
				for i := 0; i < n; i++ {
					binary.LittleEndian.PutUint32(dst[4*i:], math.Float32bits(tab[binary.LittleEndian.Uint16(b[2*i:])]))
				}
			} else {
				bf := f16BF16Table()
				for i := 0; i < n; i++ {
					binary.LittleEndian.PutUint16(dst[2*i:], bf[binary.LittleEndian.Uint16(b[2*i:])])
				}
			}
			_, err := out.Write(dst)
			return err
		})
	}
	return w.floatRows(t.Source, func(lo int, x []float32) error {
		for i, v := range x {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return notFinite(t.Source.Name, lo+i, v)
			}
		}
		_, err := out.Write(encodeFloats(w.grow(len(x)*int(t.DType.Size())), t.DType, x))
		return err
	})
}

// notFinite is the refusal of a float tensor holding NaN or ±Inf at
// element i (the GGUF's flat index): exported as it is, the checkpoint
// would load and compute garbage without a word.
func notFinite(name string, i int, v float32) error {
	return fmt.Errorf("tensor %s: element %d is %v, not a finite number; the GGUF is damaged or the model diverged: re-convert it from its checkpoint", name, i, v)
}

// encodeFloats stores x as BF16 (round to nearest even, torch's rounding)
// or F32 little-endian into dst and returns it.
func encodeFloats(dst []byte, dt hf.DType, x []float32) []byte {
	if dt == hf.F32 {
		for i, v := range x {
			binary.LittleEndian.PutUint32(dst[4*i:], math.Float32bits(v))
		}
		return dst[:4*len(x)]
	}
	for i, v := range x {
		binary.LittleEndian.PutUint16(dst[2*i:], quantize.F32ToBF16(v))
	}
	return dst[:2*len(x)]
}
