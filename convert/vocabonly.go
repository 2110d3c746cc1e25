package convert

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bitnet-convert/bitnet-convert/archtab"
	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/hf"
	"github.com/bitnet-convert/bitnet-convert/tensormap"
)

// vocabOnlyArchs are the architectures a --vocab-only file can be written
// for although no converter handles their weights yet: the file holds only
// the hyper-parameters and the vocabulary, so it needs no tensor table.
// LlamaForCausalLM (Llama3-8B-1.58, Falcon3) gets arch "llama", as
// llama.cpp's ggml-vocab-*.gguf files of Llama-family tokenizers have. Keyed
// like the registry: architectures[0] or "model_type:" + model_type.
var vocabOnlyArchs = map[string]string{
	archtab.Llama.HF[0]:                     archtab.Llama.GGUF,
	"model_type:" + archtab.Llama.ModelType: archtab.Llama.GGUF,
}

// vocabOnlyModel is the converter of a vocabOnlyArchs entry: llama-style
// hyper-parameters (the table bitnet.cpp and llama.cpp write for llama) and
// vocab_size, no tensors.
type vocabOnlyModel struct{ arch string }

var _ Converter = vocabOnlyModel{}

func (m vocabOnlyModel) Arch() string                              { return m.arch }
func (m vocabOnlyModel) Table() *tensormap.Table                   { return nil }
func (m vocabOnlyModel) StripPrefix() string                       { return "" }
func (m vocabOnlyModel) Embedding() bool                           { return false }
func (m vocabOnlyModel) Geometry(cfg *hf.Config) (Geometry, error) { return geometry(cfg) }

// HParams writes the llama hyper-parameter table, vocab_size and the head_dim
// keys.
func (m vocabOnlyModel) HParams(cfg *hf.Config) ([]gguf.KV, error) {
	kvs, err := tableKVs(m.arch, cfg, archtab.LlamaHParams)
	if err != nil {
		return nil, err
	}
	g, err := geometry(cfg)
	if err != nil {
		return nil, err
	}
	kvs = append(kvs, gguf.KV{Key: m.arch + ".vocab_size", Value: gguf.Uint32(uint32(g.Vocab))})
	return append(kvs, headDimKVs(m.arch, g, false)...), nil
}

// vocabConverterFor is converterFor, falling back to vocabOnlyArchs for an
// architecture whose weights cannot be converted yet.
func vocabConverterFor(cfg *hf.Config) (Converter, error) {
	conv, err := converterFor(cfg)
	if err == nil || !errors.Is(err, ErrUnknownArch) {
		return conv, err
	}
	archs, _ := cfg.Raw["architectures"].([]any)
	if len(archs) > 0 {
		if name, _ := archs[0].(string); vocabOnlyArchs[name] != "" {
			return vocabOnlyModel{arch: vocabOnlyArchs[name]}, nil
		}
	}
	if mt, ok, _ := cfg.String("model_type"); ok && vocabOnlyArchs["model_type:"+mt] != "" {
		return vocabOnlyModel{arch: vocabOnlyArchs["model_type:"+mt]}, nil
	}
	return nil, err
}

// VocabOnlyArchs lists the HF architectures that only --vocab-only accepts
// (sorted), for --list-archs.
func VocabOnlyArchs() []string {
	var out []string
	for k := range vocabOnlyArchs {
		if _, ok := registry[k]; !ok && !strings.HasPrefix(k, "model_type:") {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// NewVocabPlan plans a --vocab-only file from dir/config.json and the
// tokenizer files in dir; no safetensors file is opened or needed (llama.cpp's
// convert_hf_to_gguf_update.py makes its ggml-vocab-*.gguf files from such
// directories). The plan has no tensors; its KVs are general.architecture,
// general.name, the architecture's hyper-parameters, the tokenizer and the
// --metadata overrides, with no general.file_type (no data, so no type to
// state). Errors: no config.json, an architecture that is neither
// convertible nor in vocabOnlyArchs, a config without the hyper-parameters,
// no tokenizer (--vocab-only with --no-vocab is a usage error upstream).
func NewVocabPlan(dir string, opts Options) (*Plan, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("open checkpoint: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("open checkpoint: %s is not a directory", dir)
	}
	cfgPath := filepath.Join(dir, hf.ConfigFile)
	if _, err := os.Stat(cfgPath); errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: no %s found (looked for %s): %w", dir, hf.ConfigFile, cfgPath, hf.ErrNoCheckpoint)
	}
	cfg, err := hf.ReadConfig(cfgPath)
	if err != nil {
		return nil, err
	}
	conv, err := vocabConverterFor(cfg)
	if err != nil {
		return nil, err
	}
	geo, err := conv.Geometry(cfg)
	if err != nil {
		return nil, err
	}
	opts.VocabOnly = true
	if opts.OutType == "" {
		opts.OutType = OutI2S
	}
	p := &Plan{Dir: dir, Arch: conv.Arch(), OutType: opts.OutType, Converter: conv, Geometry: geo, config: cfg.Raw}
	if err := p.buildKVs(dir, cfg, opts); err != nil {
		return nil, err
	}
	return p, nil
}
