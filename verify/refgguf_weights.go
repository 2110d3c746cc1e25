package verify

import (
	"fmt"
	"math"
	"strings"

	"github.com/bitnet-convert/bitnet-convert/archtab"
	"github.com/bitnet-convert/bitnet-convert/convert"
	"github.com/bitnet-convert/bitnet-convert/format"
	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
)

// ggufRefArchs are the causal archs the float reference reads from a GGUF
// (--ref-gguf across kernels): the FFN activation each implies and whether
// its q/k rows were interleaved for llama's adjacent-pair rope
// (convert.RopePermuter; ggml LLAMA_ROPE_TYPE_NORM). The BitNet archs keep
// HF's row order and rotate_half (ggml NEOX). The rows come from archtab
// (the facts of llama.cpp src/llama-model.cpp llm_build_bitnet /
// llm_build_llama and bitnet.cpp's fork of it); the reference's arithmetic
// stays its own, apart from the runtime's, as refGeometry is apart from
// convert.Geometry. Rows with graph features the reference does not compute
// (biases, q/k norms, per-projection norms, embedding models) are left out.
var ggufRefArchs, ggufRefArchNames = func() (map[string]struct{ relu2, adjacentRope bool }, []string) {
	m := map[string]struct{ relu2, adjacentRope bool }{}
	var names []string
	for _, a := range archtab.All() {
		if !a.Plain() || (a.FFN != archtab.SiLU && a.FFN != archtab.ReLU2) {
			continue
		}
		m[a.GGUF] = struct{ relu2, adjacentRope bool }{a.FFN == archtab.ReLU2, a.Rope == archtab.RopeNorm}
		names = append(names, a.GGUF)
	}
	return m, names
}()

// refGeometryOfGGUF reads the float reference's geometry from a GGUF's KVs
// and tensor shapes, as refGeometryOf reads it from config.json:
// {arch}.embedding_length, .attention.head_count, .block_count and
// .attention.layer_norm_rms_epsilon are required;
// .attention.head_count_kv defaults to the heads, .attention.key_length to
// embedding_length / head_count, .feed_forward_length to
// blk.0.ffn_gate.weight's ne[1], .rope.freq_base to 10000; the vocabulary is
// token_embd.weight's ne[1]; {arch}.hidden_activation ("relu2", "silu")
// overrides the arch's activation. Rope scaling, a rope dimension count
// other than the head dimension and an arch outside ggufRefArchs are
// errors naming the key: the reference computes plain full-width RoPE only.
func refGeometryOfGGUF(f *reader.File, path string) (refGeometry, error) {
	var g refGeometry
	arch := f.Arch()
	spec, ok := ggufRefArchs[arch]
	if !ok {
		return g, fmt.Errorf("%s: arch %q: the float reference knows %s and %s", path, arch, strings.Join(ggufRefArchNames[:len(ggufRefArchNames)-1], ", "), ggufRefArchNames[len(ggufRefArchNames)-1])
	}
	g.relu2, g.adjacentRope = spec.relu2, spec.adjacentRope
	uintKV := func(dst *int, key string, def int) error {
		v, ok := f.Get(arch + "." + key)
		if !ok {
			if def <= 0 {
				return fmt.Errorf("%s: key %s.%s is missing (the float reference needs it)", path, arch, key)
			}
			*dst = def
			return nil
		}
		u, ok := v.Uint()
		if !ok || u == 0 || u > 1<<24 {
			return fmt.Errorf("%s: key %s.%s: want a positive integer up to 2^24, have %v", path, arch, key, v.V)
		}
		*dst = int(u)
		return nil
	}
	floatKV := func(dst *float64, key string, def float64) error {
		v, ok := f.Get(arch + "." + key)
		if !ok {
			if def <= 0 {
				return fmt.Errorf("%s: key %s.%s is missing (the float reference needs it)", path, arch, key)
			}
			*dst = def
			return nil
		}
		x, ok := v.Float()
		if !ok || !(x > 0) || math.IsInf(x, 0) {
			return fmt.Errorf("%s: key %s.%s: want a positive finite number, have %v", path, arch, key, v.V)
		}
		*dst = x
		return nil
	}
	for _, x := range []struct {
		dst *int
		key string
	}{{&g.hidden, "embedding_length"}, {&g.heads, "attention.head_count"}, {&g.layers, "block_count"}} {
		if err := uintKV(x.dst, x.key, 0); err != nil {
			return g, err
		}
	}
	if err := uintKV(&g.kvHeads, "attention.head_count_kv", g.heads); err != nil {
		return g, err
	}
	if g.heads%g.kvHeads != 0 {
		return g, fmt.Errorf("%s: head_count %d is not a multiple of head_count_kv %d", path, g.heads, g.kvHeads)
	}
	if err := uintKV(&g.headDim, "attention.key_length", g.hidden/g.heads); err != nil {
		return g, err
	}
	if g.headDim%2 != 0 {
		return g, fmt.Errorf("%s: head dimension %d must be even", path, g.headDim)
	}
	ffDef := 0
	if t, ok := f.Tensor("blk.0.ffn_gate.weight"); ok && len(t.Ne) == 2 {
		ffDef = int(t.Ne[1])
	}
	if err := uintKV(&g.ff, "feed_forward_length", ffDef); err != nil {
		return g, err
	}
	if t, ok := f.Tensor("token_embd.weight"); ok && len(t.Ne) == 2 {
		g.vocab = int(t.Ne[1])
	} else {
		return g, fmt.Errorf("%s: tensor token_embd.weight is missing or not 2-D", path)
	}
	if err := floatKV(&g.eps, "attention.layer_norm_rms_epsilon", 0); err != nil {
		return g, err
	}
	if err := floatKV(&g.theta, "rope.freq_base", 10000); err != nil {
		return g, err
	}
	if v, ok := f.Get(arch + ".rope.dimension_count"); ok {
		if u, ok := v.Uint(); !ok || int(u) != g.headDim {
			return g, fmt.Errorf("%s: key %s.rope.dimension_count is %v, not the head dimension %d; the float reference rotates whole heads only", path, arch, v.V, g.headDim)
		}
	}
	// Linear scaling divides the positions by the factor (1, what
	// bitnet.cpp's converter writes, is plain RoPE); the keys are read as
	// the runtime reads them (llama.cpp's rule: an absent type is linear,
	// "none" never scales, rope.scale_linear is the older factor key).
	g.posScale = 1
	typ, hasType := f.String(arch + ".rope.scaling.type")
	if !hasType {
		typ = "linear"
	}
	fac, hasFac := f.Float(arch + ".rope.scaling.factor")
	if !hasFac {
		fac, hasFac = f.Float(arch + ".rope.scale_linear")
	}
	switch {
	case typ != "linear" && typ != "none":
		return g, fmt.Errorf("%s: key %s.rope.scaling.type is %q; the float reference implements linear scaling only", path, arch, typ)
	case hasFac && (!(fac > 0) || math.IsInf(fac, 0)):
		return g, fmt.Errorf("%s: key %s.rope.scaling.factor is %v; it must be positive", path, arch, fac)
	case hasFac && typ == "linear":
		g.posScale = 1 / fac
	}
	if v, ok := f.Get(arch + format.HiddenActivationSuffix); ok {
		switch s, _ := v.V.(string); s {
		case "relu2":
			g.relu2 = true
		case "silu":
			g.relu2 = false
		default:
			return g, fmt.Errorf("%s: key %s%s is %v; the float reference knows relu2 and silu", path, arch, format.HiddenActivationSuffix, v.V)
		}
	}
	return g, nil
}

// ggufWeights gives the float reference its weights from a GGUF file, one
// tensor at a time and without keeping any, as sourceWeights does from a
// checkpoint: ternary projections are decoded by the format layer (the
// file's I2_S layout and TL kernels) to codes, one byte per weight, and
// handed out in row blocks of code·scale; float tensors (F32, F16, BF16,
// Q8_0, Q6_K, Q4_K: convert.DecodeFloats) are widened one row block at a
// time, their file pages released after each block, so that a 128k-row
// embedding is never widened whole. Norms are used as stored.
type ggufWeights struct {
	f       *reader.File
	kernels []format.Kernel
	block   []float64 // blocks' buffer, reused from one matrix to the next
}

func (w *ggufWeights) shape(name string) ([]int, bool) {
	t, ok := w.f.Tensor(name)
	if !ok {
		return nil, false
	}
	out := make([]int, len(t.Ne))
	for i, d := range t.Ne {
		out[len(t.Ne)-1-i] = int(d) // GGUF ne → HF order
	}
	return out, true
}

func (w *ggufWeights) vector(name string) ([]float64, error) {
	t, ok := w.f.Tensor(name)
	if !ok || len(t.Ne) != 1 {
		return nil, fmt.Errorf("tensor %s is not a vector of the reference file", name)
	}
	out := make([]float64, t.Ne[0])
	err := w.floatRows(t, 1, func(_, _ int, v []float32) {
		for i, x := range v {
			out[i] = float64(x)
		}
	})
	return out, err
}

// floatRows calls fn with consecutive row blocks [lo, hi) of the float
// tensor t (a vector is one row), at most per rows each, widened to
// float32; the pages of each block are released after fn. A non-finite
// value is an error naming the tensor and element.
func (w *ggufWeights) floatRows(t gguf.TensorInfo, per int, fn func(lo, hi int, v []float32)) error {
	cols, rows := int(t.Ne[0]), 1
	if len(t.Ne) == 2 {
		rows = int(t.Ne[1])
	}
	rowBytes, err := gguf.NBytes(t.Type, []uint64{uint64(cols)})
	if err != nil {
		return fmt.Errorf("tensor %s: %w", t.Name, err)
	}
	data, err := w.f.TensorData(t.Name)
	if err != nil {
		return err
	}
	if uint64(len(data)) != rowBytes*uint64(rows) {
		return fmt.Errorf("tensor %s: %d bytes do not hold %d rows of %d %s values", t.Name, len(data), rows, cols, t.Type)
	}
	rb := int(rowBytes)
	buf := make([]float32, min(per, rows)*cols)
	for lo := 0; lo < rows; lo += per {
		hi := min(lo+per, rows)
		v := buf[:(hi-lo)*cols]
		if err := convert.DecodeFloats(v, t.Type, data[lo*rb:hi*rb]); err != nil {
			return fmt.Errorf("tensor %s: %w", t.Name, err)
		}
		for i, x := range v {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return fmt.Errorf("tensor %s: non-finite value %v at element %d; the file is damaged", t.Name, x, lo*cols+i)
			}
		}
		fn(lo, hi, v)
		releasePages(w.f, data[lo*rb:hi*rb])
	}
	return nil
}

func (w *ggufWeights) matrix(name string) (gguf.TensorInfo, error) {
	t, ok := w.f.Tensor(name)
	if !ok || len(t.Ne) != 2 {
		return t, fmt.Errorf("tensor %s is not a matrix of the reference file", name)
	}
	return t, nil
}

func (w *ggufWeights) rows(name string, ids []int32) ([]float64, error) {
	t, err := w.matrix(name)
	if err != nil {
		return nil, err
	}
	cols, nrows := int(t.Ne[0]), int(t.Ne[1])
	out := make([]float64, len(ids)*cols)
	for _, id := range ids {
		if id < 0 || int(id) >= nrows {
			return nil, fmt.Errorf("tensor %s: row %d is out of range [0, %d)", name, id, nrows)
		}
	}
	if format.IsTernary(t.Type) {
		tt, err := w.ternary(t)
		if err != nil {
			return nil, err
		}
		for i, id := range ids {
			for j := 0; j < cols; j++ {
				e := int(id)*cols + j
				out[i*cols+j] = float64(tt.codes[e]) * float64(tt.scaleAt(e))
			}
		}
		return out, nil
	}
	// One row at a time: only the rows asked for are read.
	sub := t
	sub.Ne = []uint64{t.Ne[0]}
	rowBytes, err := gguf.NBytes(t.Type, sub.Ne)
	if err != nil {
		return nil, fmt.Errorf("tensor %s: %w", name, err)
	}
	data, err := w.f.TensorData(name)
	if err != nil {
		return nil, err
	}
	if uint64(len(data)) != rowBytes*uint64(nrows) {
		return nil, fmt.Errorf("tensor %s: %d bytes do not hold %d rows of %d %s values", name, len(data), nrows, cols, t.Type)
	}
	defer releasePages(w.f, data)
	row := make([]float32, cols)
	rb := int(rowBytes)
	for i, id := range ids {
		if err := convert.DecodeFloats(row, t.Type, data[int(id)*rb:(int(id)+1)*rb]); err != nil {
			return nil, fmt.Errorf("tensor %s: %w", name, err)
		}
		for j, x := range row {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return nil, fmt.Errorf("tensor %s: non-finite value %v in row %d; the file is damaged", name, x, id)
			}
			out[i*cols+j] = float64(x)
		}
	}
	return out, nil
}

// ternary decodes the ternary tensor t (codes one byte per weight, the
// file's layout and kernels) and releases its pages.
func (w *ggufWeights) ternary(t gguf.TensorInfo) (*ternaryTensor, error) {
	tt, data, err := decodeRefTensor(w.f, t, w.kernels)
	if err != nil {
		return nil, fmt.Errorf("tensor %s: %w", t.Name, err)
	}
	releasePages(w.f, data)
	return tt, nil
}

func (w *ggufWeights) blocks(name string, maxElems int, fn func(lo, hi int, blk []float64)) error {
	t, err := w.matrix(name)
	if err != nil {
		return err
	}
	cols, rows := int(t.Ne[0]), int(t.Ne[1])
	per := max(1, maxElems/cols)
	if n := min(per, rows) * cols; cap(w.block) < n {
		w.block = make([]float64, n)
	}
	buf := w.block[:min(per, rows)*cols]
	if format.IsTernary(t.Type) {
		tt, err := w.ternary(t)
		if err != nil {
			return err
		}
		for lo := 0; lo < rows; lo += per {
			hi := min(lo+per, rows)
			b := buf[:(hi-lo)*cols]
			for i := range b {
				e := lo*cols + i
				b[i] = float64(tt.codes[e]) * float64(tt.scaleAt(e))
			}
			fn(lo, hi, b)
		}
		return nil
	}
	return w.floatRows(t, per, func(lo, hi int, v []float32) {
		b := buf[:len(v)]
		for i, x := range v {
			b[i] = float64(x)
		}
		fn(lo, hi, b)
	})
}
