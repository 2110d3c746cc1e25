package gpupack

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/bitnet-convert/bitnet-convert/archtab"
	"github.com/bitnet-convert/bitnet-convert/convert"
	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
	"github.com/bitnet-convert/bitnet-convert/hf"
	"github.com/bitnet-convert/bitnet-convert/quantize"
	"github.com/bitnet-convert/bitnet-convert/tensormap"
)

// model is what packing needs to know about the input.
type model struct {
	arch            string
	layers          int
	heads, kvHeads  int
	rows            map[string][2]int // GGUF projection name → [out, in]
	subNorms        bool
	embed, head     string // GGUF names of the embedding and of the head ("" when tied)
	permuteStoredQK bool   // stored q/k rows are in HF order (need the GPU permutation)
}

// source reads a checkpoint by GGUF tensor names.
type source interface {
	info() *model
	// projection returns the ternary matrix of a GGUF projection name, in
	// the GPU row order (q and k permuted).
	projection(name string) (*Ternary, error)
	// floatTensor returns the shape of a float tensor and a writer of its
	// values as bf16 (streamed in chunks).
	floatTensor(name string) ([]int64, func(io.Writer) error, error)
	close() error
}

// chunkBytes is how much of a float tensor is converted at a time.
const chunkBytes = 4 << 20

// ---- Hugging Face checkpoint directory ----

type hfSource struct {
	src  *convert.Source
	ck   *hf.Checkpoint
	m    model
	plan *convert.Plan
	q    quantizer
	buf  []byte
}

func openHF(dir string, threads int) (*hfSource, error) {
	src, err := convert.OpenSource(dir, convert.Options{NoVocab: true, Threads: threads})
	if err != nil {
		return nil, err
	}
	ck, err := hf.Open(dir)
	if err != nil {
		src.Close()
		return nil, err
	}
	s := &hfSource{src: src, ck: ck, plan: src.Plan()}
	g := s.plan.Geometry
	s.m = model{arch: s.plan.Arch, layers: g.Layers, heads: g.Heads, kvHeads: g.HeadsKV, rows: map[string][2]int{}, embed: "token_embd.weight"}
	// GGUF llama stores q/k interleaved for rope (the same permutation):
	// convert.Source returns codes in that order already.
	s.m.permuteStoredQK = !ropeInterleaved(s.plan.Arch)
	for _, t := range s.plan.Tensors {
		if t.Class == tensormap.Projection && len(t.HFShape) == 2 {
			s.m.rows[t.GGUFName] = [2]int{int(t.HFShape[0]), int(t.HFShape[1])}
		}
		if t.GGUFName == "output.weight" {
			s.m.head = t.GGUFName
		}
		if strings.HasSuffix(t.GGUFName, ".attn_sub_norm.weight") {
			s.m.subNorms = true
		}
	}
	return s, nil
}

func (s *hfSource) info() *model { return &s.m }

func (s *hfSource) close() error {
	s.ck.Close()
	return s.src.Close()
}

func (s *hfSource) planned(name string) (convert.PlannedTensor, error) {
	t, ok := s.src.Tensor(name)
	if !ok {
		return t, fmt.Errorf("%s: no tensor %s", s.ck.Dir, name)
	}
	return t, nil
}

func (s *hfSource) projection(name string) (*Ternary, error) {
	t, err := s.planned(name)
	if err != nil {
		return nil, err
	}
	rows, cols := int(t.HFShape[0]), int(t.HFShape[1])
	heads := qkHeads(&s.m, name)
	if t.Packed {
		codes, scale, err := s.src.Ternary(name)
		if err != nil {
			return nil, err
		}
		if heads > 0 && s.m.permuteStoredQK {
			if codes, err = permuteRows(codes, rows, cols, heads); err != nil {
				return nil, fmt.Errorf("tensor %s: %w", t.HFName, err)
			}
		}
		tr, err := FromCodes(codes, rows, cols, scale)
		if err != nil {
			return nil, fmt.Errorf("tensor %s: %w", t.HFName, err)
		}
		return tr, nil
	}
	if t.Source.DType != hf.BF16 {
		return nil, fmt.Errorf("tensor %s is %s: gpu-pack ternarizes bf16 master weights as gpu/convert_checkpoint.py does (in bf16); convert this checkpoint's weights to bf16 first", t.HFName, t.Source.DType)
	}
	d, err := s.ck.Read(t.Source)
	if err != nil {
		return nil, err
	}
	s.q.w = growSlice(s.q.w, rows*cols)
	w := s.q.w
	s.buf = growSlice(s.buf, min(chunkBytes, 2*len(w)))
	for off := 0; off < 2*len(w); off += len(s.buf) {
		n := min(len(s.buf), 2*len(w)-off)
		if _, err := d.ReadAt(s.buf[:n], int64(off)); err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
		for i := 0; i < n; i += 2 {
			w[(off+i)/2] = binary.LittleEndian.Uint16(s.buf[i:])
		}
	}
	if heads > 0 {
		s.q.perm = growSlice(s.q.perm, len(w))
		if err := permuteRowsInto(s.q.perm, w, rows, cols, heads); err != nil {
			return nil, fmt.Errorf("tensor %s: %w", t.HFName, err)
		}
		w = s.q.perm
	}
	tr, err := s.q.quantize(w, rows, cols)
	if err != nil {
		return nil, fmt.Errorf("tensor %s: %w", t.HFName, err)
	}
	return tr, nil
}

func (s *hfSource) floatTensor(name string) ([]int64, func(io.Writer) error, error) {
	t, err := s.planned(name)
	if err != nil {
		return nil, nil, err
	}
	if !t.Source.DType.IsFloat() {
		return nil, nil, fmt.Errorf("tensor %s has dtype %s, not a float type", t.HFName, t.Source.DType)
	}
	shape := make([]int64, len(t.Source.Shape))
	for i, d := range t.Source.Shape {
		shape[i] = int64(d)
	}
	write := func(w io.Writer) error {
		d, err := s.ck.Read(t.Source)
		if err != nil {
			return err
		}
		es := int(t.Source.DType.Size())
		n := int(t.Source.NElements())
		if t.Source.DType == hf.BF16 {
			// already bf16: copied as stored
			_, err := io.Copy(w, io.NewSectionReader(d, 0, int64(2*n)))
			return err
		}
		step := chunkBytes / es
		in := make([]byte, min(n, step)*es)
		f := make([]float32, min(n, step))
		out := make([]byte, 2*min(n, step))
		for lo := 0; lo < n; lo += step {
			hi := min(n, lo+step)
			if _, err := d.ReadAt(in[:(hi-lo)*es], int64(lo*es)); err != nil && !errors.Is(err, io.EOF) {
				return err
			}
			hf.DecodeFloats(f[:hi-lo], in[:(hi-lo)*es], t.Source.DType)
			if _, err := w.Write(bf16Bytes(out[:0], f[:hi-lo])); err != nil {
				return err
			}
		}
		return nil
	}
	return shape, write, nil
}

// bf16Bytes appends f rounded to bf16 (nearest even; exact for values that
// are bf16 already).
func bf16Bytes(dst []byte, f []float32) []byte {
	for _, v := range f {
		dst = binary.LittleEndian.AppendUint16(dst, quantize.F32ToBF16(v))
	}
	return dst
}

// qkHeads is the head count that permutes the rows of projection name (q:
// heads, k: KV heads), 0 for the others.
func qkHeads(m *model, name string) int {
	switch {
	case strings.HasSuffix(name, ".attn_q.weight"):
		return m.heads
	case strings.HasSuffix(name, ".attn_k.weight"):
		return m.kvHeads
	}
	return 0
}

// ---- GGUF file ----

type ggufSource struct {
	path string
	f    *reader.File
	src  *os.File
	plan *convert.RequantPlan
	m    model
}

// ggufBitnetArchs are the GGUF archs whose q/k rows are stored in Hugging
// Face order (bitnet.cpp's and mainline's BitNet archs, archtab's BitNet
// rows); arch llama stores them interleaved for rope already.
var ggufBitnetArchs = func() []string {
	var out []string
	for _, a := range archtab.All() {
		if a.BitNet() && a.Plain() {
			out = append(out, a.GGUF)
		}
	}
	return out
}()

// ropeInterleaved reports whether arch's GGUF stores q/k rows interleaved
// for the adjacent-pair rope (archtab.RopeNorm: llama).
func ropeInterleaved(arch string) bool {
	a := archtab.Causal(arch)
	return a != nil && a.Rope == archtab.RopeNorm
}

func openGGUF(path string) (*ggufSource, error) {
	f, err := reader.Open(path)
	if err != nil {
		return nil, err
	}
	// requant's plan decides how each ternary tensor is decoded (the I2_S
	// layout key, the TL kernel config stored in the file).
	plan, err := convert.NewRequantPlan(f, path, convert.RequantOptions{OutType: convert.OutF32})
	if err != nil {
		f.Close()
		return nil, err
	}
	src, err := os.Open(path)
	if err != nil {
		f.Close()
		return nil, err
	}
	s := &ggufSource{path: path, f: f, src: src, plan: plan}
	arch := f.Arch()
	if a := archtab.Causal(arch); a == nil || !a.Plain() || (!a.BitNet() && a.GGUF != archtab.Llama.GGUF) {
		s.close()
		return nil, fmt.Errorf("%s: arch %s: gpu-pack reads the BitNet archs (%s) and llama", path, arch, strings.Join(ggufBitnetArchs, ", "))
	}
	u := func(key string) int {
		v, _ := f.Uint(arch + "." + key)
		return int(v)
	}
	s.m = model{arch: arch, layers: u("block_count"), heads: u("attention.head_count"), kvHeads: u("attention.head_count_kv"), rows: map[string][2]int{}, embed: "token_embd.weight", permuteStoredQK: !ropeInterleaved(arch)}
	if s.m.kvHeads == 0 {
		s.m.kvHeads = s.m.heads
	}
	if s.m.layers <= 0 || s.m.heads <= 0 {
		s.close()
		return nil, fmt.Errorf("%s: keys %s.block_count and %s.attention.head_count must be positive", path, arch, arch)
	}
	for _, t := range plan.Tensors {
		if len(t.In.Ne) == 2 && strings.HasPrefix(t.In.Name, "blk.") && isProjection(t.In.Name) {
			s.m.rows[t.In.Name] = [2]int{int(t.In.Ne[1]), int(t.In.Ne[0])}
		}
		if t.In.Name == "output.weight" {
			s.m.head = t.In.Name
		}
		if strings.HasSuffix(t.In.Name, ".attn_sub_norm.weight") {
			s.m.subNorms = true
		}
	}
	return s, nil
}

func isProjection(name string) bool {
	for _, p := range []string{"attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down"} {
		if strings.HasSuffix(name, "."+p+".weight") {
			return true
		}
	}
	return false
}

func (s *ggufSource) info() *model { return &s.m }

func (s *ggufSource) close() error {
	s.src.Close()
	return s.f.Close()
}

func (s *ggufSource) tensor(name string) (*convert.RequantTensor, error) {
	for i := range s.plan.Tensors {
		if s.plan.Tensors[i].In.Name == name {
			return &s.plan.Tensors[i], nil
		}
	}
	return nil, fmt.Errorf("%s: no tensor %s", s.path, name)
}

func (s *ggufSource) read(ti gguf.TensorInfo) ([]byte, error) {
	n, err := ti.NBytes()
	if err != nil {
		return nil, err
	}
	b := make([]byte, n)
	if _, err := s.src.ReadAt(b, int64(s.f.DataOffset+ti.Offset)); err != nil {
		return nil, fmt.Errorf("%s: tensor %s: %w", s.path, ti.Name, err)
	}
	return b, nil
}

func (s *ggufSource) projection(name string) (*Ternary, error) {
	t, err := s.tensor(name)
	if err != nil {
		return nil, err
	}
	k, m := int(t.In.Ne[0]), int(t.In.Ne[1])
	data, err := s.read(t.In)
	if err != nil {
		return nil, err
	}
	codes := make([]int8, k*m)
	var scale float32
	if t.From != nil {
		sc, err := t.From.Decode(codes, data, k, m)
		if err != nil {
			return nil, fmt.Errorf("%s: tensor %s: %w", s.path, name, err)
		}
		if scale, err = oneScale(sc); err != nil {
			return nil, fmt.Errorf("%s: tensor %s (%s): %w", s.path, name, t.From.Name(), err)
		}
	} else {
		// a float projection of a ternary model: codes are the signs, the
		// scale is the one magnitude
		f := make([]float32, k*m)
		if err := convert.DecodeFloats(f, t.In.Type, data); err != nil {
			return nil, fmt.Errorf("%s: tensor %s: %w", s.path, name, err)
		}
		for e, v := range f {
			a := float32(math.Abs(float64(v)))
			switch {
			case a == 0:
				continue
			case scale == 0:
				scale = a
			case a != scale:
				return nil, fmt.Errorf("%s: tensor %s: element %d is %v but others are ±%v: not a ternary tensor", s.path, name, e, v, scale)
			}
			codes[e] = 1
			if v < 0 {
				codes[e] = -1
			}
		}
		if scale == 0 {
			scale = 1
		}
	}
	if h := qkHeads(&s.m, name); h > 0 && s.m.permuteStoredQK {
		if codes, err = permuteRows(codes, m, k, h); err != nil {
			return nil, fmt.Errorf("%s: tensor %s: %w", s.path, name, err)
		}
	}
	tr, err := FromCodes(codes, m, k, scale)
	if err != nil {
		return nil, fmt.Errorf("%s: tensor %s: %w", s.path, name, err)
	}
	return tr, nil
}

// oneScale returns the one scale of a matrix stored with several scale
// groups (all nonzero groups must agree: the GPU layout has one scale per
// matrix); a matrix of all-zero groups gets 1.
func oneScale(sc []float32) (float32, error) {
	var s float32
	for i, v := range sc {
		switch {
		case v == 0:
		case s == 0:
			s = v
		case v != s:
			return 0, fmt.Errorf("scale group %d is %v but group scales before are %v: the GPU checkpoint holds one scale per matrix", i, v, s)
		}
	}
	if s == 0 {
		return 1, nil
	}
	if s < 0 {
		return 0, fmt.Errorf("negative scale %v", s)
	}
	return s, nil
}

func (s *ggufSource) floatTensor(name string) ([]int64, func(io.Writer) error, error) {
	t, err := s.tensor(name)
	if err != nil {
		return nil, nil, err
	}
	ti := t.In
	tr, ok := ti.Type.Traits()
	if !ok || !isFloatType(ti.Type) {
		return nil, nil, fmt.Errorf("%s: tensor %s has type %s, which gpu-pack does not read as floats (F32, F16, BF16, Q8_0, Q6_K, Q4_K)", s.path, name, ti.Type)
	}
	shape := make([]int64, len(ti.Ne))
	for i, d := range ti.Ne {
		shape[len(ti.Ne)-1-i] = int64(d)
	}
	row := int(ti.Ne[0])
	total, err := gguf.NElements(ti.Ne)
	if err != nil {
		return nil, nil, err
	}
	write := func(w io.Writer) error {
		rows := max(1, (chunkBytes/4)/row)
		f := make([]float32, rows*row)
		out := make([]byte, 0, 2*rows*row)
		base := int64(s.f.DataOffset + ti.Offset)
		rowBytes := int64(row) / int64(tr.BlockSize) * int64(tr.TypeSize)
		in := make([]byte, int64(rows)*rowBytes)
		for lo := 0; lo < int(total); lo += rows * row {
			hi := min(int(total), lo+rows*row)
			nr := (hi - lo) / row
			b := in[:int64(nr)*rowBytes]
			if _, err := s.src.ReadAt(b, base+int64(lo/row)*rowBytes); err != nil {
				return fmt.Errorf("%s: tensor %s: %w", s.path, name, err)
			}
			if err := convert.DecodeFloats(f[:hi-lo], ti.Type, b); err != nil {
				return fmt.Errorf("%s: tensor %s: %w", s.path, name, err)
			}
			if _, err := w.Write(bf16Bytes(out[:0], f[:hi-lo])); err != nil {
				return err
			}
		}
		return nil
	}
	return shape, write, nil
}

func isFloatType(t gguf.Type) bool {
	return slices.Contains([]gguf.Type{gguf.TypeF32, gguf.TypeF16, gguf.TypeBF16, gguf.TypeQ8_0, gguf.TypeQ6_K, gguf.TypeQ4_K}, t)
}
