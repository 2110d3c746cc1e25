package runtime

import (
	"fmt"
	"strings"

	"github.com/bitnet-convert/bitnet-convert/format"
	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
)

// This file is the one model loader behind Load (causal LMs) and
// LoadEmbedding (sentence-embedding models): the architecture lookup, the
// header keys both read, the layer-count bound, the head-dimension rule and
// the tensor loading with shape checks. What differs between architectures
// is data: a headerRule per model family and a vecRow list per architecture
// (archs in model.go, embedArchs in embed_<arch>.go).

// header holds the hyper-parameters every model file declares, read by
// loader.header from the GGUF KVs "{arch}.…".
type header struct {
	NLayer, NEmbd, NHead, NHeadKV int
	NFF, NCtx, HeadDim            int
	RopeTheta, RMSEps             float32
	// RopeFreqScale is llama.cpp's freq_scale, 1/{arch}.rope.scaling.factor
	// for linear scaling (1 without it; kvReader.ropeScaling).
	RopeFreqScale float32
}

// headerRule is how a model family reads its header.
type headerRule struct {
	// ctxDefault is context_length when the key is absent.
	ctxDefault int
	// ffnRequired: feed_forward_length must be present (otherwise it may be
	// taken from blk.0.ffn_gate's rows, as llama.cpp's loader allows).
	ffnRequired bool
	// maxLayers bounds block_count (0: only maxHyperParam).
	maxLayers int
	// headDimFromRope: the head dimension defaults to rope.dimension_count,
	// then embedding_length / head_count (bitnet.cpp's embedding converter
	// writes rope.dimension_count = head_dim); otherwise to
	// embedding_length / head_count, and rope.dimension_count must equal it.
	headDimFromRope bool
}

// vecDim is the length of a norm vector, in header sizes.
type vecDim int

const (
	vHidden  vecDim = iota // embedding_length
	vQ                     // head_count × head dimension
	vFF                    // feed_forward_length
	vHeadDim               // head dimension
)

func (h *header) size(d vecDim) int {
	switch d {
	case vQ:
		return h.NHead * h.HeadDim
	case vFF:
		return h.NFF
	case vHeadDim:
		return h.HeadDim
	}
	return h.NEmbd
}

// vecRow is one per-layer norm vector an architecture needs: the tensor
// "blk.N.<name>.weight" of length dim, stored in the field dst returns.
type vecRow[L any] struct {
	name string
	dim  vecDim
	dst  func(*L) *[]float32
}

// loader reads one GGUF File.
type loader struct {
	f    File
	arch string
	opts Options
	kv   func(string) (gguf.Value, bool)
	r    kvReader
	// set by tensors
	infos  map[string]gguf.TensorInfo
	layout format.Layout
	// dry (Options.checkOnly, CheckFile): matrix and vector check shapes
	// and types without reading data.
	dry bool
}

// newLoader reads general.architecture and accepts it when known reports
// it; supported completes the error for another one (e.g. " (supported:
// qwen3, gemma3)").
func newLoader(f File, opts Options, known func(string) bool, supported string) (*loader, error) {
	kv := func(key string) (gguf.Value, bool) { return gguf.Lookup(f.KVs, key) }
	av, ok := kv("general.architecture")
	if !ok {
		return nil, fmt.Errorf("key general.architecture: %w", ErrMissing)
	}
	arch, isString := av.V.(string)
	if !isString {
		return nil, fmt.Errorf("key general.architecture: a %s, want a string such as bitnet; fix the GGUF metadata", av.Type)
	}
	if !known(arch) {
		return nil, fmt.Errorf("general.architecture %s: %w%s", reader.Quote(arch), ErrUnsupportedArch, supported)
	}
	return &loader{f: f, arch: arch, opts: opts, kv: kv, r: kvReader{arch: arch, kv: kv}, dry: opts.checkOnly}, nil
}

// header reads the hyper-parameters of rule, checks them against each other
// and against the file's blk.N tensors (before anything is allocated per
// layer), and applies the head-dimension rule. extra reads the family's own
// keys after the shared ones, with the same kvReader (its error is
// reported first).
func (l *loader) header(rule headerRule, extra func(r *kvReader, h *header)) (header, error) {
	var h header
	r := &l.r
	r.uint(&h.NLayer, "block_count", 0, true)
	r.uint(&h.NEmbd, "embedding_length", 0, true)
	r.uint(&h.NHead, "attention.head_count", 0, true)
	r.uint(&h.NHeadKV, "attention.head_count_kv", h.NHead, false)
	r.uint(&h.NFF, "feed_forward_length", 0, rule.ffnRequired)
	r.uint(&h.NCtx, "context_length", rule.ctxDefault, false)
	r.float(&h.RopeTheta, "rope.freq_base", 10000, false)
	r.float(&h.RMSEps, "attention.layer_norm_rms_epsilon", 0, true)
	r.ropeScaling(&h.RopeFreqScale)
	if extra != nil {
		extra(r, &h)
	}
	r.positive("rope.freq_base", float64(h.RopeTheta))
	r.positive("context_length", float64(h.NCtx))
	r.positive("attention.layer_norm_rms_epsilon", float64(h.RMSEps))
	if r.err != nil {
		return h, r.err
	}
	if h.NLayer == 0 || h.NEmbd == 0 || h.NHead == 0 || h.NHeadKV == 0 || h.NHead%h.NHeadKV != 0 ||
		(rule.ffnRequired && h.NFF == 0) || (rule.maxLayers > 0 && h.NLayer > rule.maxLayers) {
		ffn := ""
		if rule.ffnRequired {
			ffn = fmt.Sprintf(", FFN %d", h.NFF)
		}
		return h, fmt.Errorf("bad hyper-parameters: %d layers, embedding %d%s, %d heads, %d KV heads (heads must be a multiple of KV heads)", h.NLayer, h.NEmbd, ffn, h.NHead, h.NHeadKV)
	}
	if err := checkLayerCount(l.arch, l.f.Tensors, h.NLayer); err != nil {
		return h, err
	}
	if err := l.headDim(&h, rule.headDimFromRope); err != nil {
		return h, err
	}
	return h, productsFit(l.arch, h.NHead, h.NHeadKV, h.HeadDim)
}

// headDimSource says where the head dimension came from without
// attention.key_length, for messages.
func headDimSource(a string, rope bool) string {
	if rope {
		return "from " + a + ".rope.dimension_count"
	}
	return "embedding_length / head_count"
}

// headDim sets h.HeadDim from attention.key_length, else (fromRope)
// rope.dimension_count, else embedding_length / head_count, and checks it is
// even and non-zero, that attention.value_length equals it (default: equal)
// and that rope.dimension_count equals it (partial rope is not supported).
func (l *loader) headDim(h *header, fromRope bool) error {
	a, r := l.arch, &l.r
	_, explicit := l.kv(a + ".attention.key_length")
	_, ropeGiven := l.kv(a + ".rope.dimension_count")
	var rope, vl int
	def := h.NEmbd / h.NHead
	if fromRope {
		r.uint(&rope, "rope.dimension_count", def, false)
		def = rope
	}
	r.uint(&h.HeadDim, "attention.key_length", def, false)
	r.uint(&vl, "attention.value_length", h.HeadDim, false)
	if !fromRope {
		r.uint(&rope, "rope.dimension_count", h.HeadDim, false)
	}
	if r.err != nil {
		return r.err
	}
	switch {
	case (h.HeadDim == 0 || h.HeadDim%2 != 0) && explicit:
		return fmt.Errorf("key %s.attention.key_length %d: the head dimension must be even and non-zero; fix the GGUF metadata", a, h.HeadDim)
	case (h.HeadDim == 0 || h.HeadDim%2 != 0) && fromRope && ropeGiven:
		return fmt.Errorf("key %s.rope.dimension_count %d (the head dimension without attention.key_length) must be even and non-zero; fix the GGUF metadata", a, h.HeadDim)
	case h.HeadDim == 0 || h.HeadDim%2 != 0:
		return fmt.Errorf("keys %s.embedding_length %d / %s.attention.head_count %d give head dimension %d, which must be even and non-zero; fix the GGUF metadata", a, h.NEmbd, a, h.NHead, h.HeadDim)
	case vl != h.HeadDim && explicit:
		return fmt.Errorf("key %s.attention.value_length %d differs from key_length %d (not supported)", a, vl, h.HeadDim)
	case vl != h.HeadDim:
		return fmt.Errorf("key %s.attention.value_length %d differs from the head dimension %d (no attention.key_length: %s); not supported, fix the GGUF metadata", a, vl, h.HeadDim, headDimSource(a, fromRope && ropeGiven))
	case rope != h.HeadDim && explicit && !fromRope:
		// Both keys are given and disagree: name both, not only the
		// rope one (H14 blamed the key that was right).
		return fmt.Errorf("keys %s.attention.key_length %d and %s.rope.dimension_count %d differ (embedding_length / head_count gives %d); partial rope is not supported, fix the GGUF metadata", a, h.HeadDim, a, rope, h.NEmbd/h.NHead)
	case rope != h.HeadDim:
		return fmt.Errorf("key %s.rope.dimension_count %d must equal the head dimension %d (partial rope is not supported)", a, rope, h.HeadDim)
	}
	return nil
}

// tensors indexes the file's tensors (refusing separate scale tensors),
// and reads the TL1/TL2 tiling and the I2_S layout the matrices need
// (Options.I2SLayout, else the file's format.LayoutKey, else x86).
func (l *loader) tensors() error {
	l.infos = make(map[string]gguf.TensorInfo, len(l.f.Tensors))
	for _, ti := range l.f.Tensors {
		if strings.HasSuffix(ti.Name, ".scale") || strings.HasSuffix(ti.Name, "_scale") {
			return fmt.Errorf("tensor %s: separate scale tensors are not supported (the scale must live in the I2_S data or the values)", ti.Name)
		}
		ti.Ne = trimTrailingOnes(ti.Ne)
		l.infos[ti.Name] = ti
	}
	if l.opts.TLKernels == nil {
		ks, _, err := StoredKernelConfig(l.f.KVs)
		if err != nil {
			return err
		}
		l.opts.TLKernels = ks
	}
	// I2_S in the ARM or 1×4 layout (recorded by our converter under
	// format.LayoutKey) is repacked to the x86 layout the kernel reads.
	l.layout = format.LayoutX86
	if v, ok := gguf.Lookup(l.f.KVs, format.LayoutKey); ok {
		s, isString := v.V.(string)
		if !isString {
			return fmt.Errorf("key %s has type %s; want a string (x86, arm or x86-1x4)", format.LayoutKey, v.Type)
		}
		lay, err := format.ParseLayout(s)
		if err != nil {
			return fmt.Errorf("key %s: %w", format.LayoutKey, err)
		}
		l.layout = lay
	}
	if l.opts.I2SLayout != "" {
		lay, err := format.ParseLayout(string(l.opts.I2SLayout))
		if err != nil {
			return fmt.Errorf("I2_S layout option: %w", err)
		}
		l.layout = lay
	}
	return nil
}

// trimTrailingOnes returns ne without the trailing 1-dims past the second
// ([256 512 1 1] is [256 512]; [256 1 1] is [256 1], which vector takes
// as [256]): llama.cpp's check_tensor_dims pads every shape to four dims
// with 1s, and gguf-py writes the trailing 1s of a numpy shape (defect H20:
// such files were refused). ne is not modified.
func trimTrailingOnes(ne []uint64) []uint64 {
	n := len(ne)
	for n > 2 && ne[n-1] == 1 {
		n--
	}
	return ne[:n:n]
}

// matrix loads the 2-D tensor name with ne = [k, rows] (rows < 0: any
// positive count up to 2^31).
func (l *loader) matrix(name string, k, rows int) (*Matrix, error) {
	ti, ok := l.infos[name]
	if !ok {
		return nil, fmt.Errorf("tensor %s: %w", name, ErrMissing)
	}
	if len(ti.Ne) != 2 || ti.Ne[0] != uint64(k) || (rows >= 0 && ti.Ne[1] != uint64(rows)) || ti.Ne[1] == 0 || ti.Ne[1] > 1<<31 {
		return nil, fmt.Errorf("tensor %s: ne %v, want [%d, %d]", name, ti.Ne, k, rows)
	}
	var kern format.Kernel
	if ti.Type == gguf.TypeTL1 || ti.Type == gguf.TypeTL2 {
		var ok bool
		if kern, ok = findKernel(l.opts.TLKernels, int(ti.Ne[1]), k); !ok {
			return nil, fmt.Errorf("tensor %s: %s weight M=%d K=%d needs its kernel_config.ini entry (m = %d, k = %d): pass the file it was converted with (--kernel-config FILE)", name, ti.Type, ti.Ne[1], k, ti.Ne[1], k)
		}
	}
	if l.dry {
		if err := checkMatrixType(ti.Type, k, int(ti.Ne[1]), l.layout, kern); err != nil {
			return nil, fmt.Errorf("tensor %s: %w", name, err)
		}
		return &Matrix{Type: ti.Type, K: k, M: int(ti.Ne[1])}, nil
	}
	data, err := l.f.Data(name)
	if err != nil {
		return nil, fmt.Errorf("tensor %s: %w", name, err)
	}
	var w *Matrix
	switch {
	case ti.Type == gguf.TypeTL1 || ti.Type == gguf.TypeTL2:
		w, err = NewTLMatrix(ti.Type, k, int(ti.Ne[1]), data, kern)
	case ti.Type == gguf.TypeI2S && l.layout != format.LayoutX86:
		w, err = newRepackedMatrix(format.I2S{Layout: l.layout}, k, int(ti.Ne[1]), data)
	default:
		w, err = NewMatrix(ti.Type, k, int(ti.Ne[1]), data)
	}
	if err != nil {
		return nil, fmt.Errorf("tensor %s: %w", name, err)
	}
	return w, nil
}

// vector loads the 1-D tensor name of n elements as float32.
func (l *loader) vector(name string, n int) ([]float32, error) {
	ti, ok := l.infos[name]
	if !ok {
		return nil, fmt.Errorf("tensor %s: %w", name, ErrMissing)
	}
	if len(ti.Ne) == 2 && ti.Ne[1] == 1 {
		ti.Ne = ti.Ne[:1] // [n 1]: a vector with a trailing 1 (H20)
	}
	if len(ti.Ne) != 1 || ti.Ne[0] != uint64(n) {
		return nil, fmt.Errorf("tensor %s: ne %v, want [%d]", name, ti.Ne, n)
	}
	if l.dry {
		if err := vectorType(ti.Type); err != nil {
			return nil, fmt.Errorf("tensor %s: %w", name, err)
		}
		return nil, nil
	}
	data, err := l.f.Data(name)
	if err != nil {
		return nil, fmt.Errorf("tensor %s: %w", name, err)
	}
	v, err := decodeVector(ti.Type, n, data)
	if err != nil {
		return nil, fmt.Errorf("tensor %s: %w", name, err)
	}
	return v, nil
}

// loadLayers loads the seven projections and the rows' norm vectors of
// every block into layers (len NLayer), reading each layer's fields through
// proj and the rows' dst.
func loadLayers[L any](l *loader, h *header, layers []L, proj func(*L) *projections, rows []vecRow[L]) error {
	qDim, kvDim := h.NHead*h.HeadDim, h.NHeadKV*h.HeadDim
	for i := range layers {
		b := fmt.Sprintf("blk.%d.", i)
		if err := proj(&layers[i]).load(b, h.NEmbd, qDim, kvDim, h.NFF, l.matrix); err != nil {
			return err
		}
		for _, row := range rows {
			v, err := l.vector(b+row.name+".weight", h.size(row.dim))
			if err != nil {
				return err
			}
			*row.dst(&layers[i]) = v
		}
	}
	return nil
}

// checkMatrixType is what NewMatrix, NewTLMatrix and newRepackedMatrix
// check of a k × m weight of type typ before they read its data (the
// type, the kernel config of a TL1/TL2 weight, the format's shape rule),
// for CheckFile.
func checkMatrixType(typ gguf.Type, k, m int, layout format.Layout, kern format.Kernel) error {
	if err := notMainline(typ); err != nil {
		return err
	}
	switch {
	case typ == gguf.TypeTL1 || typ == gguf.TypeTL2:
		f, _ := format.ForType(typ, format.LayoutX86, []format.Kernel{kern})
		return f.Check(k, m)
	case typ == gguf.TypeI2S && layout != format.LayoutX86:
		return format.I2S{Layout: layout}.Check(k, m)
	}
	if _, ok := weightKernels[typ]; !ok {
		return unsupportedType(typ)
	}
	return nil
}

// CheckFile runs Load's checks (LoadEmbedding's for an embedding model, IsEmbeddingFile) on
// a file's KVs and tensor infos without reading tensor data (f.Data is not
// used): the keys, the tensor set, the shapes and the types. It refuses
// what Load refuses before the data, with the same error; requant runs it
// on the file it plans to write (defect H8).
func CheckFile(f File, opts Options) error {
	opts.checkOnly = true
	if IsEmbeddingFile(f.KVs, f.Tensors) {
		_, err := LoadEmbedding(f, opts)
		return err
	}
	_, err := Load(f, opts)
	return err
}
