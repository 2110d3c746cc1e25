package runtime

import (
	"fmt"
	"math"

	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
)

// embedArchSpec is what differs between the sentence-embedding architectures
// the runtime runs (rows in embed_qwen3.go and embed_gemma3.go).
type embedArchSpec struct {
	// act is the FFN gate nonlinearity: s = act(gate)·up.
	act func(float32) float32
	// actNames are the {arch}.hidden_activation values that name act (the
	// first is the one reported); any other value is refused.
	actNames []string
	// embedScale multiplies the token embedding by √n_embd (Gemma).
	embedScale bool
	// postNorms adds the post_attention_norm / post_ffw_norm RMSNorms on the
	// attention and FFN outputs before each residual add (Gemma3).
	postNorms bool
	// vectors are the norm vectors of a block (embedNorms, plus
	// gemmaPostNorms for Gemma3).
	vectors []vecRow[embedLayer]
}

// embedNorms are the per-layer vectors every embedding arch has: the block
// norms, the per-head q/k norms and the seven per-projection input norms
// (*_norm_in, BitNet's extra RMSNorm before each quantized projection).
var embedNorms = []vecRow[embedLayer]{
	{"attn_norm", vHidden, func(l *embedLayer) *[]float32 { return &l.attnNorm }},
	{"ffn_norm", vHidden, func(l *embedLayer) *[]float32 { return &l.ffnNorm }},
	{"attn_q_norm", vHeadDim, func(l *embedLayer) *[]float32 { return &l.qNorm }},
	{"attn_k_norm", vHeadDim, func(l *embedLayer) *[]float32 { return &l.kNorm }},
	{"attn_q_norm_in", vHidden, func(l *embedLayer) *[]float32 { return &l.qIn }},
	{"attn_k_norm_in", vHidden, func(l *embedLayer) *[]float32 { return &l.kIn }},
	{"attn_v_norm_in", vHidden, func(l *embedLayer) *[]float32 { return &l.vIn }},
	{"attn_output_norm_in", vQ, func(l *embedLayer) *[]float32 { return &l.oIn }},
	{"ffn_gate_norm_in", vHidden, func(l *embedLayer) *[]float32 { return &l.gateIn }},
	{"ffn_up_norm_in", vHidden, func(l *embedLayer) *[]float32 { return &l.upIn }},
	{"ffn_down_norm_in", vFF, func(l *embedLayer) *[]float32 { return &l.downIn }},
}

// gemmaPostNorms are Gemma3's extra block norms (spec postNorms).
var gemmaPostNorms = []vecRow[embedLayer]{
	{"post_attention_norm", vHidden, func(l *embedLayer) *[]float32 { return &l.postAttnNorm }},
	{"post_ffw_norm", vHidden, func(l *embedLayer) *[]float32 { return &l.postFFNNorm }},
}

// embedHeader is how LoadEmbedding reads the header: a 32768-token default
// context, feed_forward_length required, at most 2^16 layers, the head
// dimension from key_length else rope.dimension_count.
var embedHeader = headerRule{ctxDefault: 32768, ffnRequired: true, maxLayers: 1 << 16, headDimFromRope: true}

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
	f, err := openGGUF(path, opts)
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
// must already hold 1 + w (as the converter writes them); a
// {arch}.hidden_activation other than the arch's own activation (gemma3
// gelu_pytorch_tanh or gelu, qwen3 silu) is refused. Errors wrap
// ErrUnsupportedArch or ErrMissing where they apply and name the key or
// tensor.
func LoadEmbedding(f File, opts Options) (*EmbeddingModel, error) {
	l, err := newLoader(f, opts, IsEmbeddingArch, " for embeddings (supported: qwen3, gemma3)")
	if err != nil {
		return nil, err
	}
	arch, spec := l.arch, embedArchs[l.arch]
	m := &EmbeddingModel{Arch: arch, spec: spec, opts: opts}
	p := &m.Params
	h, err := l.header(embedHeader, func(r *kvReader, h *header) {
		r.fixedActivation(spec.actNames)
		r.float(&p.RopeThetaSWA, "rope.freq_base_swa", h.RopeTheta, false)
		r.uint(&p.SlidingWindow, "attention.sliding_window", 0, false)
		r.positive("rope.freq_base_swa", float64(p.RopeThetaSWA))
	})
	if err != nil {
		return nil, err
	}
	p.NLayer, p.NEmbd, p.NHead, p.NHeadKV, p.HeadDim = h.NLayer, h.NEmbd, h.NHead, h.NHeadKV, h.HeadDim
	p.NFF, p.NCtx, p.RopeTheta, p.RMSEps = h.NFF, h.NCtx, h.RopeTheta, h.RMSEps
	if h.RopeFreqScale != 1 {
		return nil, fmt.Errorf("key %s.rope.scaling.factor: rope scaling is not supported for the %s embedding models", arch, arch)
	}
	kv := l.kv
	l.r.float(&p.AttnScale, "attention.scale", float32(1/math.Sqrt(float64(p.HeadDim))), false)
	if l.r.err != nil {
		return nil, l.r.err
	}
	if !(p.AttnScale > 0) {
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

	if err := l.tensors(); err != nil {
		return nil, err
	}
	if m.tokEmbd, err = l.matrix("token_embd.weight", p.NEmbd, -1); err != nil {
		return nil, err
	}
	p.NVocab = m.tokEmbd.M
	if m.outputNorm, err = l.vector("output_norm.weight", p.NEmbd); err != nil {
		return nil, err
	}
	m.layers = make([]embedLayer, p.NLayer)
	if err := loadLayers(l, &h, m.layers, func(x *embedLayer) *projections { return &x.projections }, spec.vectors); err != nil {
		return nil, err
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
