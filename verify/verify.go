package verify

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"reflect"
	rtdebug "runtime/debug"
	"slices"
	"strings"

	"github.com/bitnet-convert/bitnet-convert/convert"
	"github.com/bitnet-convert/bitnet-convert/format"
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
	// RefGGUF, instead of HF, is another GGUF of the same model (the input
	// of a requant): tensors and logits are compared with it (refgguf.go).
	RefGGUF string
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
	// AllowTieFallback accepts a checkpoint whose config says untied but
	// that has no lm_head.weight, as hf2gguf --allow-tie-fallback does
	// (token_embd is then the head). A GGUF without output.weight implies it.
	AllowTieFallback bool
	Threads          int
	// Arith is the runtime arithmetic both files run with
	// (runtime.Options.Arith); ArithDefault gives each file its own.
	Arith runtime.Arith
	// Stage, when set, is called as each stage starts ("load the model",
	// "check the structure against the checkpoint", "run the prompt",
	// "build the float reference", "embed the prompts"), for a progress view.
	Stage func(name string)
}

func (o Options) stage(name string) {
	if o.Stage != nil {
		o.Stage(name)
	}
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
	GGUF     string        `json:"gguf"`
	HF       string        `json:"hf,omitempty"`
	Ref      string        `json:"ref_gguf,omitempty"`
	Arch     string        `json:"arch"`
	Ternary  bool          `json:"ternary"`
	Tensors  []TensorCheck `json:"tensors,omitempty"`
	Metadata []string      `json:"metadata_mismatches,omitempty"`
	IDs      []int32       `json:"ids"`
	Numbers  *Numbers      `json:"numbers,omitempty"`
	// RefNumbers (--ref-gguf across kernels) are the reference file A's
	// runtime logits against the float reference built from A's weights;
	// Numbers are then B's against the same reference (refgguf.go).
	RefNumbers *Numbers `json:"ref_numbers,omitempty"`
	// Sanity is the runtime-only check (always run for causal LMs); without
	// HF it is the only numeric check.
	Sanity *Sanity `json:"runtime_sanity,omitempty"`
	// Notes say what was assumed or skipped (not failures).
	Notes      []string     `json:"notes,omitempty"`
	Embeddings []EmbedCheck `json:"embeddings,omitempty"`
	Thresholds Thresholds   `json:"thresholds"`
	Failures   []string     `json:"failures,omitempty"`
	Pass       bool         `json:"pass"`
}

func (r *Report) fail(format string, args ...any) {
	r.Failures = append(r.Failures, fmt.Sprintf(format, args...))
}

// ErrContextLength is returned (wrapped with the numbers) by Run when the
// prompt plus Options.Tokens does not fit in the model's context_length
// (runtime Params.NCtx); nothing is evaluated.
var ErrContextLength = errors.New("does not fit the model")

// verifyGCPercent is the GOGC Run sets while it runs: garbage stays
// within 10 % of the live heap.
const verifyGCPercent = 10

// ternaryTypes run with int8 activations.

// Run verifies opts.GGUF. It returns an error only when the check cannot run
// at all (unreadable file, unsupported architecture); a file that runs but
// disagrees gives a Report with Pass false.
//
// The stages run one after the other and each gives back its memory before
// the next: load the runtime model, check the structure and metadata against
// the checkpoint (tensor by tensor, pages released after each), run the
// runtime over the prompt, drop the runtime model and the file's pages, run
// the float reference (layer by layer, one matrix at a time), compare. When
// the structure differs (a tensor missing or of another shape) the numeric
// comparison is skipped: it could only compare two different models.
func Run(opts Options) (*Report, error) {
	// The checks allocate one tensor's worth at a time beside a runtime
	// model that may hold gigabytes; with the default GOGC the garbage
	// could grow as large as that model before a collection. Collect early
	// instead (the large buffers hold no pointers, so this is cheap).
	defer rtdebug.SetGCPercent(rtdebug.SetGCPercent(verifyGCPercent))
	f, err := reader.Open(opts.GGUF)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rep := &Report{GGUF: opts.GGUF, HF: opts.HF, Arch: f.Arch()}
	for _, t := range f.Tensors {
		if format.IsTernary(t.Type) {
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
	if opts.RefGGUF != "" {
		return runRefGGUF(f, rep, opts)
	}
	if runtime.IsEmbeddingArch(rep.Arch) {
		opts.stage("embed the prompts")
		return runEmbedding(f, rep, opts)
	}
	opts.stage("load the model")
	ropts := runtime.Options{Threads: opts.Threads, Arith: opts.Arith}
	if opts.KernelConfig != nil {
		ks, err := format.ParseKernelConfig(opts.KernelConfig)
		if err != nil {
			return nil, fmt.Errorf("kernel configuration: %w", err)
		}
		ropts.TLKernels = ks
	}
	model, err := loadModel(f, ropts)
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
	structureOK := true
	if opts.HF != "" {
		src, err = openSource(f, rep, opts)
		if err != nil {
			return nil, err
		}
		defer src.Close()
		opts.stage("check the structure against the checkpoint")
		structureOK = checkStructure(rep, f, src, opts)
		checkMetadata(rep, f, src)
	}
	opts.stage("run the prompt")
	runRows, seq, err := runRuntime(model, ids, opts.Tokens)
	if err != nil {
		return nil, err
	}
	rep.IDs = seq
	rep.Sanity = checkSanity(rep, runRows)
	// The runtime is done: give its weights and the file's pages back
	// before the reference needs memory.
	model = nil
	releaseFile(f, func(gguf.TensorInfo) bool { return true })
	rtdebug.FreeOSMemory()
	if src != nil {
		if !structureOK {
			rep.Notes = append(rep.Notes, "numeric comparison skipped: the GGUF and the checkpoint differ in structure (see the tensor failures)")
		} else {
			opts.stage("build the float reference")
			ref, err := referenceLogits(src, opts.HF, seq)
			if err != nil {
				rep.fail("float reference: %v", err)
			} else {
				compareNumbers(rep, ref, runRows, seq)
			}
		}
	}
	rep.Pass = len(rep.Failures) == 0
	return rep, nil
}

// openSource opens the checkpoint opts.HF as the converter plans it. A GGUF
// without output.weight has its head tied to token_embd, so a checkpoint
// whose config says untied but that has no lm_head.weight is verified as
// hf2gguf --allow-tie-fallback converted it (with a note); otherwise
// Options.AllowTieFallback decides, as in hf2gguf.
func openSource(f *reader.File, rep *Report, opts Options) (*convert.Source, error) {
	_, hasHead := f.Tensor("output.weight")
	copts := convert.Options{WeightScale: opts.WeightScale, Threads: opts.Threads, AllowTieFallback: opts.AllowTieFallback || !hasHead}
	src, err := convert.OpenSource(opts.HF, copts)
	if err != nil {
		return nil, err
	}
	for _, w := range src.Plan().Warnings {
		if strings.Contains(w, "--allow-tie-fallback") {
			rep.Notes = append(rep.Notes, w)
		}
	}
	return src, nil
}

// runRuntime evaluates the prompt as one batch in the runtime
// (Session.EvalBatch: the same logits as one token per call) and continues
// greedily one token per call for tokens more; it returns the logits of
// every position (copies) and the whole sequence.
func runRuntime(model *runtime.Model, ids []int32, tokens int) ([][]float32, []int32, error) {
	sess := model.NewSession(len(ids) + tokens + 1)
	var rows [][]float32
	seq := append([]int32(nil), ids...)
	prompt, err := sess.EvalBatch(ids, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("runtime on the prompt: %w", err)
	}
	for _, logits := range prompt {
		rows = append(rows, append([]float32(nil), logits...))
	}
	for len(seq) < len(ids)+tokens {
		seq = append(seq, int32(argmax32(rows[len(rows)-1])))
		logits, err := sess.Eval(seq[len(seq)-1])
		if err != nil {
			return nil, nil, fmt.Errorf("runtime at position %d: %w", len(seq)-1, err)
		}
		rows = append(rows, append([]float32(nil), logits...))
	}
	return rows, seq, nil
}

// Sanity is what the runtime-only check measured: it is all `verify`
// proves without a checkpoint (finite logits that are not all equal), not
// that the file is the model it should be.
type Sanity struct {
	Positions    int     `json:"positions"`
	NonFinite    int     `json:"non_finite_positions"`
	MinSpread    float64 `json:"min_spread"` // smallest max − min of a position's logits
	MinSpreadPos int     `json:"min_spread_position"`
	MaxAbsLogit  float64 `json:"max_abs_logit"`
}

// checkSanity checks every row of runtime logits for non-finite values and
// for a spread under Thresholds.MinFiniteSpread, and returns the figures.
func checkSanity(rep *Report, rows [][]float32) *Sanity {
	s := &Sanity{Positions: len(rows), MinSpread: math.Inf(1)}
	first := ""
	for p, row := range rows {
		lo, hi := math.Inf(1), math.Inf(-1)
		finite := true
		for j, v := range row {
			if !finite32(v) {
				if first == "" {
					first = fmt.Sprintf("position %d, logit %d is %v", p, j, v)
				}
				s.NonFinite++
				finite = false
				break
			}
			lo, hi = math.Min(lo, float64(v)), math.Max(hi, float64(v))
		}
		if !finite {
			continue
		}
		s.MaxAbsLogit = math.Max(s.MaxAbsLogit, math.Max(math.Abs(lo), math.Abs(hi)))
		if hi-lo < s.MinSpread {
			s.MinSpread, s.MinSpreadPos = hi-lo, p
		}
		if hi-lo < rep.Thresholds.MinFiniteSpread {
			rep.fail("runtime logits at position %d are degenerate (spread %.3g)", p, hi-lo)
		}
	}
	if s.NonFinite > 0 {
		rep.fail("runtime logits are not finite at %d of %d positions (first: %s): the file's weights or scales hold NaN/Inf; reconvert the model", s.NonFinite, s.Positions, first)
	}
	if math.IsInf(s.MinSpread, 1) {
		s.MinSpread = 0
	}
	return s
}

// referenceLogits runs the float reference of the checkpoint over seq.
func referenceLogits(src *convert.Source, dir string, seq []int32) ([]float64, error) {
	g, err := refGeometryOf(src.Config())
	if err != nil {
		return nil, err
	}
	_, g.adjacentRope = src.Plan().Converter.(convert.RopePermuter)
	w, err := openSourceWeights(src, dir)
	if err != nil {
		return nil, err
	}
	defer w.Close()
	return refLogits(w, g, seq, nil)
}

// NoVocabIDs is the prompt verify runs on a file without a vocabulary
// (hf2gguf --no-vocab) when no IDs are given: 1, 100, 200, 300, 400, 7, 8,
// each modulo {arch}.vocab_size (2 when the key is missing or 0).
func NoVocabIDs(f *reader.File) []int32 {
	n, _ := f.Uint(f.Arch() + ".vocab_size")
	if n == 0 {
		n = 2
	}
	return []int32{1 % int32(n), 100 % int32(n), 200 % int32(n), 300 % int32(n), 400 % int32(n), 7 % int32(n), 8 % int32(n)}
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
		return NoVocabIDs(f), nil
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

// checkStructure compares every GGUF tensor with its HF source, one tensor
// at a time (the file's and the checkpoint's pages released after each). It
// returns false when the two differ in structure (a tensor missing on either
// side, or of another shape), so that no numeric comparison is attempted.
func checkStructure(rep *Report, f *reader.File, src *convert.Source, opts Options) bool {
	same := true
	w, err := openSourceWeights(src, opts.HF)
	if err != nil {
		rep.fail("checkpoint %s: %v", opts.HF, err)
		return false
	}
	defer w.Close()
	var kernels []format.Kernel
	var codes []int8 // compareTernary's decode buffer
	seen := map[string]bool{}
	for _, ti := range f.Tensors {
		seen[ti.Name] = true
		tc := TensorCheck{Name: ti.Name, Type: ti.Type.String(), OK: true}
		detail := func() string {
			pt, ok := src.Tensor(ti.Name)
			if !ok {
				same = false
				return "no source tensor in the checkpoint"
			}
			data, err := f.TensorData(ti.Name)
			if err != nil {
				return err.Error()
			}
			defer releasePages(f, data)
			if ne := reverseShape(pt.HFShape); !reflect.DeepEqual(ne, ti.Ne) && !(len(pt.HFShape) == 0 && reflect.DeepEqual(ti.Ne, []uint64{1})) {
				same = false
				return fmt.Sprintf("ne %v, source implies %v", ti.Ne, ne)
			}
			if format.IsTernary(ti.Type) {
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
				detail := compareTernary(ti, data, src, kernels, fileLayout(f), opts.Threads, &codes)
				if strings.HasPrefix(detail, "ternary code") && ti.Type == gguf.TypeI2S {
					detail += layoutHint(ti, data, src, fileLayout(f), opts.GGUF)
				}
				return detail
			}
			return compareFloat(ti, data, w, func(b []byte) { releasePages(f, b) })
		}()
		if detail != "" {
			tc.OK, tc.Detail = false, detail
			rep.fail("tensor %s: %s", ti.Name, detail)
		}
		rep.Tensors = append(rep.Tensors, tc)
	}
	for _, pt := range src.Plan().Tensors {
		if !seen[pt.GGUFName] {
			same = false
			rep.fail("tensor %s (from %s) is missing from the GGUF", pt.GGUFName, pt.HFName)
		}
	}
	return same
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
func tlKernels(f *reader.File, ini []byte) ([]format.Kernel, error) {
	if ini != nil {
		return format.ParseKernelConfig(ini)
	}
	ks, ok, err := runtime.StoredKernelConfig(f.KVs)
	if err == nil && !ok {
		err = fmt.Errorf("the file does not record its TL kernel configuration: pass the kernel_config.ini it was converted with (--kernel-config)")
	}
	return ks, err
}

// compareTernary decodes codes and scales through the format layer (the
// I2_S layout from the file's format.LayoutKey, x86 without it; row ranges
// on up to threads goroutines, format.DecodeParallel) and compares them with
// the source: codes exactly, each scale within one ulp of the source scale
// stored the way the format stores it (Format.StoredScale: f16 for TQ and
// IQ1_BN; 0 for a group whose source codes are all zero, format.Regroup).
// buf is the decode buffer, reused from one tensor to the next (grown when
// too small), so that a model's projections leave no garbage.
func compareTernary(ti gguf.TensorInfo, data []byte, src *convert.Source, kernels []format.Kernel, layout format.Layout, threads int, buf *[]int8) string {
	k, m := int(ti.Ne[0]), int(ti.Ne[1])
	f, _ := format.ForType(ti.Type, layout, kernels)
	if err := f.Check(k, m); err != nil && (ti.Type == gguf.TypeTL1 || ti.Type == gguf.TypeTL2) {
		return err.Error() + " (pass --kernel-config)"
	}
	if cap(*buf) < k*m {
		*buf = make([]int8, k*m)
	}
	got := (*buf)[:k*m]
	scales, err := format.DecodeParallel(f, got, data, k, m, threads)
	if err != nil {
		return err.Error()
	}
	want, wantScale, err := src.TernaryView(ti.Name)
	if err != nil {
		return err.Error()
	}
	if d := firstDiff(got, want); d >= 0 {
		// Decode gives 0 codes for a group whose scale is 0: name the
		// scale, not a code the file may hold intact
		g := 0
		if sg := f.ScaleGroup(k); sg > 0 {
			g = d / sg
		}
		if got[d] == 0 && g < len(scales) && scales[g] == 0 {
			unit := "the tensor scale"
			switch sg := f.ScaleGroup(k); {
			case sg == k:
				unit = fmt.Sprintf("the scale of row %d", g)
			case sg > 0:
				unit = fmt.Sprintf("scale %d (row %d)", g, g*sg/k)
			}
			return fmt.Sprintf("%s is 0, so its codes read as 0 (ternary code %d, row %d, column %d: 0, source %d); source scale %v", unit, d, d/k, d%k, want[d], f.StoredScale(wantScale))
		}
		return codeMismatch(d, k, got[d], want[d])
	}
	exp, err := format.Regroup(want, []float32{wantScale}, 0, f.ScaleGroup(k))
	if err != nil {
		return err.Error()
	}
	for g := range scales {
		if e := f.StoredScale(exp[g]); ulps(scales[g], e) > 1 {
			return fmt.Sprintf("scale %d of %d is %v, source %v%s", g, len(scales), scales[g], e, f16RoundingNote(scales[g], exp[g], "`verify --ref-gguf` against the file it was requantized from checks it"))
		}
	}
	return ""
}

// f16RoundingNote explains a scale got that differs from want only by
// rounding want to f16 (quantize.F32ToF16, round to nearest even), which is
// what a requant through a type with f16 scales (TQ1_0, TQ2_0, IQ1_BN)
// leaves in an f32-scale file: it returns ": the scale rounded to f16 …"
// ending with what proves such a file, or "" when got is not that value.
func f16RoundingNote(got, want float32, proof string) string {
	if got == want || got != quantize.F16ToF32(quantize.F32ToF16(want)) {
		return ""
	}
	return " (exactly that scale rounded to f16, as a requant through TQ1_0, TQ2_0 or IQ1_BN leaves it; " + proof + ")"
}

// layoutHint is added to an I2_S code mismatch: when the data decodes to
// the source's codes in another layout of format.Layouts (bitnet.cpp's ARM
// builds since 112f853 write QK_I2_S = 64 blocks, x86 builds without
// ACT_PARALLEL the 1×4 interleave; GGUF records neither), it names that
// layout and the requant command that rewrites the file; else "".
func layoutHint(ti gguf.TensorInfo, data []byte, src *convert.Source, read format.Layout, path string) string {
	k, m := int(ti.Ne[0]), int(ti.Ne[1])
	want, _, err := src.Ternary(ti.Name)
	if err != nil {
		return ""
	}
	got := make([]int8, k*m)
	for _, l := range format.Layouts {
		f := format.I2S{Layout: l}
		if l == read || f.Check(k, m) != nil {
			continue
		}
		if _, err := f.Decode(got, data, k, m); err != nil || firstDiff(got, want) >= 0 {
			continue
		}
		return fmt.Sprintf("; read as the %s layout, but the data matches the %s layout (written by %s): `bitnet-convert requant %s --from-layout %s --outtype i2_s` rewrites it in the x86 layout (add --i2s-layout %s to keep the layout, recorded in the file; run and perplexity take --from-layout %s to run it as it is)", read, l, layoutWriter(l), path, l, l, l)
	}
	return ""
}

// layoutWriter names the bitnet.cpp build that writes I2_S layout l.
func layoutWriter(l format.Layout) string {
	switch l {
	case format.LayoutARM:
		return "an ARM (NEON) build of bitnet.cpp since 112f853"
	case format.LayoutX86_1x4:
		return "an x86 build of bitnet.cpp without ACT_PARALLEL"
	}
	return "an x86 build of bitnet.cpp, or this tool by default"
}

func firstDiff(a, b []int8) int {
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return -1
}

func codeMismatch(i, k int, got, want int8) string {
	return fmt.Sprintf("ternary code %d (row %d, column %d) is %d, source %d", i, i/k, i%k, got, want)
}

// compareFloat compares a float (or Q8_0, Q6_K, Q4_K) tensor with the source values
// rounded to the stored type, in row blocks (sourceWeights.floatRows), so
// that a large embedding is never held whole; release drops the file pages
// of each block once compared.
func compareFloat(ti gguf.TensorInfo, data []byte, w *sourceWeights, release func([]byte)) string {
	switch ti.Type {
	case gguf.TypeF32, gguf.TypeF16, gguf.TypeBF16, gguf.TypeQ8_0, gguf.TypeQ6_K, gguf.TypeQ4_K:
	default:
		return "type " + ti.Type.String() + " cannot be compared"
	}
	rowElems, rowBytes := 1, len(data)
	if len(ti.Ne) > 0 {
		rowElems = int(ti.Ne[0])
	}
	if len(ti.Ne) == 2 && ti.Ne[1] > 0 {
		rowBytes = len(data) / int(ti.Ne[1])
	}
	detail := ""
	err := w.floatRows(ti.Name, refBlockElems, func(lo, hi int, want []float32) error {
		base := lo * rowElems
		if ti.Type == gguf.TypeQ6_K || ti.Type == gguf.TypeQ4_K {
			cmp := compareQ6K
			if ti.Type == gguf.TypeQ4_K {
				cmp = compareQ4K
			}
			if d := cmp(data, base, want); d != "" {
				detail = d
				return errStop
			}
			release(data[lo*rowBytes : hi*rowBytes])
			return nil
		}
		for j, x := range want {
			if sameStoredBits(ti.Type, data, base+j, x) {
				continue // equal bits pass compareFloatAt
			}
			if d := compareFloatAt(ti.Type, data, base+j, x); d != "" {
				detail = d
				return errStop
			}
		}
		if len(ti.Ne) == 2 {
			release(data[lo*rowBytes : hi*rowBytes])
		}
		return nil
	})
	if err != nil && err != errStop {
		return err.Error()
	}
	return detail
}

// compareQ6K compares the Q6_K blocks holding elements base… of data
// (base a multiple of 256) with the source values want: each dequantized
// value (quantize.DequantizeQ6K, ggml's dequantize_row_q6_K) within two
// steps d·scale of its 16-element group of the source. Half a step is the
// rounding; the levels quantize_row_q6_K_ref's scale search clamps to
// [−32, 31] can move a value by up to about 1.9 steps (bitnet.cpp's and our
// files of the golden model stay within 0.71). Another build's FMA
// contraction gives other bytes within the same bound.
func compareQ6K(data []byte, base int, want []float32) string {
	var got [quantize.QKK]float32
	for off := 0; off < len(want); off += quantize.QKK {
		b := (base + off) / quantize.QKK
		blk := data[b*quantize.Q6KBytes : (b+1)*quantize.Q6KBytes]
		quantize.DequantizeQ6K(got[:], blk)
		d := quantize.F16ToF32(binary.LittleEndian.Uint16(blk[208:]))
		if !finite32(d) {
			return fmt.Sprintf("block %d (elements %d…%d): the Q6_K scale d is %v", b, b*quantize.QKK, (b+1)*quantize.QKK-1, d)
		}
		for j, g := range got {
			step := math.Abs(float64(d * float32(int8(blk[192+j/16]))))
			// !(≤) so that a NaN difference fails too
			if x := want[off+j]; !(math.Abs(float64(g-x)) <= 2*step+1e-7) {
				return fmt.Sprintf("element %d is %v, source %v (Q6_K step %v)", base+off+j, g, x, step)
			}
		}
	}
	return ""
}

// compareQ4K compares the Q4_K blocks holding elements base… of data (base
// a multiple of 256) with the source values want: each dequantized value
// (quantize.DequantizeQ4K, ggml's dequantize_row_q4_K) within two level
// steps d·sc of its 32-element sub-block plus one min step dmin of the
// source. Half a step is the rounding and half a dmin the 6-bit min's;
// quantize_row_q4_K_ref's make_qkx2_quants search may pick a scale and min
// that clip a sub-block's extremes. bitnet.cpp's llama-quantize file of
// the golden model (testdata/golden/q4k-embd) stays within 0.75 of
// step + dmin (0.90 of the step alone).
func compareQ4K(data []byte, base int, want []float32) string {
	var got [quantize.QKK]float32
	for off := 0; off < len(want); off += quantize.QKK {
		b := (base + off) / quantize.QKK
		blk := data[b*quantize.Q4KBytes : (b+1)*quantize.Q4KBytes]
		quantize.DequantizeQ4K(got[:], blk)
		steps, dmin := quantize.Q4KStep(blk)
		if d := quantize.F16ToF32(binary.LittleEndian.Uint16(blk[0:])); !finite32(d) {
			return fmt.Sprintf("block %d (elements %d…%d): the Q4_K scale d is %v", b, b*quantize.QKK, (b+1)*quantize.QKK-1, d)
		}
		if !finite32(dmin) {
			return fmt.Sprintf("block %d (elements %d…%d): the Q4_K min scale dmin is %v", b, b*quantize.QKK, (b+1)*quantize.QKK-1, dmin)
		}
		for j, g := range got {
			step := math.Abs(float64(steps[j/32]))
			// !(≤) so that a NaN difference fails too
			if x := want[off+j]; !(math.Abs(float64(g-x)) <= 2*step+math.Abs(float64(dmin))+1e-7) {
				return fmt.Sprintf("element %d is %v, source %v (Q4_K step %v, min step %v)", base+off+j, g, x, step, dmin)
			}
		}
	}
	return ""
}

// errStop ends a row-block walk early.
var errStop = errors.New("stop")

// sameStoredBits reports whether element i of data (stored as t) has the
// bits of want rounded to t: the common case of compareFloat, decided
// without widening both sides. False means compareFloatAt must judge (it
// also accepts one ulp, ±0, and Q8_0 within its step).
func sameStoredBits(t gguf.Type, data []byte, i int, want float32) bool {
	switch t {
	case gguf.TypeF32:
		return binary.LittleEndian.Uint32(data[4*i:]) == math.Float32bits(want)
	case gguf.TypeF16:
		return binary.LittleEndian.Uint16(data[2*i:]) == quantize.F32ToF16(want)
	case gguf.TypeBF16:
		return binary.LittleEndian.Uint16(data[2*i:]) == quantize.F32ToBF16(want)
	}
	return false
}

// compareFloatAt compares element i of data (stored as t) with the source
// value want rounded to t ("" when equal, else the difference in words).
func compareFloatAt(t gguf.Type, data []byte, i int, want float32) string {
	var got, exp float32
	switch t {
	case gguf.TypeF32:
		got, exp = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:])), want
	case gguf.TypeF16:
		got, exp = quantize.F16ToF32(binary.LittleEndian.Uint16(data[2*i:])), quantize.F16ToF32(quantize.F32ToF16(want))
	case gguf.TypeBF16:
		got, exp = quantize.BF16ToF32(binary.LittleEndian.Uint16(data[2*i:])), quantize.BF16ToF32(quantize.F32ToBF16(want))
	case gguf.TypeQ8_0:
		blk := data[(i/32)*34:]
		d := quantize.F16ToF32(binary.LittleEndian.Uint16(blk))
		if !finite32(d) {
			return fmt.Sprintf("block %d (elements %d…%d): the Q8_0 scale d is %v", i/32, i/32*32, i/32*32+31, d)
		}
		got = d * float32(int8(blk[2+i%32]))
		// half a step, plus what the f16 rounding of d moves the largest
		// quant (127·|d − f16(d)| ≤ 127·d·2⁻¹¹); !(≤) so that NaN fails
		if !(math.Abs(float64(got-want)) <= math.Abs(float64(d))*(0.5+127.0/2048)+1e-7) {
			return fmt.Sprintf("element %d is %v, source %v (Q8_0 step %v)", i, got, want, d)
		}
		return ""
	}
	if got != exp && ulps(got, exp) > 1 && !(got == 0 && exp == 0) {
		return fmt.Sprintf("element %d is %v, source %v", i, got, exp)
	}
	return ""
}

// finite32 reports whether x is neither NaN nor ±Inf.
func finite32(x float32) bool {
	return !math.IsNaN(float64(x)) && !math.IsInf(float64(x), 0)
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
	// Files for mainline llama.cpp (TQ1_0/TQ2_0) carry arch "bitnet" for
	// every BitNet model (format.TargetArch).
	if arch != plan.Arch && !(arch == "bitnet-25" && plan.Arch == "bitnet-b1.58") && arch != format.TargetArch(plan.Arch, format.RuntimeLlamaCpp) {
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
			case strings.TrimPrefix(format.HiddenActivationSuffix, "."):
				continue // ours; other converters do not write it
			}
			rep.Metadata = append(rep.Metadata, fmt.Sprintf("%s missing (config.json gives %v)", key, kv.Value.V))
			continue
		}
		if v.Type != kv.Value.Type || v.Elem != kv.Value.Elem {
			rep.Metadata = append(rep.Metadata, fmt.Sprintf("%s is stored as %s, hf2gguf writes %s (value %v, config.json gives %v)", key, valueTypeName(v), valueTypeName(kv.Value), v.V, kv.Value.V))
		} else if !reflect.DeepEqual(v.V, kv.Value.V) {
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

// valueTypeName is a GGUF value's type as gguf-dump names it ("uint32",
// "array[string]").
func valueTypeName(v gguf.Value) string {
	if v.Type == gguf.ValueArray {
		return "array[" + v.Elem.String() + "]"
	}
	return v.Type.String()
}

// compareNumbers compares the reference logits ref ([len(seq), vocab]
// row-major) with the runtime rows over seq into rep.Numbers.
func compareNumbers(rep *Report, ref []float64, runRows [][]float32, seq []int32) {
	if num := compareNumbersAs(rep, "", ref, runRows, seq); num != nil {
		rep.Numbers = num
	}
}

// compareNumbersAs is compareNumbers returning the metrics (nil when the
// shapes disagree), each failure prefixed with label (which file's logits).
func compareNumbersAs(rep *Report, label string, ref []float64, runRows [][]float32, seq []int32) *Numbers {
	fail := func(format string, args ...any) { rep.fail(label+format, args...) }
	num := &Numbers{Positions: len(runRows)}
	if len(runRows) == 0 || len(ref)%len(runRows) != 0 {
		fail("float reference: %d logits for %d positions", len(ref), len(runRows))
		return nil
	}
	vocab := len(ref) / len(runRows)
	if len(runRows[0]) != vocab {
		fail("the runtime gives %d logits per position, the float reference %d (the vocabulary sizes differ)", len(runRows[0]), vocab)
		return nil
	}
	bad := 0
	for _, row := range runRows {
		if slices.ContainsFunc(row, func(v float32) bool { return !finite32(v) }) {
			bad++
		}
	}
	if bad > 0 {
		// figures over NaN rows would be NaN or meaningless (a max over
		// the finite logits only): none are given
		rep.Notes = append(rep.Notes, fmt.Sprintf("%snumeric comparison skipped: the runtime logits are not finite at %d of %d positions", label, bad, len(runRows)))
		return nil
	}
	agree := 0
	var klSum, nllRun, nllRef float64
	scored := 0
	firstBad := -1
	for p := range runRows {
		r := ref[p*vocab : (p+1)*vocab]
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
		if p+1 < len(seq) && seq[p+1] >= 0 && int(seq[p+1]) < vocab {
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
	th := rep.Thresholds
	if num.Top1Agreement < th.MinTop1 {
		fail("top-1 agreement %.3f < %.3f (first disagreement at position %d)", num.Top1Agreement, th.MinTop1, firstBad)
	}
	if num.MaxAbsDelta > th.MaxDelta {
		fail("max |Δlogit| %.4g > %.4g at position %d", num.MaxAbsDelta, th.MaxDelta, num.MaxDeltaPos)
	}
	if num.MeanKL > th.MaxKL {
		fail("mean KL %.4g > %.4g", num.MeanKL, th.MaxKL)
	}
	if scored > 0 && math.Abs(num.PPLRuntime/num.PPLReference-1) > th.MaxPPLRel {
		fail("perplexity %.4f vs reference %.4f differs by more than %.1f%%", num.PPLRuntime, num.PPLReference, 100*th.MaxPPLRel)
	}
	return num
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

// fileLayout is the I2_S layout a file records under format.LayoutKey, or
// x86 (what every bitnet.cpp x86 build and Python converter writes).
func fileLayout(f *reader.File) format.Layout {
	if s, ok := f.String(format.LayoutKey); ok {
		if l, err := format.ParseLayout(s); err == nil {
			return l
		}
	}
	return format.LayoutX86
}
