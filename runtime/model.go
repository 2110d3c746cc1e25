package runtime

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/bitnet-convert/bitnet-convert/archtab"
	"github.com/bitnet-convert/bitnet-convert/format"
	"github.com/bitnet-convert/bitnet-convert/gguf"
)

// FFNActivation is the gate nonlinearity of the feed-forward block.
type FFNActivation int

const (
	// SiLU: s = silu(g)·u (arch bitnet, the 1bitLLM models).
	SiLU FFNActivation = iota
	// ReLU2: s = relu(g)²·u (arch bitnet-b1.58, BitNet b1.58 2B-4T).
	ReLU2
)

// String returns "silu" or "relu2".
func (a FFNActivation) String() string {
	if a == ReLU2 {
		return "relu2"
	}
	return "silu"
}

// archSpec is what differs between the supported GGUF architectures.
type archSpec struct {
	ffn FFNActivation
	// ropeNorm: llama's rope pairs adjacent dimensions (2i, 2i+1), on q/k
	// rows the converter interleaved (ggml LLAMA_ROPE_TYPE_NORM); the
	// BitNet archs pair i with i + d/2 (NEOX).
	ropeNorm bool
	// vectors are the norm vectors of a block: attn_norm and ffn_norm, and
	// for BitNet's SubLN attn_sub_norm [q] and ffn_sub_norm [ff] (plain
	// llama has neither).
	vectors []vecRow[layer]
	// biases: the block has q/k/v biases (qwen2); normIn: it may have
	// per-projection input norms (llama, qwen3). graph_qwen.go.
	biases, normIn bool
}

// blockNorms and subLNNorms are the per-layer vectors of the causal archs.
var (
	blockNorms = []vecRow[layer]{
		{"attn_norm", vHidden, func(l *layer) *[]float32 { return &l.attnNorm }},
		{"ffn_norm", vHidden, func(l *layer) *[]float32 { return &l.ffnNorm }},
	}
	subLNNorms = append(slices.Clone(blockNorms),
		vecRow[layer]{"attn_sub_norm", vQ, func(l *layer) *[]float32 { return &l.attnSubNorm }},
		vecRow[layer]{"ffn_sub_norm", vFF, func(l *layer) *[]float32 { return &l.ffnSubNorm }})
)

// causalHeader is how Load reads the header: a 2048-token default context
// (llama.cpp's), feed_forward_length optional (then blk.0.ffn_gate's rows),
// the head dimension from key_length else embedding_length / head_count.
var causalHeader = headerRule{ctxDefault: 2048}

// archs lists the GGUF general.architecture values the runtime runs: the
// causal rows of archtab whose graph features the runtime builds (the FFN
// activation, the rope pairing and the norm vectors; archSpecOf). The graph
// is the same except for those (conversion spec §4.6); bitnet-25 is the name
// bitnet.cpp's convert-ms-to-gguf-bitnet.py writes for the 2B-4T model.
//
// The reference each arch is bit-exact with (x86 AVX2 builds, one token
// per llama_decode; testdata/golden/fullsize/README.md names the builds):
//   - bitnet: bitnet.cpp c82b5e66 with llama.cpp fork 406a5036 ("build A";
//     testdata/golden/tiny-bitnet and the full-size bitnet_b1_58-large
//     shape);
//   - bitnet-b1.58, bitnet-25: bitnet.cpp eb60fc3 with the fork's 1f86f05
//     tree ("build B"; the full-size 2B-4T shape). Both builds run the
//     same attention: q and the softmax probabilities rounded to F16 for
//     the products with the F16 KV cache. ik_llama.cpp (flash attention,
//     f32 operands, testdata/golden/b158-h512) is matched within a
//     stated tolerance with Options.F32Attention (ik.go);
//   - llama: Llama3-8B-1.58 and Falcon3 1.58bit as bitnet.cpp build B loads
//     them (llm_build_llama: SiLU FFN, normal rope, the same attention,
//     untied output head); testdata/llama holds its reference.
var archs, archNames = func() (map[string]archSpec, []string) {
	m := map[string]archSpec{}
	var names []string
	for _, a := range archtab.All() {
		if spec, ok := archSpecOf(a); ok {
			m[a.GGUF] = spec
			names = append(names, a.GGUF)
		}
	}
	return m, names
}()

// archSpecOf is the runtime's reading of a causal archtab row, false for a
// row whose graph the runtime does not build (embedding models load through
// LoadEmbedding). q/k/v biases, per-head q/k norms and per-projection input
// norms are built as mainline's qwen2/qwen3 graphs compute them
// (graph_qwen.go); input norms are optional on every causal graph without
// sub-norms (llama, qwen2, qwen3), required nowhere.
func archSpecOf(a *archtab.Arch) (archSpec, bool) {
	if a.Embedding {
		return archSpec{}, false
	}
	spec := archSpec{ropeNorm: a.Rope == archtab.RopeNorm, vectors: blockNorms,
		biases: a.QKVBias, normIn: a.NormIn || !a.SubLN}
	if a.QKNorm {
		spec.vectors = qwen3Norms
	}
	switch a.FFN {
	case archtab.SiLU:
		spec.ffn = SiLU
	case archtab.ReLU2:
		spec.ffn = ReLU2
	default:
		return archSpec{}, false
	}
	if a.SubLN {
		spec.vectors = subLNNorms
	}
	return spec, true
}

// ErrUnsupportedArch is returned (wrapped) by Load for an architecture not in
// the runtime's table.
var ErrUnsupportedArch = errors.New("unsupported architecture")

// ErrMissing is returned (wrapped, with the key or tensor name) by Load when
// a required KV or tensor is absent.
var ErrMissing = errors.New("missing")

// Params are the hyper-parameters of a loaded model, read from the GGUF KVs
// "{arch}.…" and the tensor shapes.
type Params struct {
	NLayer    int     // {arch}.block_count
	NEmbd     int     // {arch}.embedding_length (hidden size d)
	NHead     int     // {arch}.attention.head_count
	NHeadKV   int     // {arch}.attention.head_count_kv (default NHead)
	HeadDim   int     // {arch}.attention.key_length, else NEmbd/NHead
	NFF       int     // {arch}.feed_forward_length (else ffn_gate ne[1])
	NVocab    int     // token_embd ne[1]
	NCtx      int     // {arch}.context_length (training context; default 2048)
	RopeTheta float32 // {arch}.rope.freq_base (default 10000)
	// RopeFreqScale is llama.cpp's freq_scale: 1/{arch}.rope.scaling.factor
	// for linear rope scaling (type "linear" or absent), else 1. Every rope
	// angle is freq_scale·θ (ggml's rope_yarn with ext_factor 0), so 1
	// gives the unscaled model's logits bit for bit.
	RopeFreqScale float32
	RMSEps        float32 // {arch}.attention.layer_norm_rms_epsilon (required)
	// NormInRMSEps is the eps of the per-projection input norms:
	// {arch}.attention.norm_in_rms_epsilon, else RMSEps (graph_qwen.go).
	NormInRMSEps float32
	// FFN is the arch's activation unless {arch}.hidden_activation
	// ("relu2", "silu") overrides it.
	FFN FFNActivation
}

// File is the part of an opened GGUF file that Load reads: its KVs, its
// tensor-info table (ne in GGUF order) and a function returning a tensor's
// data (exactly gguf.NBytes bytes). A *reader.File provides all three
// (KVs, Tensors, TensorData).
type File struct {
	KVs     []gguf.KV
	Tensors []gguf.TensorInfo
	Data    func(name string) ([]byte, error)
}

// Options configure a Model.
type Options struct {
	// Threads is the number of goroutines each matrix product is split over
	// (by rows); ≤ 1 runs single-threaded. Results do not depend on it.
	Threads int
	// Batched reproduces the reference's whole-prompt (batched) arithmetic
	// instead of its one-token path, for comparison with numbers the
	// reference computed on a batch (llama-embedding, the non-_seq_ golden
	// files): the attention probabilities multiply the F16 V cache without
	// being rounded to F16, and an F16 LM head takes the f32 hidden state.
	// Measured on the golden tiny model: with it, the pooled embeddings of
	// llama-embedding are reproduced to 1e-6; without it they differ by up
	// to 0.08. Default false (the one-token path, the _seq_ golden files).
	Batched bool
	// F32Attention computes attention and the RMS norms as ik_llama.cpp's
	// CPU build does (ik.go: its flash attention on the F16 KV cache, q and
	// the probabilities in float32, online softmax over 128-key blocks;
	// its fused RMS norm; an F16 LM head takes the f32 hidden state, as
	// ik's iqk_mul_mat F16 × F32 kernel does), instead of bitnet.cpp's
	// F16-rounded operands.
	// For comparisons with ik_llama.cpp: its IQ1_BN/IQ2_BN logits of
	// b158-h512 within 2e-6, its F32 ones within 1.5e-3 (its F32 matrix
	// products sum in another order). Default false: bitnet.cpp's
	// arithmetic, bit-exact.
	F32Attention bool
	// Arith is the runtime whose arithmetic the graph outside the matrix
	// products follows (arith.go): ArithDefault (the file's home runtime,
	// DefaultArith: ik_llama.cpp for IQ1_BN/IQ2_BN, mainline llama.cpp for
	// Q2_0, else bitnet.cpp), ArithBitnetCpp, ArithMainline or ArithIK
	// (the same as F32Attention). Load resolves it; Model.Arith says which.
	Arith Arith
	// TLKernels is the tiling (kernel_config.ini, format.ParseKernelConfig)
	// the file's TL1/TL2 tensors were converted with; GGUF does not record
	// it in a standard place. When nil, Load uses the configuration hf2gguf
	// stores in the file (StoredKernelConfig); other files need it given.
	TLKernels []format.Kernel
	// I2SLayout is the bit layout of the file's I2_S tensors (one of
	// format.Layouts), for files that do not record it under
	// format.LayoutKey: bitnet.cpp's own files of its ARM builds (since
	// BitNet 112f853) and of x86 builds without ACT_PARALLEL (1×4) carry no
	// such key. When set it overrides the key, as requant --from-layout
	// does; "" means the key, else x86. An unknown value is an error.
	I2SLayout format.Layout
	// NoMmap makes Open and OpenEmbedding read the file into anonymous
	// memory (reader.OpenInMemory: 2 MiB pages on Linux) instead of mapping
	// it: llama.cpp's --no-mmap. The weights then stream at the same rate
	// whatever the page cache made of the file; it costs the file's size
	// in memory. Load and LoadFile ignore it.
	NoMmap bool
	// checkOnly: Load checks without reading tensor data (CheckFile).
	checkOnly bool
}

type layer struct {
	attnNorm, attnSubNorm, ffnNorm, ffnSubNorm []float32
	projections
	graphExtra
}

// projections are the seven ternary weight matrices of one block, shared by
// the causal LM and the embedding models.
type projections struct {
	wq, wk, wv, wo, wGate, wUp, wDown *Matrix
}

// load fills the projections of block prefix ("blk.N.") with matrix, which
// returns the tensor name with row length k (ne[0]) and rows rows (ne[1]).
// embd is the hidden size, qDim = heads·head_dim, kvDim = kv_heads·head_dim,
// ff the FFN width.
func (pr *projections) load(prefix string, embd, qDim, kvDim, ff int, matrix func(name string, k, rows int) (*Matrix, error)) error {
	steps := []struct {
		dst  **Matrix
		name string
		k, n int
	}{
		{&pr.wq, "attn_q", embd, qDim},
		{&pr.wk, "attn_k", embd, kvDim},
		{&pr.wv, "attn_v", embd, kvDim},
		{&pr.wo, "attn_output", qDim, embd},
		{&pr.wGate, "ffn_gate", embd, ff},
		{&pr.wUp, "ffn_up", embd, ff},
		{&pr.wDown, "ffn_down", ff, embd},
	}
	for _, s := range steps {
		m, err := matrix(prefix+s.name+".weight", s.k, s.n)
		if err != nil {
			return err
		}
		*s.dst = m
	}
	return nil
}

// Model is a loaded BitNet model: hyper-parameters, norm vectors decoded to
// float32 and weight matrices in their stored form.
type Model struct {
	Arch   string
	Params Params

	spec       archSpec
	opts       Options
	tokEmbd    *Matrix // ne [NEmbd, NVocab]
	output     *Matrix // LM head: output.weight or tok_embd (tied)
	outputNorm []float32
	layers     []layer
}

// maxHyperParam bounds every integer hyper-parameter key Load reads
// (block_count, embedding_length, context_length, …): 2^31 (2^31−1 on 32-bit
// builds, the largest int there), far above any real model, so products of
// them stay inside int on 64-bit hosts.
const maxHyperParam = min(1<<31, math.MaxInt)

// Load builds a Model from a GGUF file: arch bitnet (silu FFN),
// bitnet-b1.58 or bitnet-25 (relu² FFN). Weight types F32, F16, BF16, Q8_0,
// I2_S, TQ1_0, TQ2_0, Q6_K, Q4_K, IQ1_BN and IQ2_BN are supported for the
// matrices, TL1/TL2 with Options.TLKernels (run as I2_S, see NewTLMatrix),
// F32/F16/BF16 for norm vectors. Unless Options.Arith says otherwise, a
// file runs with its home runtime's arithmetic (DefaultArith): a file with
// IQ1_BN/IQ2_BN tensors (made for ik_llama.cpp) with Options.F32Attention
// set, a Q2_0 file with mainline llama.cpp's.
// Errors wrap ErrUnsupportedArch or ErrMissing where they apply and name the
// key or tensor (e.g. `tensor blk.1.ffn_up.weight: missing`).
func Load(f File, opts Options) (*Model, error) {
	l, err := newLoader(f, opts, func(a string) bool { _, ok := archs[a]; return ok }, " (supported: "+strings.Join(archNames, ", ")+")")
	if err != nil {
		return nil, err
	}
	if IsEmbeddingFile(f.KVs, f.Tensors) {
		return nil, fmt.Errorf("general.architecture %s: a sentence-embedding model (pooling_type, or input norms and no output head): %w as a causal LM; run it with embed", l.arch, ErrUnsupportedArch)
	}
	resolveArith(&opts, l.arch, f.Tensors)
	spec := archs[l.arch]
	ffn := spec.ffn
	l.r.activation(&ffn)
	h, err := l.header(causalHeader, nil)
	if err != nil {
		return nil, err
	}
	if err := l.tensors(); err != nil {
		return nil, err
	}
	m := &Model{Arch: l.arch, opts: opts, spec: spec}
	if m.tokEmbd, err = l.matrix("token_embd.weight", h.NEmbd, -1); err != nil {
		return nil, err
	}
	nVocab := m.tokEmbd.M
	var vs int
	if l.r.uint(&vs, "vocab_size", nVocab, false); l.r.err != nil {
		return nil, l.r.err
	}
	if vs != nVocab {
		return nil, fmt.Errorf("key %s.vocab_size %d differs from token_embd.weight rows %d", l.arch, vs, nVocab)
	}
	m.output = m.tokEmbd
	if _, ok := l.infos["output.weight"]; ok {
		if m.output, err = l.matrix("output.weight", h.NEmbd, nVocab); err != nil {
			return nil, err
		}
	}
	if m.outputNorm, err = l.vector("output_norm.weight", h.NEmbd); err != nil {
		return nil, err
	}
	if h.NFF == 0 {
		if ti, ok := l.infos["blk.0.ffn_gate.weight"]; ok && len(ti.Ne) == 2 {
			h.NFF = int(ti.Ne[1])
		}
	}
	m.Params = Params{NLayer: h.NLayer, NEmbd: h.NEmbd, NHead: h.NHead, NHeadKV: h.NHeadKV, HeadDim: h.HeadDim, NFF: h.NFF,
		NVocab: nVocab, NCtx: h.NCtx, RopeTheta: h.RopeTheta, RopeFreqScale: h.RopeFreqScale, RMSEps: h.RMSEps, FFN: ffn}
	m.layers = make([]layer, h.NLayer)
	if err := loadLayers(l, &h, m.layers, func(x *layer) *projections { return &x.projections }, spec.vectors); err != nil {
		return nil, err
	}
	if err := loadGraphExtra(l, &h, spec, m.layers, &m.Params.NormInRMSEps); err != nil {
		return nil, err
	}
	return m, nil
}

// productsFit checks that the widths Load and Session compute from the
// hyper-parameters (heads × head dimension for q and for k/v, the row
// scratch of max(embedding, FFN, q) values) fit in int. Every key is below
// maxHyperParam, so the products fit on 64-bit builds; on a 32-bit build
// (int is 32 bits: linux/386, linux/arm) a product beyond 2^31−1 is one
// error line naming the keys instead of a wrapped size.
func productsFit(arch string, nHead, nHeadKV, headDim int) error {
	for _, c := range []struct {
		keys string
		a, b int
	}{
		{"attention.head_count × attention.key_length (head dimension)", nHead, headDim},
		{"attention.head_count_kv × attention.key_length (head dimension)", nHeadKV, headDim},
	} {
		if n := int64(c.a) * int64(c.b); n > math.MaxInt {
			return fmt.Errorf("keys %s.%s: %d × %d = %d does not fit in this 32-bit build (largest %d); use a 64-bit build of bitnet-convert", arch, c.keys, c.a, c.b, n, math.MaxInt)
		}
	}
	return nil
}

// decodeVector decodes a 1-D F32, F16 or BF16 tensor of n elements.
func decodeVector(t gguf.Type, n int, data []byte) ([]float32, error) {
	if err := vectorType(t); err != nil {
		return nil, err
	}
	v := make([]float32, n)
	switch t {
	case gguf.TypeF32:
		if len(data) < 4*n {
			return nil, fmt.Errorf("F32 [%d] needs %d bytes, have %d", n, 4*n, len(data))
		}
		for i := range v {
			v[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
		}
	case gguf.TypeF16, gguf.TypeBF16:
		if len(data) < 2*n {
			return nil, fmt.Errorf("%s [%d] needs %d bytes, have %d", t, n, 2*n, len(data))
		}
		for i := range v {
			h := binary.LittleEndian.Uint16(data[2*i:])
			if t == gguf.TypeF16 {
				v[i] = f16ToF32(h)
			} else {
				v[i] = bf16ToF32(h)
			}
		}
	}
	return v, nil
}

// vectorType refuses a norm vector type other than F32, F16 and BF16.
func vectorType(t gguf.Type) error {
	if err := notMainline(t); err != nil {
		return err
	}
	if t != gguf.TypeF32 && t != gguf.TypeF16 && t != gguf.TypeBF16 {
		return fmt.Errorf("type %s is not supported for a norm vector (F32, F16, BF16)", t)
	}
	return nil
}

// embedRow writes row id of token_embd (ne [NEmbd, NVocab]) as float32 into
// dst, as ggml's get_rows does: F32 copied, F16/BF16 widened, Q8_0 as d·q,
// TQ1_0/TQ2_0, Q6_K and Q4_K by their dequantize_row functions.
func (w *Matrix) embedRow(dst []float32, id int) {
	if w.kern.embed != nil {
		w.kern.embed(w, dst, id)
	}
}
