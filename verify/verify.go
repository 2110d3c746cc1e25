package verify

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"

	"github.com/bitnet-convert/bitnet-convert/codegen"
	"github.com/bitnet-convert/bitnet-convert/convert"
	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
	"github.com/bitnet-convert/bitnet-convert/quantize"
	"github.com/bitnet-convert/bitnet-convert/runtime"
	"github.com/bitnet-convert/bitnet-convert/tensormap"
	"github.com/bitnet-convert/bitnet-convert/tokenizer"
)

// Thresholds are the pass limits of the numeric comparison between the GGUF
// in the runtime and the float reference.
type Thresholds struct {
	MinTop1   float64 `json:"min_top1"`    // minimum fraction of positions whose argmax agrees
	MaxDelta  float64 `json:"max_delta"`   // maximum |Δlogit| over all positions and ids
	MaxKL     float64 `json:"max_kl"`      // maximum mean KL(reference ‖ runtime) in nats
	MaxPPLRel float64 `json:"max_ppl_rel"` // maximum |ppl_runtime/ppl_reference − 1|
	// MinFiniteSpread is the runtime-only check's lower bound on the spread
	// (max − min) of each row of logits (degenerate output has ~0).
	MinFiniteSpread float64 `json:"min_finite_spread"`
	// MinCosine is the embedding models' lower bound on the cosine
	// similarity between the runtime's and the reference's pooled,
	// L2-normalised embedding, per prompt (verify/embed.go).
	MinCosine float64 `json:"min_cosine"`
}

// DefaultThresholds returns the limits used when no flag overrides them.
// Ternary types (I2_S, TL1, TL2) run with int8 activations, which moves
// logits noticeably against a float reference (bitnet.cpp's own I2_S and F32
// files differ by up to 0.62 on the golden model's prompt); float files
// differ only by the runtime's F16 KV cache (and F16 operand rounding for F16
// weights).
func DefaultThresholds(ternary bool) Thresholds {
	if ternary {
		return Thresholds{MinTop1: 0.6, MaxDelta: 1.5, MaxKL: 0.05, MaxPPLRel: 0.15, MinFiniteSpread: 1e-3, MinCosine: 0.999}
	}
	return Thresholds{MinTop1: 0.9, MaxDelta: 0.05, MaxKL: 1e-3, MaxPPLRel: 0.01, MinFiniteSpread: 1e-3, MinCosine: 0.99999}
}

// Options configures Run.
type Options struct {
	GGUF string // the file to verify
	HF   string // the Hugging Face checkpoint it came from ("" = runtime checks only)
	// Prompt is tokenized with the GGUF's vocabulary; IDs are used as given.
	// With neither, the default prompt is used (ids when the file has no
	// vocabulary).
	Prompt string
	IDs    []int32
	// Prompts are the texts an embedding model is checked on, one cosine
	// each (default: DefaultEmbedPrompts, or Prompt when given).
	Prompts []string
	// Pooling overrides an embedding model's pooling ("mean", "cls",
	// "last"; "" = the file's {arch}.pooling_type).
	Pooling string
	// Tokens is how many greedy tokens the runtime generates after the prompt;
	// both models then score the same continuation.
	Tokens int
	// Thresholds, when nil, are DefaultThresholds for the file's type.
	Thresholds *Thresholds
	// Adjust, when set, may change the thresholds chosen above before any
	// check runs (the CLI's --min-top1 … flags override single limits).
	Adjust func(*Thresholds)
	// KernelConfig is the kernel_config.ini of a TL1/TL2 file (nil: derived
	// from the shapes as the converter does).
	KernelConfig []byte
	// WeightScale overrides the packed checkpoint rule, as in hf2gguf.
	WeightScale convert.WeightScaleRule
	Threads     int
}

// DefaultPrompt is used when neither Prompt nor IDs is given.
const DefaultPrompt = "Hello world, this is a tiny BitNet test."

// TensorCheck is the structural result of one tensor.
type TensorCheck struct {
	Name   string `json:"name"`
	Type   string `json:"type"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail,omitempty"`
}

// Numbers is the numeric comparison on the prompt.
type Numbers struct {
	Positions     int     `json:"positions"`
	Top1Agreement float64 `json:"top1_agreement"`
	MaxAbsDelta   float64 `json:"max_abs_delta_logit"`
	MaxDeltaPos   int     `json:"max_delta_position"`
	MeanKL        float64 `json:"mean_kl"`
	PPLRuntime    float64 `json:"ppl_runtime"`
	PPLReference  float64 `json:"ppl_reference"`
}

// Report is the outcome of Run; Pass is false when any check failed, and
// Failures lists them, the first one first.
type Report struct {
	GGUF       string        `json:"gguf"`
	HF         string        `json:"hf,omitempty"`
	Arch       string        `json:"arch"`
	Ternary    bool          `json:"ternary"`
	Tensors    []TensorCheck `json:"tensors,omitempty"`
	Metadata   []string      `json:"metadata_mismatches,omitempty"`
	IDs        []int32       `json:"ids"`
	Numbers    *Numbers      `json:"numbers,omitempty"`
	Embeddings []EmbedCheck  `json:"embeddings,omitempty"`
	Thresholds Thresholds    `json:"thresholds"`
	Failures   []string      `json:"failures,omitempty"`
	Pass       bool          `json:"pass"`
}

func (r *Report) fail(format string, args ...any) {
	r.Failures = append(r.Failures, fmt.Sprintf(format, args...))
}

// ErrContextLength is returned (wrapped with the numbers) by Run when the
// prompt plus Options.Tokens does not fit in the model's context_length
// (runtime Params.NCtx); nothing is evaluated.
var ErrContextLength = errors.New("does not fit the model")

// ternaryTypes run with int8 activations.
var ternaryTypes = map[gguf.Type]bool{gguf.TypeI2S: true, gguf.TypeTL1: true, gguf.TypeTL2: true}

// Run verifies opts.GGUF. It returns an error only when the check cannot run
// at all (unreadable file, unsupported architecture); a file that runs but
// disagrees gives a Report with Pass false.
func Run(opts Options) (*Report, error) {
	f, err := reader.Open(opts.GGUF)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rep := &Report{GGUF: opts.GGUF, HF: opts.HF, Arch: f.Arch()}
	for _, t := range f.Tensors {
		if ternaryTypes[t.Type] {
			rep.Ternary = true
		}
	}
	rep.Thresholds = DefaultThresholds(rep.Ternary)
	if opts.Thresholds != nil {
		rep.Thresholds = *opts.Thresholds
	}
	if opts.Adjust != nil {
		opts.Adjust(&rep.Thresholds)
	}
	if runtime.IsEmbeddingArch(rep.Arch) {
		return runEmbedding(f, rep, opts)
	}
	ropts := runtime.Options{Threads: opts.Threads}
	if opts.KernelConfig != nil {
		ks, err := codegen.ParseKernelConfig(opts.KernelConfig)
		if err != nil {
			return nil, fmt.Errorf("kernel configuration: %w", err)
		}
		ropts.TLKernels = ks
	}
	model, err := runtime.LoadFile(f, ropts)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", opts.GGUF, err)
	}
	ids, err := promptIDs(f, opts)
	if err != nil {
		return nil, err
	}
	if len(ids)+opts.Tokens > model.Params.NCtx {
		return nil, fmt.Errorf("the prompt (%d tokens) plus %d generated tokens exceeds the context length %d of %s (%w)", len(ids), opts.Tokens, model.Params.NCtx, opts.GGUF, ErrContextLength)
	}
	var src *convert.Source
	if opts.HF != "" {
		src, err = convert.OpenSource(opts.HF, convert.Options{WeightScale: opts.WeightScale, Threads: opts.Threads})
		if err != nil {
			return nil, err
		}
		defer src.Close()
		checkStructure(rep, f, src, opts)
		checkMetadata(rep, f, src)
	}
	// Runtime logits over the prompt, then a greedy continuation.
	sess := model.NewSession(len(ids) + opts.Tokens + 1)
	var runRows [][]float32
	seq := append([]int32(nil), ids...)
	for i := 0; i < len(seq); i++ {
		logits, err := sess.Eval(seq[i])
		if err != nil {
			return nil, fmt.Errorf("runtime at position %d: %w", i, err)
		}
		runRows = append(runRows, append([]float32(nil), logits...))
		if i == len(seq)-1 && len(seq) < len(ids)+opts.Tokens {
			seq = append(seq, int32(argmax32(logits)))
		}
	}
	rep.IDs = seq
	for p, row := range runRows {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, v := range row {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				rep.fail("runtime logits at position %d are not finite", p)
				break
			}
			lo, hi = math.Min(lo, float64(v)), math.Max(hi, float64(v))
		}
		if hi-lo < rep.Thresholds.MinFiniteSpread {
			rep.fail("runtime logits at position %d are degenerate (spread %.3g)", p, hi-lo)
		}
	}
	if src != nil {
		ref, err := buildReference(src, f)
		if err != nil {
			rep.fail("float reference: %v", err)
		} else {
			compareNumbers(rep, ref, runRows, seq)
		}
	}
	rep.Pass = len(rep.Failures) == 0
	return rep, nil
}

func promptIDs(f *reader.File, opts Options) ([]int32, error) {
	if len(opts.IDs) > 0 {
		return opts.IDs, nil
	}
	prompt := opts.Prompt
	if _, ok := f.Get("tokenizer.ggml.tokens"); !ok {
		if prompt != "" {
			return nil, fmt.Errorf("%s has no vocabulary: pass --ids instead of --prompt", opts.GGUF)
		}
		n, _ := f.Uint(f.Arch() + ".vocab_size")
		if n == 0 {
			n = 2
		}
		return []int32{1 % int32(n), 100 % int32(n), 200 % int32(n), 300 % int32(n), 400 % int32(n), 7 % int32(n), 8 % int32(n)}, nil
	}
	if prompt == "" {
		prompt = DefaultPrompt
	}
	v, err := tokenizer.FromGGUF(f.KVs)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", opts.GGUF, err)
	}
	tok, err := tokenizer.New(v)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", opts.GGUF, err)
	}
	ids, err := tok.Encode(prompt, true, false)
	if err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return nil, errors.New("the prompt tokenizes to no tokens")
	}
	return ids, nil
}

// checkStructure compares every GGUF tensor with its HF source.
func checkStructure(rep *Report, f *reader.File, src *convert.Source, opts Options) {
	var kernels []codegen.Kernel
	seen := map[string]bool{}
	for _, ti := range f.Tensors {
		seen[ti.Name] = true
		tc := TensorCheck{Name: ti.Name, Type: ti.Type.String(), OK: true}
		detail := func() string {
			pt, ok := src.Tensor(ti.Name)
			if !ok {
				return "no source tensor in the checkpoint"
			}
			data, err := f.TensorData(ti.Name)
			if err != nil {
				return err.Error()
			}
			if ne := reverseShape(pt.HFShape); !reflect.DeepEqual(ne, ti.Ne) && !(len(pt.HFShape) == 0 && reflect.DeepEqual(ti.Ne, []uint64{1})) {
				return fmt.Sprintf("ne %v, source implies %v", ti.Ne, ne)
			}
			if ternaryTypes[ti.Type] {
				if pt.Class != tensormap.Projection {
					return "ternary type on a non-projection"
				}
				if (ti.Type == gguf.TypeTL1 || ti.Type == gguf.TypeTL2) && kernels == nil {
					ks, err := tlKernels(f, opts.KernelConfig)
					if err != nil {
						return err.Error()
					}
					kernels = ks
				}
				return compareTernary(ti, data, src, kernels)
			}
			return compareFloat(ti, data, src)
		}()
		if detail != "" {
			tc.OK, tc.Detail = false, detail
			rep.fail("tensor %s: %s", ti.Name, detail)
		}
		rep.Tensors = append(rep.Tensors, tc)
	}
	for _, pt := range src.Plan().Tensors {
		if !seen[pt.GGUFName] {
			rep.fail("tensor %s (from %s) is missing from the GGUF", pt.GGUFName, pt.HFName)
		}
	}
}

func reverseShape(s []uint64) []uint64 {
	out := make([]uint64, len(s))
	for i, v := range s {
		out[len(s)-1-i] = v
	}
	return out
}

// tlKernels returns the kernel configuration of a TL file: the given
// kernel_config.ini, or the one hf2gguf stored in the file.
func tlKernels(f *reader.File, ini []byte) ([]codegen.Kernel, error) {
	if ini != nil {
		return codegen.ParseKernelConfig(ini)
	}
	ks, ok, err := runtime.StoredKernelConfig(f.KVs)
	if err == nil && !ok {
		err = fmt.Errorf("the file does not record its TL kernel configuration: pass the kernel_config.ini it was converted with (--kernel-config)")
	}
	return ks, err
}

// compareTernary decodes codes and scale from the stored layout and compares
// them with the source: codes exactly, the scale within one ulp.
func compareTernary(ti gguf.TensorInfo, data []byte, src *convert.Source, kernels []codegen.Kernel) string {
	k, m := int(ti.Ne[0]), int(ti.Ne[1])
	got := make([]int8, k*m)
	var scale float32
	var err error
	switch ti.Type {
	case gguf.TypeI2S:
		quantize.UnpackI2S(got, data[:k*m/4])
		scale = math.Float32frombits(binary.LittleEndian.Uint32(data[k*m/4:]))
	case gguf.TypeTL1, gguf.TypeTL2:
		kn, ok := codegen.LookupKernel(kernels, m, k)
		if !ok {
			return fmt.Sprintf("no kernel for [M=%d, K=%d] in the kernel configuration (pass --kernel-config)", m, k)
		}
		if ti.Type == gguf.TypeTL1 {
			scale, err = quantize.UntransformTL1(got, data, m, k, kn.BM, kn.BK, kn.Bm)
		} else {
			scale, err = quantize.UntransformTL2(got, data, m, k, kn.BM, kn.BK)
		}
		if err != nil {
			return err.Error()
		}
	}
	want, wantScale, err := src.Ternary(ti.Name)
	if err != nil {
		return err.Error()
	}
	for i := range want {
		if got[i] != want[i] {
			return fmt.Sprintf("ternary code %d (row %d, column %d) is %d, source %d", i, i/k, i%k, got[i], want[i])
		}
	}
	if ulps(scale, wantScale) > 1 {
		return fmt.Sprintf("scale %v, source %v", scale, wantScale)
	}
	return ""
}

// compareFloat compares a float (or Q8_0) tensor with the source values
// rounded to the stored type.
func compareFloat(ti gguf.TensorInfo, data []byte, src *convert.Source) string {
	want, err := src.Float32(ti.Name)
	if err != nil {
		return err.Error()
	}
	n := len(want)
	for i := 0; i < n; i++ {
		var got, exp float32
		switch ti.Type {
		case gguf.TypeF32:
			got, exp = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:])), want[i]
		case gguf.TypeF16:
			got, exp = quantize.F16ToF32(binary.LittleEndian.Uint16(data[2*i:])), quantize.F16ToF32(quantize.F32ToF16(want[i]))
		case gguf.TypeBF16:
			got, exp = quantize.BF16ToF32(binary.LittleEndian.Uint16(data[2*i:])), quantize.BF16ToF32(quantize.F32ToBF16(want[i]))
		case gguf.TypeQ8_0:
			blk := data[(i/32)*34:]
			d := quantize.F16ToF32(binary.LittleEndian.Uint16(blk))
			got = d * float32(int8(blk[2+i%32]))
			// half a step, plus what the f16 rounding of d moves the largest
			// quant (127·|d − f16(d)| ≤ 127·d·2⁻¹¹)
			if math.Abs(float64(got-want[i])) > float64(d)*(0.5+127.0/2048)+1e-7 {
				return fmt.Sprintf("element %d is %v, source %v (Q8_0 step %v)", i, got, want[i], d)
			}
			continue
		default:
			return "type " + ti.Type.String() + " cannot be compared"
		}
		if got != exp && ulps(got, exp) > 1 && !(got == 0 && exp == 0) {
			return fmt.Sprintf("element %d is %v, source %v", i, got, exp)
		}
	}
	return ""
}

func ulps(a, b float32) uint32 {
	x, y := math.Float32bits(a), math.Float32bits(b)
	if x > y {
		return x - y
	}
	return y - x
}

// checkMetadata compares the GGUF's architecture KVs with those the
// converter derives from config.json. Keys the reference pipeline does not
// write (rope.dimension_count, key/value_length) may be absent when the
// runtime's default (hidden/heads) equals head_dim.
func checkMetadata(rep *Report, f *reader.File, src *convert.Source) {
	plan := src.Plan()
	arch := f.Arch()
	if arch != plan.Arch && !(arch == "bitnet-25" && plan.Arch == "bitnet-b1.58") {
		rep.Metadata = append(rep.Metadata, fmt.Sprintf("general.architecture %q, config.json implies %q", arch, plan.Arch))
	}
	g := plan.Geometry
	for _, kv := range plan.KVs {
		if !strings.HasPrefix(kv.Key, plan.Arch+".") {
			continue
		}
		key := arch + strings.TrimPrefix(kv.Key, plan.Arch)
		v, ok := f.Get(key)
		if !ok {
			switch strings.TrimPrefix(kv.Key, plan.Arch+".") {
			case "rope.dimension_count", "attention.key_length", "attention.value_length", "rope.scaling.type", "rope.scaling.factor", "context_length":
				if g.HeadDim*g.Heads == g.Hidden {
					continue
				}
			}
			rep.Metadata = append(rep.Metadata, fmt.Sprintf("%s missing (config.json gives %v)", key, kv.Value.V))
			continue
		}
		if !reflect.DeepEqual(v.V, kv.Value.V) {
			rep.Metadata = append(rep.Metadata, fmt.Sprintf("%s = %v, config.json gives %v", key, v.V, kv.Value.V))
		}
	}
	if tv, ok := f.Get("tokenizer.ggml.tokens"); ok {
		if toks, _ := tv.V.([]string); len(toks) != g.Vocab {
			rep.Metadata = append(rep.Metadata, fmt.Sprintf("tokenizer.ggml.tokens has %d entries, vocab_size is %d", len(toks), g.Vocab))
		}
	}
	for _, m := range rep.Metadata {
		rep.fail("metadata: %s", m)
	}
}

// buildReference loads the float reference from the checkpoint.
func buildReference(src *convert.Source, f *reader.File) (*refModel, error) {
	plan := src.Plan()
	cfg := src.Config()
	g := plan.Geometry
	m := &refModel{hidden: g.Hidden, heads: g.Heads, kvHeads: g.HeadsKV, headDim: g.HeadDim, ff: g.FF, vocab: g.Vocab, layers: g.Layers, relu2: plan.Arch == "bitnet-b1.58"}
	eps, ok, err := cfg.Float("rms_norm_eps")
	if err != nil || !ok {
		return nil, fmt.Errorf("config.json: rms_norm_eps missing")
	}
	m.eps = eps
	m.theta = 10000
	if th, ok, _ := cfg.Float("rope_theta"); ok {
		m.theta = th
	}
	get := func(name string) ([]float32, error) { return src.Float32HF(name) } // HF rows: the reference ropes as transformers does
	if m.embed, err = get("token_embd.weight"); err != nil {
		return nil, err
	}
	if m.outNorm, err = get("output_norm.weight"); err != nil {
		return nil, err
	}
	m.head = m.embed
	if _, ok := src.Tensor("output.weight"); ok {
		if m.head, err = get("output.weight"); err != nil {
			return nil, err
		}
	}
	for b := 0; b < g.Layers; b++ {
		var L refLayer
		for _, p := range []struct {
			name string
			dst  *[]float32
		}{{"attn_norm", &L.attnNorm}, {"attn_sub_norm", &L.attnSub}, {"ffn_norm", &L.ffnNorm}, {"ffn_sub_norm", &L.ffnSub},
			{"attn_q", &L.q}, {"attn_k", &L.k}, {"attn_v", &L.v}, {"attn_output", &L.o}, {"ffn_gate", &L.gate}, {"ffn_up", &L.up}, {"ffn_down", &L.down}} {
			name := fmt.Sprintf("blk.%d.%s.weight", b, p.name)
			if _, planned := src.Tensor(name); !planned && strings.HasSuffix(p.name, "_sub_norm") && plan.Arch == "llama" {
				continue // plain llama has no SubLN norms
			}
			v, err := get(name)
			if err != nil {
				return nil, err
			}
			*p.dst = v
		}
		m.l = append(m.l, L)
	}
	return m, nil
}

// compareNumbers runs the reference over seq and compares it with the
// runtime rows.
func compareNumbers(rep *Report, ref *refModel, runRows [][]float32, seq []int32) {
	st := newRefState(ref)
	num := &Numbers{Positions: len(runRows)}
	agree := 0
	var klSum, nllRun, nllRef float64
	scored := 0
	firstBad := -1
	for p := range runRows {
		r, _, err := st.step(seq[p])
		if err != nil {
			rep.fail("float reference at position %d: %v", p, err)
			return
		}
		g := runRows[p]
		if argmax64(r) == argmax32(g) {
			agree++
		} else if firstBad < 0 {
			firstBad = p
		}
		for i := range r {
			if d := math.Abs(r[i] - float64(g[i])); d > num.MaxAbsDelta {
				num.MaxAbsDelta, num.MaxDeltaPos = d, p
			}
		}
		lr, lg := logSoftmax64(r), logSoftmax32(g)
		var kl float64
		for i := range lr {
			kl += math.Exp(lr[i]) * (lr[i] - lg[i])
		}
		klSum += kl
		if p+1 < len(seq) {
			nllRef -= lr[seq[p+1]]
			nllRun -= lg[seq[p+1]]
			scored++
		}
	}
	num.Top1Agreement = float64(agree) / float64(len(runRows))
	num.MeanKL = klSum / float64(len(runRows))
	if scored > 0 {
		num.PPLReference = math.Exp(nllRef / float64(scored))
		num.PPLRuntime = math.Exp(nllRun / float64(scored))
	}
	rep.Numbers = num
	th := rep.Thresholds
	if num.Top1Agreement < th.MinTop1 {
		rep.fail("top-1 agreement %.3f < %.3f (first disagreement at position %d)", num.Top1Agreement, th.MinTop1, firstBad)
	}
	if num.MaxAbsDelta > th.MaxDelta {
		rep.fail("max |Δlogit| %.4g > %.4g at position %d", num.MaxAbsDelta, th.MaxDelta, num.MaxDeltaPos)
	}
	if num.MeanKL > th.MaxKL {
		rep.fail("mean KL %.4g > %.4g", num.MeanKL, th.MaxKL)
	}
	if scored > 0 && math.Abs(num.PPLRuntime/num.PPLReference-1) > th.MaxPPLRel {
		rep.fail("perplexity %.4f vs reference %.4f differs by more than %.1f%%", num.PPLRuntime, num.PPLReference, 100*th.MaxPPLRel)
	}
}

func argmax32(x []float32) int {
	b := 0
	for i, v := range x {
		if v > x[b] {
			b = i
		}
	}
	return b
}

func argmax64(x []float64) int {
	b := 0
	for i, v := range x {
		if v > x[b] {
			b = i
		}
	}
	return b
}

func logSoftmax64(x []float64) []float64 {
	mx := math.Inf(-1)
	for _, v := range x {
		mx = math.Max(mx, v)
	}
	var s float64
	for _, v := range x {
		s += math.Exp(v - mx)
	}
	l := math.Log(s) + mx
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = v - l
	}
	return out
}

func logSoftmax32(x []float32) []float64 {
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = float64(v)
	}
	return logSoftmax64(y)
}
