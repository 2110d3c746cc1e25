package gpupack

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/bitnet-convert/bitnet-convert/internal/atomicfile"
	"github.com/bitnet-convert/bitnet-convert/torchpt"
)

// File names bitnet.cpp's gpu/generate.py loads from its checkpoint
// directory.
const (
	FP16File = "model_state_fp16.pt"
	Int2File = "model_state_int2.pt"
)

// Options configures Pack.
type Options struct {
	// ScaleLayout is the weight_scale layout ("" = LayoutMain).
	ScaleLayout ScaleLayout
	// AllowUnsupportedShape writes matrices whose (N, K) main's kernel has
	// no dispatch for.
	AllowUnsupportedShape bool
	// Force replaces existing output files.
	Force bool
	// Threads bounds the goroutines of the checkpoint reader (0: 1).
	Threads int
	// Progress, when set, is called after each tensor written.
	Progress func(file, tensor string)
}

// Report describes a finished (or planned) pack.
type Report struct {
	Input   string
	Arch    string
	Layers  int
	Files   []string // written paths
	Tensors []int    // tensors per file
	Bytes   []int64  // file sizes
	Notices []string
}

// fused is one matrix of the GPU model: its torch key stem (without
// ".weight") and the GGUF projections concatenated along the rows.
type fused struct {
	key   string
	parts []string
}

// layerKeys returns the torch keys of layer i in the order
// convert_safetensors.py builds them (and convert_checkpoint.py keeps):
// wqkv, wo, the four norms, w13, w2. Norm entries map to GGUF names.
func layerKeys(i int, subNorms bool) (mats []fused, norms [][2]string) {
	b := "blk." + strconv.Itoa(i) + "."
	l := "layers." + strconv.Itoa(i) + "."
	mats = []fused{
		{l + "attention.wqkv", []string{b + "attn_q.weight", b + "attn_k.weight", b + "attn_v.weight"}},
		{l + "attention.wo", []string{b + "attn_output.weight"}},
		{l + "feed_forward.w13", []string{b + "ffn_gate.weight", b + "ffn_up.weight"}},
		{l + "feed_forward.w2", []string{b + "ffn_down.weight"}},
	}
	norms = [][2]string{
		{l + "attention_norm.weight", b + "attn_norm.weight"},
		{l + "ffn_norm.weight", b + "ffn_norm.weight"},
	}
	if subNorms {
		norms = append(norms,
			[2]string{l + "attention.attn_sub_norm.weight", b + "attn_sub_norm.weight"},
			[2]string{l + "feed_forward.ffn_sub_norm.weight", b + "ffn_sub_norm.weight"})
	}
	return mats, norms
}

// packer holds the open source and the scales already computed (each
// weight_scale record may be written before or after its weight).
type packer struct {
	ctx    context.Context
	src    source
	m      *model
	opts   Options
	scales map[string][]uint16 // fused key → bf16 scales of its parts
	out    []byte              // the encoded part, reused
}

// Pack writes model_state_fp16.pt and model_state_int2.pt for the
// checkpoint in (a Hugging Face directory or a GGUF file) into outDir
// atomically: both are renamed into place only when both are complete
// (outDir is created when missing, and removed again, with the parents
// Pack created, when the pack fails or ctx is cancelled). Errors: an input that cannot be read, a matrix shape the
// packing (N % 16, K % 32) or, without AllowUnsupportedShape, main's kernel
// does not support, an existing output without Force.
func Pack(ctx context.Context, in, outDir string, opts Options) (*Report, error) {
	if opts.ScaleLayout == "" {
		opts.ScaleLayout = LayoutMain
	}
	p := &packer{ctx: ctx, opts: opts, scales: map[string][]uint16{}}
	st, err := os.Stat(in)
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		s, err := openHF(in, max(opts.Threads, 1))
		if err != nil {
			return nil, err
		}
		p.src = s
	} else {
		s, err := openGGUF(in)
		if err != nil {
			return nil, err
		}
		p.src = s
	}
	defer p.src.close()
	p.m = p.src.info()
	rep := &Report{Input: in, Arch: p.m.arch, Layers: p.m.layers}
	if err := p.check(rep); err != nil {
		return rep, err
	}
	if fi, err := os.Stat(outDir); err == nil && !fi.IsDir() {
		return rep, fmt.Errorf("--out %s is not a directory", outDir)
	}
	created := missingDirs(outDir)
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return rep, fmt.Errorf("--out: %w", err)
	}
	// A run that fails or is interrupted leaves no output: the folders it
	// created are removed again if they are still empty.
	succeeded := false
	defer func() {
		if !succeeded {
			for _, d := range created {
				os.Remove(d)
			}
		}
	}()
	for _, name := range []string{FP16File, Int2File} {
		if _, err := os.Stat(filepath.Join(outDir, name)); err == nil && !opts.Force {
			return rep, fmt.Errorf("%s exists; pass --force to overwrite", filepath.Join(outDir, name))
		}
	}
	// Both files are renamed into place only when both are complete.
	var done []*atomicfile.File
	defer func() {
		for _, af := range done {
			af.Abort()
		}
	}()
	for _, int2 := range []bool{false, true} {
		name := FP16File
		if int2 {
			name = Int2File
		}
		path := filepath.Join(outDir, name)
		af, n, size, err := p.writeFile(path, int2)
		if err != nil {
			return rep, err
		}
		done = append(done, af)
		rep.Files = append(rep.Files, path)
		rep.Tensors = append(rep.Tensors, n)
		rep.Bytes = append(rep.Bytes, size)
	}
	for _, af := range done {
		if err := af.Commit(); err != nil {
			return rep, err
		}
	}
	succeeded = true
	return rep, nil
}

// check validates every fused matrix shape and collects the notices.
func (p *packer) check(rep *Report) error {
	m := p.m
	if !m.subNorms {
		rep.Notices = append(rep.Notices, "the model has no attn_sub_norm/ffn_sub_norm weights (e.g. Llama3-8B-1.58, Falcon3): gpu/model.py's strict load_state_dict expects them, so generate.py cannot load these files without a model change")
	}
	if m.head != "" {
		rep.Notices = append(rep.Notices, "the head is untied: output.weight is lm_head (convert_safetensors.py always copies the embedding)")
	}
	for i := range m.layers {
		mats, _ := layerKeys(i, m.subNorms)
		for _, f := range mats {
			n, k := 0, -1
			var rows []int
			for _, part := range f.parts {
				s, ok := m.rows[part]
				if !ok {
					return fmt.Errorf("%s: tensor %s is missing", rep.Input, part)
				}
				if k >= 0 && s[1] != k {
					return fmt.Errorf("%s: tensor %s has %d columns, %s has %d: cannot fuse them", rep.Input, part, s[1], f.parts[0], k)
				}
				n, k = n+s[0], s[1]
				rows = append(rows, s[0])
				if s[0]%16 != 0 {
					return fmt.Errorf("%s: tensor %s has %d rows: the GPU layout needs a multiple of 16 per part", rep.Input, part, s[0])
				}
			}
			if err := CheckShape(n, k); err != nil {
				return fmt.Errorf("%s: %s.weight: %w", rep.Input, f.key, err)
			}
			if len(rows) == 3 {
				if _, err := p.opts.ScaleLayout.scaleVector(make([]uint16, 3), rows); err != nil {
					return fmt.Errorf("%s: %s.weight_scale: %w", rep.Input, f.key, err)
				}
			}
			if !(Shape{n, k}).Supported() {
				if !p.opts.AllowUnsupportedShape {
					return fmt.Errorf("%s: %s.weight is (N, K) = (%d, %d), which bitnet.cpp's GPU kernel does not support (it returns zeros); supported: %s; pass --allow-unsupported-shape for a kernel built for it", rep.Input, f.key, n, k, supportedList())
				}
				if i == 0 {
					rep.Notices = append(rep.Notices, fmt.Sprintf("%s.weight (N, K) = (%d, %d) is not in main's kernel list; the file needs a kernel built for it", f.key, n, k))
				}
			}
		}
	}
	return nil
}

// entry is one tensor of an output file.
type entry = torchpt.Tensor

// writeFile writes one of the two checkpoints to a temp file beside path
// and returns it (to be committed by the caller), its tensor count and size.
func (p *packer) writeFile(path string, int2 bool) (*atomicfile.File, int, int64, error) {
	var ts []entry
	for i := range p.m.layers {
		mats, norms := layerKeys(i, p.m.subNorms)
		add := func(f fused) {
			ts = append(ts, p.matrix(f, int2)...)
		}
		add(mats[0])
		add(mats[1])
		for _, nm := range norms {
			e, err := p.float(nm[0], nm[1])
			if err != nil {
				return nil, 0, 0, err
			}
			ts = append(ts, e)
		}
		add(mats[2])
		add(mats[3])
	}
	head := p.m.head
	if head == "" {
		head = p.m.embed
	}
	for _, nm := range [][2]string{{"tok_embeddings.weight", p.m.embed}, {"output.weight", head}, {"norm.weight", "output_norm.weight"}} {
		e, err := p.float(nm[0], nm[1])
		if err != nil {
			return nil, 0, 0, err
		}
		ts = append(ts, e)
	}
	for i := range ts {
		data, name := ts[i].Data, ts[i].Name
		ts[i].Data = func(w io.Writer) error {
			if err := p.ctx.Err(); err != nil {
				return err
			}
			if err := data(w); err != nil {
				return err
			}
			if p.opts.Progress != nil {
				p.opts.Progress(filepath.Base(path), name)
			}
			return nil
		}
	}
	af, err := atomicfile.Create(path, p.opts.Force)
	if err != nil {
		return nil, 0, 0, err
	}
	ok := false
	defer func() {
		if !ok {
			af.Abort()
		}
	}()
	cw := &countWriter{w: af}
	bw := bufio.NewWriterSize(cw, 1<<20)
	if err := torchpt.Write(bw, torchpt.ArchiveName(path), ts); err != nil {
		if p.ctx.Err() != nil {
			return nil, 0, 0, fmt.Errorf("interrupted; %s was not written", path)
		}
		var pe *fs.PathError
		if errors.As(err, &pe) && pe.Path == af.TempName() {
			pe.Path = path
		}
		return nil, 0, 0, err
	}
	if err := bw.Flush(); err != nil {
		return nil, 0, 0, err
	}
	ok = true
	return af, len(ts), cw.n, nil
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}

func (p *packer) float(key, name string) (entry, error) {
	shape, write, err := p.src.floatTensor(name)
	if err != nil {
		return entry{}, err
	}
	return entry{Name: key, DType: torchpt.BFloat16, Shape: shape, Data: write}, nil
}

// matrix returns the entries of a fused matrix: the bf16 weight (fp16 file)
// or the int8 weight and its bf16 weight_scale (int2 file). Parts are
// ternarized one at a time, so memory holds one part.
func (p *packer) matrix(f fused, int2 bool) []entry {
	n, k := 0, 0
	var rows []int
	for _, part := range f.parts {
		s := p.m.rows[part]
		n, k = n+s[0], s[1]
		rows = append(rows, s[0])
	}
	weight := entry{Name: f.key + ".weight", DType: torchpt.BFloat16, Shape: []int64{int64(n), int64(k)}}
	if int2 {
		weight.DType, weight.Shape = torchpt.Int8, []int64{int64(n), int64(k / 4)}
	}
	weight.Data = func(w io.Writer) error {
		var scales []uint16
		for _, part := range f.parts {
			t, err := p.src.projection(part)
			if err != nil {
				return err
			}
			scales = append(scales, t.Scale)
			if int2 {
				p.out = growSlice(p.out, t.Rows*t.Cols/4)
				PackInt2(p.out, t.Codes, t.Rows, t.Cols)
			} else {
				p.out = t.appendFP16(p.out[:0])
			}
			if _, err := w.Write(p.out); err != nil {
				return err
			}
		}
		p.scales[f.key] = scales
		return nil
	}
	if !int2 {
		return []entry{weight}
	}
	ne := p.opts.ScaleLayout.entries()
	scale := entry{Name: f.key + ".weight_scale", DType: torchpt.BFloat16, Shape: []int64{int64(ne)}}
	scale.Data = func(w io.Writer) error {
		sc, ok := p.scales[f.key]
		if !ok {
			for _, part := range f.parts {
				t, err := p.src.projection(part)
				if err != nil {
					return err
				}
				sc = append(sc, t.Scale)
			}
			p.scales[f.key] = sc
		}
		v, err := p.opts.ScaleLayout.scaleVector(sc, rows)
		if err != nil {
			return fmt.Errorf("%s.weight_scale: %w", f.key, err)
		}
		b := make([]byte, 0, 2*len(v))
		for _, x := range v {
			b = binary.LittleEndian.AppendUint16(b, x)
		}
		_, err = w.Write(b)
		return err
	}
	return []entry{weight, scale}
}

// missingDirs returns dir and those of its parents that do not exist yet,
// innermost first: the folders os.MkdirAll(dir) would create.
func missingDirs(dir string) []string {
	var out []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil || !errors.Is(err, fs.ErrNotExist) {
			return out
		}
		out = append(out, d)
		if filepath.Dir(d) == d {
			return out
		}
	}
}
