package convert

import (
	"fmt"
	"math"

	"github.com/bitnet-convert/bitnet-convert/archtab"
	"github.com/bitnet-convert/bitnet-convert/format"
	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/hf"
	"github.com/bitnet-convert/bitnet-convert/tensormap"
)

// bitnetActArch maps config.json hidden_act to the GGUF arch of a
// BitnetForCausalLM / BitNetForCausalLM checkpoint: the FFN activation is the
// one graph difference (spec §1.2, our rule), read from the HiddenAct of
// archtab's BitNet rows. "" stands for an absent key.
var bitnetActArch = func() map[string]string {
	m := map[string]string{}
	for _, a := range archtab.ByHF(archtab.Bitnet.HF[0]) {
		for _, act := range a.HiddenAct {
			m[act] = a.GGUF
		}
	}
	return m
}()

// bitnetModel converts the 1bitLLM (bitnet_b1_58-large/3B) and the 2B-4T
// checkpoints.
type bitnetModel struct {
	arch string
	act  string // hidden_act: relu2 or silu
}

var _ Converter = (*bitnetModel)(nil)

func init() {
	for _, class := range archtab.Bitnet.HF {
		Register(class, newBitnet)
	}
}

func newBitnet(cfg *hf.Config) (Converter, error) {
	act, _, err := cfg.String("hidden_act")
	if err != nil {
		return nil, err // names config.json and the key
	}
	arch, ok := bitnetActArch[act]
	if !ok {
		return nil, fmt.Errorf("%s: hidden_act %q is not supported for BitNet (supported: relu2 → bitnet-b1.58, silu → bitnet)", cfg.Path, act)
	}
	if act == "" {
		act = "silu"
	}
	return &bitnetModel{arch: arch, act: act}, nil
}

func (m *bitnetModel) Arch() string                              { return m.arch }
func (m *bitnetModel) Table() *tensormap.Table                   { return archtab.Causal(m.arch).Table }
func (m *bitnetModel) StripPrefix() string                       { return "" }
func (m *bitnetModel) Embedding() bool                           { return false }
func (m *bitnetModel) Geometry(cfg *hf.Config) (Geometry, error) { return geometry(cfg) }

// HParams writes the llama-style hyper-parameters, vocab_size, the rope
// scaling pair that bitnet.cpp's converter writes (linear, factor 1 unless the
// config says otherwise) and the head_dim keys.
func (m *bitnetModel) HParams(cfg *hf.Config) ([]gguf.KV, error) {
	kvs, err := tableKVs(m.arch, cfg, archtab.Causal(m.arch).HParams)
	if err != nil {
		return nil, err
	}
	g, err := geometry(cfg)
	if err != nil {
		return nil, err
	}
	kvs = append(kvs, gguf.KV{Key: m.arch + ".vocab_size", Value: gguf.Uint32(uint32(g.Vocab))})
	factor := float32(1)
	rs, isObject := cfg.Sub("rope_scaling")
	if cfg.Has("rope_scaling") && !isObject {
		return nil, fmt.Errorf("%s: \"rope_scaling\" must be an object or null", cfg.Path)
	}
	if isObject {
		typ, _, _ := rs.String("type", "rope_type")
		if typ != "linear" {
			return nil, fmt.Errorf("%s: rope_scaling type %q is not supported for BitNet (only linear)", cfg.Path, typ)
		}
		f, ok, err := rs.Float("factor")
		if err != nil || !ok {
			return nil, fmt.Errorf("%s: rope_scaling needs a numeric \"factor\"", cfg.Path)
		}
		if !(f > 0) || math.IsInf(f, 0) {
			// the runtime refuses such a file on load (freq_scale = 1/factor)
			return nil, fmt.Errorf("%s: rope_scaling factor %v must be a positive number", cfg.Path, f)
		}
		factor = float32(f)
	}
	kvs = append(kvs,
		gguf.KV{Key: m.arch + ".rope.scaling.type", Value: gguf.String("linear")},
		gguf.KV{Key: m.arch + ".rope.scaling.factor", Value: gguf.Float32(factor)})
	kvs = append(kvs, headDimKVs(m.arch, g, false)...)
	// The FFN activation, for loaders that do not know the arch
	// (format.HiddenActivationSuffix).
	kvs = append(kvs, gguf.KV{Key: m.arch + format.HiddenActivationSuffix, Value: gguf.String(m.act)})
	return kvs, nil
}
