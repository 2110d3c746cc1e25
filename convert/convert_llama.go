package convert

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bitnet-convert/bitnet-convert/archtab"
	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/hf"
	"github.com/bitnet-convert/bitnet-convert/tensormap"
)

// llamaModel converts LlamaForCausalLM checkpoints whose quantization_config
// says quant_method "bitnet": HF1BitLLM/Llama3-8B-1.58-100B-tokens and the
// tiiuae Falcon3 1.58bit models, packed (U8 codes + weight_scale) or as
// master weights. bitnet.cpp loads them as GGUF arch llama
// (utils/convert-hf-to-gguf-bitnet.py, LlamaModel): plain llama tensor
// names, an untied output head, q and k rows permuted for llama's
// adjacent-pair rope (LlamaModel.permute), rope.dimension_count = head_dim.
type llamaModel struct {
	heads, headsKV int
	// ctxDefault is set when config.json has no max_position_embeddings:
	// llama.cpp cannot load a llama GGUF without llama.context_length, so
	// transformers' LlamaConfig default is written (with a notice).
	ctxDefault bool
	// dense is the refusal used when a checkpoint without
	// quantization_config is not group-scaled ternary (DenseCandidate):
	// a *ternarizeError, whose retry builds the --ternarize converter.
	dense error
	// norms is the per-projection input-norm state (normin.go).
	norms normIn
	// ternarize: master weights without quantization_config, accepted
	// on --ternarize (BitNet Distillation checkpoints).
	ternarize bool
	// window is config.json sliding_window (MistralForCausalLM), 0 when
	// absent or null: not written, warned about.
	window int
}

// llamaDefaultContext is transformers' LlamaConfig default
// max_position_embeddings (models/llama/configuration_llama.py).
const llamaDefaultContext = 2048

var (
	_ Converter        = (*llamaModel)(nil)
	_ RopePermuter     = (*llamaModel)(nil)
	_ ExtraKVser       = (*llamaModel)(nil)
	_ TensorSetChecker = (*llamaModel)(nil)
	_ DenseCandidate   = (*llamaModel)(nil)
)

func init() {
	for _, class := range archtab.Llama.HF {
		Register(class, newLlama)
	}
}

// newLlama accepts a LlamaForCausalLM or MistralForCausalLM config (the
// archtab.Llama row) with a BitNet quantization_config, or without any
// quantization_config as a DenseCandidate: NewPlan then accepts it when
// every projection is group-scaled ternary (groupscaled.go), or, on
// --ternarize, ternarizes its float projections (newLlamaTernarize: BitNet
// Distillation's bf16 masters carry no quantization_config); else it
// refuses a plain Llama with the DenseRefusal, since a float model has no
// business in a ternary GGUF. quantization_config.use_rms_norm
// (transformers integrations/bitnet.py: an RMSNorm on every projection's
// input before activation quantization) and BitNet Distillation's
// "<proj>.norm" are written as blk.N.<proj>_norm_in (normin.go), never
// dropped. Falcon-E is no special case: its scale rule and norms follow its
// config's keys like any HF BitNet checkpoint (formats-2026.md §2: the
// public sources disagree on whether it sets use_rms_norm).
func newLlama(cfg *hf.Config) (Converter, error) { return newLlamaOpts(cfg, false) }

// newLlamaTernarize is newLlama for --ternarize.
func newLlamaTernarize(cfg *hf.Config) (Converter, error) { return newLlamaOpts(cfg, true) }

func newLlamaOpts(cfg *hf.Config, ternarize bool) (Converter, error) {
	class := archtab.Llama.HF[0]
	if archs, _ := cfg.Raw["architectures"].([]any); len(archs) > 0 {
		if s, _ := archs[0].(string); slices.Contains(archtab.Llama.HF, s) {
			class = s
		}
	}
	qc, ok := cfg.Sub("quantization_config")
	qm := ""
	if ok {
		var err error
		if qm, _, err = qc.String("quant_method"); err != nil {
			return nil, err // names config.json and the key
		}
	}
	var dense error
	switch {
	case qm == "bitnet":
		ternarize = false // the checkpoint says how its weights are ternary
	case ok && qm != "":
		return nil, fmt.Errorf("%s: %s with quantization_config.quant_method %q is not a BitNet checkpoint (want \"bitnet\"): %w", cfg.Path, class, qm, ErrUnknownArch)
	default:
		// No quantization_config: group-scaled ternary projections
		// (planGroupScaled reads the values) or, on --ternarize, float
		// master weights.
		dense = &ternarizeError{
			msg:   fmt.Sprintf("%s: %s without quantization_config.quant_method \"bitnet\" is not a BitNet checkpoint (only ternary Llama-architecture models such as Llama3-8B-1.58 and Falcon3 1.58bit, or group-scaled ternary ones, convert); if its projections are BitNet master weights (e.g. BitNet Distillation), pass --ternarize to ternarize them (abs-mean per tensor)", cfg.Path, class),
			retry: newLlamaTernarize,
		}
	}
	norms, err := readNormIn(cfg, qc, ok)
	if err != nil {
		return nil, err
	}
	act, _, err := cfg.String("hidden_act")
	if err != nil {
		return nil, err
	}
	if act != "" && act != "silu" {
		return nil, fmt.Errorf("%s: hidden_act %q is not supported for %s (supported: silu)", cfg.Path, act, class)
	}
	_, hasCtx, err := cfg.Int("max_position_embeddings", "n_ctx")
	if err != nil {
		return nil, err
	}
	m := &llamaModel{ctxDefault: !hasCtx, dense: dense, norms: norms, ternarize: ternarize}
	// Mistral-7B-v0.1's sliding_window (4096): the llama graph of every
	// target runtime attends to the whole context, as mainline's
	// convert_hf_to_gguf.py writes it (LlamaModel, no window key), so the
	// file matches transformers only within the window; said, not refused.
	if w, _, err := cfg.Int("sliding_window"); err != nil {
		return nil, err
	} else if w > 0 {
		m.window = w
	}
	return m, nil
}

// DenseRefusal is the refusal of a LlamaForCausalLM or MistralForCausalLM
// without a quantization_config whose projections are not group-scaled
// ternary (nil for a BitNet checkpoint).
func (m *llamaModel) DenseRefusal() error { return m.dense }

func (m *llamaModel) Arch() string        { return archtab.Llama.GGUF }
func (m *llamaModel) StripPrefix() string { return archtab.Llama.StripPrefix }
func (m *llamaModel) Embedding() bool     { return archtab.Llama.Embedding }

// llamaNormInTable is the Llama row's table plus the optional
// per-projection input norms (tensormap.NormInRules).
var llamaNormInTable = archtab.Llama.Table.With(tensormap.NormInRules("model.layers.")...)

// Table is the Llama row's table with the optional per-projection input
// norms; CheckTensors decides which a checkpoint may hold.
func (m *llamaModel) Table() *tensormap.Table { return llamaNormInTable }

// CheckTensors applies the per-projection input-norm rules (normIn.check):
// which norms the config allows, all seven or BitNet Distillation's two,
// and the outtypes whose runtime reads them.
func (m *llamaModel) CheckTensors(p *Plan) error {
	if err := m.norms.check(p); err != nil {
		return err
	}
	m.norms.notes(p, m.ternarize)
	return nil
}

// Geometry is the shared rule; it also records the head counts RopeHeads
// needs (NewPlan calls it before any tensor is converted) and refuses an
// odd head_dim, which rope cannot pair.
func (m *llamaModel) Geometry(cfg *hf.Config) (Geometry, error) {
	g, err := geometry(cfg)
	if err != nil {
		return g, err
	}
	if g.HeadDim%2 != 0 {
		return g, fmt.Errorf("%s: head_dim %d is odd; rope needs pairs of dimensions", cfg.Path, g.HeadDim)
	}
	m.heads, m.headsKV = g.Heads, g.HeadsKV
	return g, nil
}

// RopeHeads interleaves the rows of attn_q (num_attention_heads groups) and
// attn_k (num_key_value_heads groups), as LlamaModel.permute does.
func (m *llamaModel) RopeHeads(ggufName string) int {
	switch {
	case strings.HasSuffix(ggufName, ".attn_q.weight"):
		return m.heads
	case strings.HasSuffix(ggufName, ".attn_k.weight"):
		return m.headsKV
	}
	return 0
}

// HParams writes the llama hyper-parameters in bitnet.cpp's order, then
// vocab_size, rope.dimension_count (= head_dim, with key_length /
// value_length when head_dim ≠ hidden/heads, BR-15) and a linear rope
// scaling when config.json has one. Other rope_scaling types (llama3's
// frequency factors) are refused.
func (m *llamaModel) HParams(cfg *hf.Config) ([]gguf.KV, error) {
	arch := archtab.Llama.GGUF
	kvs, err := tableKVs(arch, cfg, archtab.Llama.HParams)
	if err != nil {
		return nil, err
	}
	g, err := geometry(cfg)
	if err != nil {
		return nil, err
	}
	if m.ctxDefault {
		kvs = insertAfter(kvs, arch+".block_count", gguf.KV{Key: arch + ".context_length", Value: gguf.Uint32(llamaDefaultContext)})
	}
	kvs = append(kvs, gguf.KV{Key: arch + ".vocab_size", Value: gguf.Uint32(uint32(g.Vocab))})
	kvs = append(kvs, headDimKVs(arch, g, false)...)
	rs, isObject := cfg.Sub("rope_scaling")
	if cfg.Has("rope_scaling") && !isObject {
		return nil, fmt.Errorf("%s: \"rope_scaling\" must be an object or null", cfg.Path)
	}
	if isObject {
		typ, _, _ := rs.String("type", "rope_type")
		if typ != "linear" {
			return nil, fmt.Errorf("%s: rope_scaling type %q is not supported for LlamaForCausalLM (only linear)", cfg.Path, typ)
		}
		f, ok, err := rs.Float("factor")
		if err != nil || !ok {
			return nil, fmt.Errorf("%s: rope_scaling needs a numeric \"factor\"", cfg.Path)
		}
		if !(f > 0) || math.IsInf(f, 0) {
			// the runtime refuses such a file on load (freq_scale = 1/factor)
			return nil, fmt.Errorf("%s: rope_scaling factor %v must be a positive number", cfg.Path, f)
		}
		kvs = append(kvs,
			gguf.KV{Key: arch + ".rope.scaling.type", Value: gguf.String("linear")},
			gguf.KV{Key: arch + ".rope.scaling.factor", Value: gguf.Float32(float32(f))})
	}
	return append(kvs, m.norms.kvs(arch)...), nil
}

// ExtraKVs writes tokenizer.ggml.add_space_prefix when tokenizer_config.json
// sets add_prefix_space, as LlamaModel.set_gguf_parameters does.
func (m *llamaModel) ExtraKVs(dir string) (kvs []gguf.KV, warns []string, err error) {
	if m.window > 0 {
		warns = append(warns, fmt.Sprintf("config.json sliding_window %d is not written: llama.cpp's llama graph attends to the whole context (as mainline's converter writes Mistral), so logits match transformers only for contexts up to %d tokens", m.window, m.window))
	}
	if m.ctxDefault {
		warns = append(warns, fmt.Sprintf("config.json has no max_position_embeddings: llama.context_length = %d (transformers' LlamaConfig default; llama.cpp needs the key)", llamaDefaultContext))
	}
	path := filepath.Join(dir, "tokenizer_config.json")
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, warns, nil
	}
	if err != nil {
		return nil, nil, err
	}
	var tc struct {
		AddPrefixSpace *bool `json:"add_prefix_space"`
	}
	if err := json.Unmarshal(data, &tc); err != nil {
		return nil, nil, fmt.Errorf("%s: %v", path, err)
	}
	if tc.AddPrefixSpace == nil {
		return nil, warns, nil
	}
	return []gguf.KV{{Key: "tokenizer.ggml.add_space_prefix", Value: gguf.Bool(*tc.AddPrefixSpace)}}, warns, nil
}
