package verify

import (
	"errors"
	"fmt"
	rtdebug "runtime/debug"
	"strings"

	"github.com/bitnet-convert/bitnet-convert/convert"
	"github.com/bitnet-convert/bitnet-convert/format"
	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
	"github.com/bitnet-convert/bitnet-convert/runtime"
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

// DefaultThresholds returns the limits used before the error model
// (thresholds.go) replaces the logit limits of a causal LM checked against
// a float reference: MinFiniteSpread of the runtime-only check and
// MinCosine of the embedding models are used as they are; the logit limits
// here are the old constants, kept for files whose reference cannot run.
// Ternary types (I2_S, TL1, TL2, …) run with int8 activations; float files
// differ only by the runtime's F16 KV cache and operand rounding.
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
	Ternarize        bool // float masters without quantization_config, as hf2gguf --ternarize converted them
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
	// Arith is the arithmetic the runtime ran the GGUF with (Options.Arith
	// resolved by the runtime: its numbers, and so the thresholds they
	// meet, depend on it); RefArith is the --ref-gguf file's. Empty when
	// the runtime did not run the file.
	Arith    runtime.Arith `json:"arith,omitempty"`
	RefArith runtime.Arith `json:"ref_arith,omitempty"`
	// Notes say what was assumed or skipped (not failures).
	Notes      []string     `json:"notes,omitempty"`
	Embeddings []EmbedCheck `json:"embeddings,omitempty"`
	Thresholds Thresholds   `json:"thresholds"`
	// Bound is how the error model derived the logit thresholds of a causal
	// LM checked against a float reference (thresholds.go); nil when they
	// were given (Options.Thresholds) or no reference ran.
	Bound    *Bound   `json:"bound,omitempty"`
	Failures []string `json:"failures,omitempty"`
	Pass     bool     `json:"pass"`
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
	if runtime.IsEmbeddingFile(f.KVs, f.Tensors) {
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
	rep.Arith = model.Arith()
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
			ref, em, err := referenceLogits(src, opts.HF, seq, tensorTypes(f))
			if err != nil {
				rep.fail("float reference: %v", err)
			} else {
				deriveThresholds(rep, opts, ref, len(runRows), em)
				compareNumbers(rep, ref, runRows, seq)
			}
		}
	}
	rep.Pass = len(rep.Failures) == 0
	return rep, nil
}

// tensorTypes returns the stored type of each of f's tensors by name.
func tensorTypes(f *reader.File) func(string) (gguf.Type, bool) {
	return func(name string) (gguf.Type, bool) {
		ti, ok := f.Tensor(name)
		return ti.Type, ok
	}
}

// deriveThresholds replaces rep.Thresholds by the limits the error models
// ems derive for the reference logits ref (the loosest of them, when two
// files are held to one reference), unless Options.Thresholds fixed them;
// Options.Adjust (the CLI's single-limit flags) is applied again after.
func deriveThresholds(rep *Report, opts Options, ref []float64, positions int, ems ...*errorModel) {
	if opts.Thresholds != nil {
		return
	}
	for i, em := range ems {
		th, b := em.thresholds(ref, positions, rep.Thresholds)
		if i == 0 || th.MaxDelta > rep.Thresholds.MaxDelta {
			rep.Thresholds, rep.Bound = th, b
		}
	}
	if opts.Adjust != nil {
		opts.Adjust(&rep.Thresholds)
	}
}

// openSource opens the checkpoint opts.HF as the converter plans it. A GGUF
// without output.weight has its head tied to token_embd, so a checkpoint
// whose config says untied but that has no lm_head.weight is verified as
// hf2gguf --allow-tie-fallback converted it (with a note); otherwise
// Options.AllowTieFallback decides, as in hf2gguf.
func openSource(f *reader.File, rep *Report, opts Options) (*convert.Source, error) {
	_, hasHead := f.Tensor("output.weight")
	copts := convert.Options{WeightScale: opts.WeightScale, Threads: opts.Threads, AllowTieFallback: opts.AllowTieFallback || !hasHead, Ternarize: opts.Ternarize}
	src, err := convert.OpenSource(opts.HF, copts)
	if err != nil {
		return nil, err
	}
	if opts.Ternarize {
		// hf2gguf --ternarize re-ternarized the group-scaled projections a
		// ternary type cannot hold (one abs-mean scale per tensor): read them
		// as the masters it took them for.
		for _, ti := range f.Tensors {
			src.ReternarizeFor(ti.Name, ti.Type)
		}
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
