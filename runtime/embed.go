package runtime

import (
	"fmt"
	"math"
	"strings"

	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
)

// embedArchSpec is what differs between the sentence-embedding architectures
// the runtime runs (rows in embed_qwen3.go and embed_gemma3.go).
type embedArchSpec struct {
	// act is the FFN gate nonlinearity: s = act(gate)·up.
	act func(float32) float32
	// embedScale multiplies the token embedding by √n_embd (Gemma).
	embedScale bool
	// postNorms adds the post_attention_norm / post_ffw_norm RMSNorms on the
	// attention and FFN outputs before each residual add (Gemma3).
	postNorms bool
}

// embedArchs lists the GGUF architectures LoadEmbedding accepts; each file
// embed_<arch>.go adds its row in an init function.
var embedArchs = map[string]embedArchSpec{}

// IsEmbeddingArch reports whether arch is a sentence-embedding architecture
// LoadEmbedding runs ("qwen3", "gemma3").
func IsEmbeddingArch(arch string) bool {
	_, ok := embedArchs[arch]
	return ok
}

// poolingTypes maps GGUF {arch}.pooling_type (llama.cpp's enum
// llama_pooling_type: mean 1, cls 2, last 3) to a PoolMode.
var poolingTypes = map[uint64]PoolMode{1: PoolMean, 2: PoolCLS, 3: PoolLast}

// EmbeddingParams are the hyper-parameters of an embedding model, read from
// the GGUF KVs "{arch}.…" and the tensor shapes.
type EmbeddingParams struct {
	NLayer  int // {arch}.block_count
	NEmbd   int // {arch}.embedding_length (hidden size d)
	NHead   int // {arch}.attention.head_count
	NHeadKV int // {arch}.attention.head_count_kv (default NHead)
	// HeadDim is {arch}.attention.key_length, else rope.dimension_count,
	// else NEmbd/NHead (value_length must equal it).
	HeadDim int
	NFF     int // {arch}.feed_forward_length
	NVocab  int // token_embd ne[1]
	NCtx    int // {arch}.context_length (default 32768, P5's default)
	// RopeTheta is {arch}.rope.freq_base (default 10000); RopeThetaSWA is
	// {arch}.rope.freq_base_swa for sliding-window layers (default
	// RopeTheta).
	RopeTheta, RopeThetaSWA float32
	RMSEps                  float32 // {arch}.attention.layer_norm_rms_epsilon (required)
	// AttnScale multiplies q·k: {arch}.attention.scale when present, else
	// 1/√HeadDim. For Gemma3 the converter writes attention.scale =
	// 1/√query_pre_attn_scalar only when that differs from head_dim.
	AttnScale float32
	// SlidingWindow is {arch}.attention.sliding_window (0: none) and
	// SlidingLayers {arch}.attention.sliding_window_pattern (true = the
	// layer attends to the last SlidingWindow positions only).
	SlidingWindow int
	SlidingLayers []bool
	// Causal is {arch}.attention.causal (default true: both HF models use
	// causal masks).
	Causal bool
	// Pooling is {arch}.pooling_type (default PoolMean).
	Pooling PoolMode
}

type embedLayer struct {
	attnNorm, ffnNorm, postAttnNorm, postFFNNorm []float32
	qNorm, kNorm                                 []float32 // per-head, len HeadDim
	// input RMSNorm weights before each projection (*_norm_in)
	qIn, kIn, vIn, oIn, gateIn, upIn, downIn []float32
	projections
}

// EmbeddingModel is a loaded sentence-embedding GGUF (arch qwen3 or gemma3,
// as bitnet.cpp's embedding converter writes them): norm vectors decoded to
// float32, weight matrices in their stored form. It is safe for concurrent
// use (Hidden keeps its state on the stack).
type EmbeddingModel struct {
	Arch   string
	Params EmbeddingParams

	spec       embedArchSpec
	opts       Options
	tokEmbd    *Matrix
	outputNorm []float32
	layers     []embedLayer
}

// OpenEmbedding opens the GGUF file at path and loads its embedding model.
// The returned file must be closed after the last use of the model (it holds
// the mmap). Errors name path.
func OpenEmbedding(path string, opts Options) (*EmbeddingModel, *reader.File, error) {
	f, err := reader.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("open model %s: %w", path, err)
	}
	m, err := LoadEmbedding(File{KVs: f.KVs, Tensors: f.Tensors, Data: f.TensorData}, opts)
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("load model %s: %w", path, err)
	}
	return m, f, nil
}

// LoadEmbedding builds an EmbeddingModel from a GGUF file of arch qwen3 or
// gemma3 with the BitNet per-projection input norms (*_norm_in). Matrices
// may be F32, F16, BF16, Q8_0 or I2_S; vectors F32, F16 or BF16. Gemma norms
// must already hold 1 + w (as the converter writes them). Errors wrap
// ErrUnsupportedArch or ErrMissing where they apply and name the key or
// tensor.
func LoadEmbedding(f File, opts Options) (*EmbeddingModel, error) {
	kv := func(key string) (gguf.Value, bool) { return gguf.Lookup(f.KVs, key) }
	av, ok := kv("general.architecture")
	if !ok {
		return nil, fmt.Errorf("key general.architecture: %w", ErrMissing)
	}
	arch, _ := av.V.(string)
	spec, ok := embedArchs[arch]
	if !ok {
		return nil, fmt.Errorf("general.architecture %q: %w for embeddings (supported: qwen3, gemma3)", arch, ErrUnsupportedArch)
	}
	m := &EmbeddingModel{Arch: arch, spec: spec, opts: opts}
	p := &m.Params
	r := kvReader{arch: arch, kv: kv}
	r.uint(&p.NLayer, "block_count", 0, true)
	r.uint(&p.NEmbd, "embedding_length", 0, true)
	r.uint(&p.NHead, "attention.head_count", 0, true)
	r.uint(&p.NHeadKV, "attention.head_count_kv", p.NHead, false)
	r.uint(&p.NFF, "feed_forward_length", 0, true)
	r.uint(&p.NCtx, "context_length", 32768, false)
	r.float(&p.RopeTheta, "rope.freq_base", 10000, false)
	r.float(&p.RopeThetaSWA, "rope.freq_base_swa", p.RopeTheta, false)
	r.float(&p.RMSEps, "attention.layer_norm_rms_epsilon", 0, true)
	r.uint(&p.SlidingWindow, "attention.sliding_window", 0, false)
	r.positive("rope.freq_base", float64(p.RopeTheta))
	r.positive("context_length", float64(p.NCtx))
	r.positive("rope.freq_base_swa", float64(p.RopeThetaSWA))
	if r.err != nil {
		return nil, r.err
	}
	if p.NLayer == 0 || p.NEmbd == 0 || p.NHead == 0 || p.NHeadKV == 0 || p.NFF == 0 || p.NHead%p.NHeadKV != 0 || p.NLayer > 1<<16 {
		return nil, fmt.Errorf("bad hyper-parameters: %d layers, embedding %d, FFN %d, %d heads, %d KV heads (heads must be a multiple of KV heads)", p.NLayer, p.NEmbd, p.NFF, p.NHead, p.NHeadKV)
	}
	if err := checkLayerCount(arch, f.Tensors, p.NLayer); err != nil {
		return nil, err
	}
	var rope, vl int
	r.uint(&rope, "rope.dimension_count", p.NEmbd/p.NHead, false)
	r.uint(&p.HeadDim, "attention.key_length", rope, false)
	r.uint(&vl, "attention.value_length", p.HeadDim, false)
	r.float(&p.AttnScale, "attention.scale", float32(1/math.Sqrt(float64(max(p.HeadDim, 1)))), false)
	if r.err != nil {
		return nil, r.err
	}
	switch {
	case p.HeadDim == 0 || p.HeadDim%2 != 0:
		return nil, fmt.Errorf("head dimension %d (key %s.attention.key_length, else rope.dimension_count, else embedding_length %d / attention.head_count %d) must be even and non-zero; fix the GGUF metadata", p.HeadDim, arch, p.NEmbd, p.NHead)
	case vl != p.HeadDim:
		return nil, fmt.Errorf("key %s.attention.value_length %d differs from key_length %d (not supported)", arch, vl, p.HeadDim)
	case rope != p.HeadDim:
		return nil, fmt.Errorf("key %s.rope.dimension_count %d must equal the head dimension %d (partial rope is not supported)", arch, rope, p.HeadDim)
	case !(p.AttnScale > 0):
		return nil, fmt.Errorf("key %s.attention.scale %v must be positive", arch, p.AttnScale)
	}
	p.Causal = true
	if v, ok := kv(arch + ".attention.causal"); ok {
		b, isBool := v.V.(bool)
		if !isBool {
			return nil, fmt.Errorf("key %s.attention.causal: want a bool, have %s", arch, v.Type)
		}
		p.Causal = b
	}
	p.Pooling = PoolMean
	if v, ok := kv(arch + ".pooling_type"); ok {
		u, _ := v.Uint()
		mode, known := poolingTypes[u]
		if !known {
			return nil, fmt.Errorf("key %s.pooling_type %v is not supported (1 mean, 2 cls, 3 last)", arch, v.V)
		}
		p.Pooling = mode
	}
	p.SlidingLayers = make([]bool, p.NLayer)
	if v, ok := kv(arch + ".attention.sliding_window_pattern"); ok {
		b, isBools := v.V.([]bool)
		if !isBools || len(b) != p.NLayer {
			return nil, fmt.Errorf("key %s.attention.sliding_window_pattern: want %d bools (one per layer), have %s", arch, p.NLayer, v.Type)
		}
		if p.SlidingWindow == 0 && anyBool(b) {
			return nil, fmt.Errorf("key %s.attention.sliding_window_pattern marks sliding layers but %s.attention.sliding_window is missing", arch, arch)
		}
		copy(p.SlidingLayers, b)
	} else if p.SlidingWindow > 0 {
		return nil, fmt.Errorf("key %s.attention.sliding_window %d without %s.attention.sliding_window_pattern: which layers slide is unknown", arch, p.SlidingWindow, arch)
	}

	t, err := newTensorLoader(f)
	if err != nil {
		return nil, err
	}
	if m.tokEmbd, err = t.matrix("token_embd.weight", p.NEmbd, -1); err != nil {
		return nil, err
	}
	p.NVocab = m.tokEmbd.M
	if m.outputNorm, err = t.vector("output_norm.weight", p.NEmbd); err != nil {
		return nil, err
	}
	qDim, kvDim := p.NHead*p.HeadDim, p.NHeadKV*p.HeadDim
	m.layers = make([]embedLayer, p.NLayer)
	for i := range m.layers {
		l := &m.layers[i]
		b := fmt.Sprintf("blk.%d.", i)
		if err := l.projections.load(b, p.NEmbd, qDim, kvDim, p.NFF, t.matrix); err != nil {
			return nil, err
		}
		vecs := []struct {
			dst  *[]float32
			name string
			n    int
		}{
			{&l.attnNorm, "attn_norm", p.NEmbd},
			{&l.ffnNorm, "ffn_norm", p.NEmbd},
			{&l.qNorm, "attn_q_norm", p.HeadDim},
			{&l.kNorm, "attn_k_norm", p.HeadDim},
			{&l.qIn, "attn_q_norm_in", p.NEmbd},
			{&l.kIn, "attn_k_norm_in", p.NEmbd},
			{&l.vIn, "attn_v_norm_in", p.NEmbd},
			{&l.oIn, "attn_output_norm_in", qDim},
			{&l.gateIn, "ffn_gate_norm_in", p.NEmbd},
			{&l.upIn, "ffn_up_norm_in", p.NEmbd},
			{&l.downIn, "ffn_down_norm_in", p.NFF},
		}
		if spec.postNorms {
			vecs = append(vecs,
				struct {
					dst  *[]float32
					name string
					n    int
				}{&l.postAttnNorm, "post_attention_norm", p.NEmbd},
				struct {
					dst  *[]float32
					name string
					n    int
				}{&l.postFFNNorm, "post_ffw_norm", p.NEmbd})
		}
		for _, s := range vecs {
			if *s.dst, err = t.vector(b+s.name+".weight", s.n); err != nil {
				return nil, err
			}
		}
	}
	return m, nil
}

func anyBool(b []bool) bool {
	for _, v := range b {
		if v {
			return true
		}
	}
	return false
}

// tensorLoader decodes named tensors of a File with shape checks.
type tensorLoader struct {
	f     File
	infos map[string]gguf.TensorInfo
}

func newTensorLoader(f File) (*tensorLoader, error) {
	infos := make(map[string]gguf.TensorInfo, len(f.Tensors))
	for _, ti := range f.Tensors {
		if strings.HasSuffix(ti.Name, "_scale") {
			return nil, fmt.Errorf("tensor %s: separate scale tensors are not supported (the scale must live in the I2_S data)", ti.Name)
		}
		infos[ti.Name] = ti
	}
	return &tensorLoader{f: f, infos: infos}, nil
}

// matrix loads a 2-D tensor with ne = [k, rows] (rows < 0: any).
func (t *tensorLoader) matrix(name string, k, rows int) (*Matrix, error) {
	ti, ok := t.infos[name]
	if !ok {
		return nil, fmt.Errorf("tensor %s: %w", name, ErrMissing)
	}
	if len(ti.Ne) != 2 || ti.Ne[0] != uint64(k) || (rows >= 0 && ti.Ne[1] != uint64(rows)) || ti.Ne[1] == 0 || ti.Ne[1] > 1<<31 {
		return nil, fmt.Errorf("tensor %s: ne %v, want [%d, %d]", name, ti.Ne, k, rows)
	}
	data, err := t.f.Data(name)
	if err != nil {
		return nil, fmt.Errorf("tensor %s: %w", name, err)
	}
	w, err := NewMatrix(ti.Type, k, int(ti.Ne[1]), data)
	if err != nil {
		return nil, fmt.Errorf("tensor %s: %w", name, err)
	}
	return w, nil
}

// vector loads a 1-D tensor of n elements as float32.
func (t *tensorLoader) vector(name string, n int) ([]float32, error) {
	ti, ok := t.infos[name]
	if !ok {
		return nil, fmt.Errorf("tensor %s: %w", name, ErrMissing)
	}
	if len(ti.Ne) != 1 || ti.Ne[0] != uint64(n) {
		return nil, fmt.Errorf("tensor %s: ne %v, want [%d]", name, ti.Ne, n)
	}
	data, err := t.f.Data(name)
	if err != nil {
		return nil, fmt.Errorf("tensor %s: %w", name, err)
	}
	v, err := decodeVector(ti.Type, n, data)
	if err != nil {
		return nil, fmt.Errorf("tensor %s: %w", name, err)
	}
	return v, nil
}
