package convert

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/bitnet-convert/bitnet-convert/format"
	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
	"github.com/bitnet-convert/bitnet-convert/hf"
	"github.com/bitnet-convert/bitnet-convert/tensormap"
)

// Per-projection input norms on causal graphs (docs/glossary.md "*_norm_in";
// formats-2026.md §1, §3, §4).
//
// Two kinds of HF checkpoint put an RMSNorm on the input of a ternary
// projection, before its activation quantization:
//
//   - transformers' BitNet integration with quantization_config.use_rms_norm
//     (onebitllms / transformers PR #38087): "<proj>.rms_norm.weight" on
//     each of the seven projections, eps quantization_config.rms_norm_eps
//     (transformers' BitNetQuantConfig default 1e-6,
//     utils/quantization_config.py);
//   - BitNet Distillation (microsoft/BitNet PR #382, bitdistill
//     tools/bitnet/bitnetsrc/core.py BitLinear): "<proj>.norm.weight" on all
//     seven projections ("allnorm") or on o_proj and down_proj only (SubLN),
//     eps fixed at 1e-8 (Qwen2RMSNorm(in_features, eps=1e-8)).
//
// Both are written as "blk.N.<proj>_norm_in.weight" (F32), the names
// bitnet.cpp's embedding models use (convert-bitnet-embedding-to-gguf.py),
// and their eps as the f32 KV {arch}.attention.norm_in_rms_epsilon
// (format.NormInEpsilonSuffix). Only this project's runtime reads them on a
// causal graph, so the outtypes are I2_S and the float types; every other
// target's runtime has no such tensor and is refused, naming it.

// NormInOutTypes are the outtypes a checkpoint with per-projection input
// norms converts to: those whose file this project's runtime reads with
// the *_norm_in tensors (I2_S) and the float types. TL1/TL2 (bitnet.cpp
// kernels for graphs without these norms), TQ1_0/TQ2_0/Q2_0 (mainline
// llama.cpp) and IQ1_BN/IQ2_BN (ik_llama.cpp) are refused.
var NormInOutTypes = []OutType{OutI2S, OutF32, OutF16, OutBF16}

// bitDistillNormEps is the eps of BitNet Distillation's per-projection
// RMSNorm (bitdistill tools/bitnet/bitnetsrc/core.py: Qwen2RMSNorm(...,
// eps=1e-8)).
const bitDistillNormEps = 1e-8

// useRMSNormDefaultEps is transformers' BitNetQuantConfig rms_norm_eps
// default (utils/quantization_config.py).
const useRMSNormDefaultEps = 1e-6

// TensorSetChecker is an optional Converter hook: NewPlan calls it after the
// tensors are mapped and checked complete, so a converter can enforce rules
// on which optional tensors a checkpoint holds and refuse outtypes they rule
// out (the per-projection input norms). It may record what it found for
// HParams, which runs later.
type TensorSetChecker interface {
	CheckTensors(p *Plan) error
}

// ternarizeError is returned by a NewFunc for a checkpoint whose
// projections are float master weights without a BitNet
// quantization_config (BitNet Distillation's checkpoints): converting them
// is a lossy ternarization the user asks for with --ternarize
// (Options.Ternarize), after which NewPlan builds the converter with retry.
// It wraps ErrUnknownArch: without the flag the architecture is not one we
// convert.
type ternarizeError struct {
	msg   string
	retry NewFunc
}

func (e *ternarizeError) Error() string { return e.msg }
func (e *ternarizeError) Unwrap() error { return ErrUnknownArch }

// converterForOpts is converterFor, plus --ternarize: a converter that asks
// for the flag is built when opts.Ternarize is set. ternarized reports
// that the flag was used.
//
// A checkpoint without quantization_config comes back from its NewFunc as
// a DenseCandidate whose DenseRefusal is a *ternarizeError (NewPlan reads
// its values: group-scaled ternary projections convert exactly without the
// flag); with the flag the retry builds the converter that also takes float
// masters. A NewFunc may also return the *ternarizeError itself.
func converterForOpts(cfg *hf.Config, opts Options) (conv Converter, ternarized bool, err error) {
	conv, err = converterFor(cfg)
	if !opts.Ternarize {
		return conv, false, err
	}
	var te *ternarizeError
	if err == nil {
		if dc, ok := conv.(DenseCandidate); ok {
			if r := dc.DenseRefusal(); r != nil && errors.As(r, &te) {
				conv, err = te.retry(cfg)
				return conv, err == nil, err
			}
		}
		return conv, false, nil
	}
	if errors.As(err, &te) {
		conv, err = te.retry(cfg)
		return conv, err == nil, err
	}
	return conv, false, err
}

// normIn is the per-projection input-norm state of a causal converter:
// what config.json says (useRMSNorm, rmsEps) and what CheckTensors found.
type normIn struct {
	path       string  // config.json's path, for errors
	useRMSNorm bool    // quantization_config.use_rms_norm
	rmsEps     float64 // quantization_config.rms_norm_eps, else 1e-6
	// found: the checkpoint holds *_norm_in tensors with spelling, whose
	// eps is eps.
	found    bool
	spelling tensormap.NormInSpelling
	eps      float64
}

// readNormIn reads use_rms_norm and rms_norm_eps from the
// quantization_config qc (ok false: none). A rms_norm_eps that is not a
// positive finite number is refused, naming config.json and the key.
func readNormIn(cfg *hf.Config, qc *hf.Config, ok bool) (normIn, error) {
	n := normIn{path: cfg.Path, rmsEps: useRMSNormDefaultEps}
	if !ok {
		return n, nil
	}
	on, _, err := qc.Bool("use_rms_norm")
	if err != nil {
		return n, err // names config.json and the key
	}
	n.useRMSNorm = on
	eps, set, err := qc.Float("rms_norm_eps")
	if err != nil {
		return n, err
	}
	if set {
		if f := float32(eps); !(f > 0) || math.IsInf(float64(f), 0) {
			// The GGUF key is an f32: 1e300 would be +Inf, 1e-50 zero.
			return n, fmt.Errorf("%s: quantization_config.rms_norm_eps %v must be a positive number within f32's range (about 1.4e-45 to 3.4e38)", cfg.Path, eps)
		}
		n.rmsEps = eps
	}
	return n, nil
}

// check applies the rules of the per-projection input norms to p's
// tensors:
//   - one spelling per checkpoint; "<proj>.rms_norm" needs
//     quantization_config.use_rms_norm true, and use_rms_norm true needs
//     "<proj>.rms_norm" on all seven projections of every layer;
//   - "<proj>.norm" (BitNet Distillation) on all seven projections or on
//     o_proj and down_proj only, the same set in every layer;
//   - present norms restrict the outtype to NormInOutTypes; any other is
//     refused naming its runtime and the first norm tensor.
//
// Errors are one line naming the tensor (HF and GGUF) or config.json's key.
func (n *normIn) check(p *Plan) error {
	cfgPath := n.path
	type seen struct {
		spelling tensormap.NormInSpelling
		hfName   string
		ggufName string
	}
	var first *seen
	perLayer := make([]map[string]bool, p.Geometry.Layers)
	// In GGUF order (layer, then projection), whatever the checkpoint's.
	rank := func(t PlannedTensor) int {
		_, stem, _ := tensormap.NormInOf(t.Match)
		return t.Match.Block*len(tensormap.NormInProjections) + slices.IndexFunc(tensormap.NormInProjections, func(pr tensormap.NormInProjection) bool { return pr.GGUF == stem })
	}
	var norms []PlannedTensor
	for _, t := range p.Tensors {
		if _, _, ok := tensormap.NormInOf(t.Match); ok {
			norms = append(norms, t)
		}
	}
	slices.SortStableFunc(norms, func(a, b PlannedTensor) int { return rank(a) - rank(b) })
	for _, t := range norms {
		sp, stem, _ := tensormap.NormInOf(t.Match)
		if first == nil {
			first = &seen{sp, t.HFName, t.GGUFName}
		} else if sp != first.spelling {
			return fmt.Errorf("tensors %s and %s spell the per-projection input norm two ways (.%s and .%s); a checkpoint uses one", first.hfName, t.HFName, first.spelling, sp)
		}
		if t.Match.Block < 0 || t.Match.Block >= len(perLayer) {
			continue // checked by NewPlan
		}
		if perLayer[t.Match.Block] == nil {
			perLayer[t.Match.Block] = map[string]bool{}
		}
		perLayer[t.Match.Block][stem] = true
	}
	if first == nil {
		if n.useRMSNorm {
			return fmt.Errorf("%s: quantization_config.use_rms_norm is true but the checkpoint has no <proj>.rms_norm.weight tensors (e.g. model.layers.0.self_attn.q_proj.rms_norm.weight); set use_rms_norm to false if the model has no such norms", cfgPath)
		}
		return nil
	}
	all := make([]string, len(tensormap.NormInProjections))
	hfOf := map[string]string{}
	for i, pr := range tensormap.NormInProjections {
		all[i] = pr.GGUF
		hfOf[pr.GGUF] = pr.HF
	}
	subLN := []string{"attn_output", "ffn_down"}
	var want []string
	switch first.spelling {
	case tensormap.SpellRMSNorm:
		if !n.useRMSNorm {
			return fmt.Errorf("tensor %s is a per-projection RMSNorm (transformers' use_rms_norm) but %s has no quantization_config.use_rms_norm true; set it (with rms_norm_eps) if the model was trained with these norms", first.hfName, cfgPath)
		}
		want = all
		n.eps = n.rmsEps
	case tensormap.SpellNorm:
		if n.useRMSNorm {
			return fmt.Errorf("tensor %s is a BitNet Distillation input norm (.norm) but %s sets quantization_config.use_rms_norm, whose norms are named .rms_norm; fix the names or the config", first.hfName, cfgPath)
		}
		want = all
		if l0 := perLayer[0]; l0 != nil && !l0["attn_q"] {
			want = subLN
		}
		n.eps = bitDistillNormEps
	}
	for l, have := range perLayer {
		for _, stem := range all {
			if have[stem] != slices.Contains(want, stem) {
				verb := "is missing"
				if have[stem] {
					verb = "is present but layer 0 has no input norm on that projection"
				}
				which := "all seven projections"
				if len(want) == len(subLN) {
					which = "o_proj and down_proj only (BitNet Distillation SubLN)"
				}
				return fmt.Errorf("tensor model.layers.%d.%s.%s.weight (blk.%d.%s_norm_in.weight) %s: the per-projection input norms must be on %s in every layer", l, hfOf[stem], first.spelling, l, stem, verb, which)
			}
		}
	}
	n.found, n.spelling = true, first.spelling
	if !slices.Contains(NormInOutTypes, p.OutType) {
		return fmt.Errorf("tensor %s (%s): --outtype %s is for %s, which has no tensor for a per-projection input RMSNorm on this graph, so the file would compute another function; use --outtype %s (this project's runtime reads *_norm_in)", first.ggufName, first.hfName, p.OutType, runtimeOf(p.OutType), joinOutTypes(NormInOutTypes))
	}
	return nil
}

// kvs is the eps KV when norms were found (none otherwise).
func (n *normIn) kvs(arch string) []gguf.KV {
	if !n.found {
		return nil
	}
	return []gguf.KV{{Key: arch + format.NormInEpsilonSuffix, Value: gguf.Float32(float32(n.eps))}}
}

// normInSummary names the norms found, for a notice ("" when none).
func (n *normIn) summary() string {
	if !n.found {
		return ""
	}
	src := "quantization_config.use_rms_norm, eps from rms_norm_eps"
	if n.spelling == tensormap.SpellNorm {
		src = "BitNet Distillation .norm, eps 1e-8"
	}
	return fmt.Sprintf("per-projection input norms written as blk.N.*_norm_in.weight (%s = %g; %s); only this project's runtime reads them on a causal graph", strings.TrimPrefix(format.NormInEpsilonSuffix, "."), n.eps, src)
}

// checkNormInRequant refuses requantizing a file with per-projection input
// norms (*_norm_in tensors) to an outtype outside NormInOutTypes, as
// hf2gguf refuses converting such a checkpoint: one line naming the file,
// the first such tensor and the outtype's runtime.
func checkNormInRequant(f *reader.File, path string, o OutType) error {
	if slices.Contains(NormInOutTypes, o) {
		return nil
	}
	_, pooled := f.Get(f.Arch() + ".pooling_type")
	var ok []OutType // the types that keep the norms and requant writes for this arch
	for _, t := range NormInOutTypes {
		if checkRequantOutType(f.Arch(), pooled, t) == nil {
			ok = append(ok, t)
		}
	}
	for _, ti := range f.Tensors {
		if strings.HasPrefix(ti.Name, "blk.") && strings.HasSuffix(ti.Name, "_norm_in.weight") {
			return fmt.Errorf("%s: tensor %s: --outtype %s is for %s, which has no tensor for a per-projection input RMSNorm on this graph, so the file would compute another function; use --outtype %s (this project's runtime reads *_norm_in)", path, reader.Printable(ti.Name), o, runtimeOf(o), joinOutTypes(ok))
		}
	}
	return nil
}

// runtimeOf names the runtime family an outtype's file is written for, as
// an error message says it ("mainline llama.cpp" for format's llama.cpp).
func runtimeOf(o OutType) string {
	s, ok := format.Lookup(string(o))
	switch {
	case !ok:
		return format.RuntimeBitnetCpp
	case s.Runtime == format.RuntimeLlamaCpp:
		return "mainline " + s.Runtime
	}
	return s.Runtime
}

// needTernarize is a NewFunc's refusal of a config whose quant_method is
// not "bitnet": another quant_method is not ours (ErrUnknownArch); none at
// all may be float BitNet masters, which --ternarize converts with retry.
func needTernarize(cfg *hf.Config, class, qm string, retry NewFunc) error {
	if qm != "" {
		return fmt.Errorf("%s: %s with quantization_config.quant_method %q is not a BitNet checkpoint (want \"bitnet\"): %w", cfg.Path, class, qm, ErrUnknownArch)
	}
	return &ternarizeError{
		msg:   fmt.Sprintf("%s: %s without quantization_config.quant_method \"bitnet\" is not a BitNet checkpoint (only ternary models convert); if its projections are BitNet master weights (e.g. BitNet Distillation), pass --ternarize to ternarize them (abs-mean per tensor)", cfg.Path, class),
		retry: retry,
	}
}

// normInTables caches normInTable's result per base table (a Table
// compiles its regexps once).
var normInTables sync.Map // *tensormap.Table → *tensormap.Table

// normInTable is base plus the optional per-projection input norms of a
// causal model whose layers are "model.layers.N".
func normInTable(base *tensormap.Table) *tensormap.Table {
	if t, ok := normInTables.Load(base); ok {
		return t.(*tensormap.Table)
	}
	t, _ := normInTables.LoadOrStore(base, base.With(tensormap.NormInRules("model.layers.")...))
	return t.(*tensormap.Table)
}

// outTypes is an OutTypeLimiter's list for a row whose graph's own
// outtypes are base: when the checkpoint may hold per-projection norms
// (use_rms_norm, or float masters taken with --ternarize, as BitNet
// Distillation's), the NormInOutTypes join it, since this project's runtime
// reads *_norm_in on every causal graph; check then refuses what the
// tensors rule out.
func (n *normIn) outTypes(base []OutType, ternarize bool) []OutType {
	if !n.useRMSNorm && !ternarize {
		return base
	}
	var out []OutType
	for _, o := range OutTypes {
		if slices.Contains(base, o) || slices.Contains(NormInOutTypes, o) {
			out = append(out, o)
		}
	}
	return out
}

// notes adds the norm and --ternarize notices to p.
func (n *normIn) notes(p *Plan, ternarize bool) {
	if s := n.summary(); s != "" {
		p.Warnings = append(p.Warnings, "notice: "+s)
	}
	if ternarize {
		p.Warnings = append(p.Warnings, "--ternarize: config.json has no BitNet quantization_config; the float projections are ternarized with abs-mean per tensor (lossy unless they were trained for it)")
	}
}

var _ TensorSetChecker = (*hfBitnetModel)(nil)

// CheckTensors applies the per-projection input-norm rules (normIn.check);
// without norms an outtype the row's graph has no runtime for (I2_S for
// qwen2/qwen3, let through by OutTypes for a checkpoint that might have
// had norms) is refused as CheckOutType refuses it.
func (m *hfBitnetModel) CheckTensors(p *Plan) error {
	if err := m.norms.check(p); err != nil {
		return err
	}
	if !m.norms.found && !slices.Contains(rowOutTypes(m.row), p.OutType) {
		if err := noGraphError(m, p.OutType); err != nil {
			return err
		}
		return fmt.Errorf("--outtype %s is not supported for arch %s (supported: %s)", p.OutType, m.row.GGUF, joinOutTypes(rowOutTypes(m.row)))
	}
	m.norms.notes(p, m.ternarize)
	return nil
}
