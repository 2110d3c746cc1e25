package convert

import (
	"errors"
	"fmt"

	"github.com/bitnet-convert/bitnet-convert/archtab"
	"github.com/bitnet-convert/bitnet-convert/format"
	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/hf"
	"github.com/bitnet-convert/bitnet-convert/tensormap"
)

// hfBitnetModel converts a Hugging Face BitNet-quantized checkpoint
// (quantization_config.quant_method "bitnet": transformers' BitNet
// integration replaces every nn.Linear outside modules_to_not_convert,
// formats-2026.md §4) of a causal graph that needs no converter hook: the
// archtab rows marked Generic (Qwen2ForCausalLM, Qwen3ForCausalLM). The row
// gives the GGUF arch, the tensor table and the key set; q/k rows keep HF
// order (NEOX rope). Packed (U8 codes + weight_scale) and bf16 master
// ("online") checkpoints both convert, with the weight_scale rule of
// linear_class as for every packed checkpoint (weightScaleRule).
type hfBitnetModel struct {
	row   *archtab.Arch
	class string
	// headDimKey: config.json has head_dim, so attention.key_length and
	// value_length are written (mainline's TextModel.set_gguf_parameters
	// writes them exactly then).
	headDimKey bool
	// dense is the refusal used when a checkpoint without
	// quantization_config is not group-scaled ternary (DenseCandidate).
	dense error
	// norms and ternarize: per-projection input norms and --ternarize
	// (normin.go), as for the llama row.
	norms     normIn
	ternarize bool
}

var (
	_ Converter      = (*hfBitnetModel)(nil)
	_ DenseCandidate = (*hfBitnetModel)(nil)
)

func init() {
	for _, a := range archtab.All() {
		if !a.Generic {
			continue
		}
		for _, class := range a.HF {
			Register(class, newHFBitnet(a, class))
		}
	}
}

// newHFBitnet accepts a config of class for row with a BitNet
// quantization_config, or without one as a DenseCandidate (accepted by
// NewPlan when every projection is group-scaled ternary, or on --ternarize
// as float masters). Refused, one line each naming config.json and the key:
// another quant_method, a hidden_act other than the row's, rope_scaling (the
// graph runs plain rope), use_sliding_window (the mainline graph attends to
// the whole context).
func newHFBitnet(row *archtab.Arch, class string) NewFunc { return newHFBitnetOpts(row, class, false) }

// newHFBitnetOpts is newHFBitnet; with ternarize (--ternarize) a config
// without quantization_config is accepted and its float projections are
// ternarized (BitNet Distillation's Qwen3 checkpoints). use_rms_norm and
// "<proj>.norm" become *_norm_in (normin.go).
func newHFBitnetOpts(row *archtab.Arch, class string, ternarize bool) NewFunc {
	return func(cfg *hf.Config) (Converter, error) {
		qc, ok := cfg.Sub("quantization_config")
		qm := ""
		if ok {
			var err error
			if qm, _, err = qc.String("quant_method"); err != nil {
				return nil, err
			}
		}
		var dense error
		if qm == "bitnet" {
			ternarize = false
		} else {
			// Another quant_method is refused at once; none at all is a
			// DenseCandidate: group-scaled ternary values, or float
			// masters on --ternarize (needTernarize's retry).
			dense = needTernarize(cfg, class, qm, newHFBitnetOpts(row, class, true))
			var te *ternarizeError
			if !errors.As(dense, &te) {
				return nil, dense
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
		if act != "" && act != string(row.FFN) {
			return nil, fmt.Errorf("%s: hidden_act %q is not supported for %s (supported: %s)", cfg.Path, act, class, row.FFN)
		}
		if rs, isObject := cfg.Sub("rope_scaling"); isObject && len(rs.Raw) > 0 {
			return nil, fmt.Errorf("%s: rope_scaling is set; GGUF arch %s is converted with plain rope only (remove rope_scaling or set it to null)", cfg.Path, row.GGUF)
		} else if cfg.Has("rope_scaling") && !isObject {
			return nil, fmt.Errorf("%s: \"rope_scaling\" must be an object or null", cfg.Path)
		}
		if sw, _, err := cfg.Bool("use_sliding_window"); err != nil {
			return nil, err
		} else if sw {
			return nil, fmt.Errorf("%s: use_sliding_window is true; the %s graph of mainline llama.cpp attends to the whole context, so this model cannot be converted exactly (not supported)", cfg.Path, row.GGUF)
		}
		hd, _, err := cfg.Int("head_dim")
		if err != nil {
			return nil, err
		}
		return &hfBitnetModel{row: row, class: class, headDimKey: hd > 0, dense: dense, norms: norms, ternarize: ternarize}, nil
	}
}

// DenseRefusal is the refusal of a checkpoint without quantization_config
// whose projections are not group-scaled ternary (nil for a BitNet
// checkpoint).
func (m *hfBitnetModel) DenseRefusal() error { return m.dense }

func (m *hfBitnetModel) Arch() string            { return m.row.GGUF }
func (m *hfBitnetModel) Table() *tensormap.Table { return normInTable(m.row.Table) }
func (m *hfBitnetModel) StripPrefix() string     { return m.row.StripPrefix }
func (m *hfBitnetModel) Embedding() bool         { return false }

// Geometry is the shared rule; an odd head_dim is refused (rope pairs
// dimensions).
func (m *hfBitnetModel) Geometry(cfg *hf.Config) (Geometry, error) {
	g, err := geometry(cfg)
	if err != nil {
		return g, err
	}
	if g.HeadDim%2 != 0 {
		return g, fmt.Errorf("%s: head_dim %d is odd; rope needs pairs of dimensions", cfg.Path, g.HeadDim)
	}
	return g, nil
}

// HParams writes the row's key set, then attention.key_length and
// value_length when config.json has head_dim: the keys ggml-org/llama.cpp
// convert_hf_to_gguf.py TextModel.set_gguf_parameters writes for Qwen2Model
// and Qwen3Model (no vocab_size, no rope.dimension_count).
func (m *hfBitnetModel) HParams(cfg *hf.Config) ([]gguf.KV, error) {
	arch := m.row.GGUF
	kvs, err := tableKVs(arch, cfg, m.row.HParams)
	if err != nil {
		return nil, err
	}
	if m.headDimKey {
		g, err := geometry(cfg)
		if err != nil {
			return nil, err
		}
		kvs = append(kvs,
			gguf.KV{Key: arch + ".attention.key_length", Value: gguf.Uint32(uint32(g.HeadDim))},
			gguf.KV{Key: arch + ".attention.value_length", Value: gguf.Uint32(uint32(g.HeadDim))})
	}
	return append(kvs, m.norms.kvs(arch)...), nil
}

// OutTypes are the float outtypes and the ternary ones whose runtime has the
// row's graph (archtab.Arch.Targets): for qwen2/qwen3 TQ1_0, TQ2_0 and Q2_0
// (mainline llama.cpp), not I2_S/TL1/TL2 (bitnet.cpp has no causal qwen
// graph) nor IQ1_BN/IQ2_BN.
func (m *hfBitnetModel) OutTypes() []OutType {
	return m.norms.outTypes(rowOutTypes(m.row), m.ternarize)
}

// rowOutTypes lists OutTypes (in their order) that row's graph can be
// written in: every float outtype, and a ternary one when the runtime of its
// format has a target for row.
func rowOutTypes(row *archtab.Arch) []OutType {
	var out []OutType
	for _, o := range OutTypes {
		if spec, ok := format.Lookup(string(o)); ok {
			if _, has := row.Target(archtab.Runtime(spec.Runtime)); !has {
				continue
			}
		}
		out = append(out, o)
	}
	return out
}

// noGraphError is CheckOutType's refusal of a ternary outtype whose runtime
// has no graph for the arch (archtab.Arch.Targets), naming the runtime and
// the outtypes that work; nil when that is not why t is refused.
func noGraphError(conv Converter, t OutType) error {
	row := archtab.Causal(conv.Arch())
	spec, ok := format.Lookup(string(t))
	if row == nil || conv.Embedding() || !ok {
		return nil
	}
	if _, has := row.Target(archtab.Runtime(spec.Runtime)); has {
		return nil
	}
	var alt []OutType
	for _, o := range rowOutTypes(row) {
		if _, ternary := format.Lookup(string(o)); ternary {
			alt = append(alt, o)
		}
	}
	return fmt.Errorf("--outtype %s is refused for arch %s: %s has no causal %s graph (use %s for mainline llama.cpp, or a float outtype)", t, conv.Arch(), spec.Runtime, conv.Arch(), joinOutTypes(alt))
}
