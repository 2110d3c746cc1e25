package convert

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/bitnet-convert/bitnet-convert/format"
	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/hf"
	"github.com/bitnet-convert/bitnet-convert/tensormap"
)

// OutType is the requested output type (--outtype).
type OutType string

// Output types. The ternary ones are the rows of format's type table
// (format.Specs); these constants name those the code treats specially.
const (
	OutI2S  OutType = "i2_s"
	OutTL1  OutType = "tl1"
	OutTL2  OutType = "tl2"
	OutF32  OutType = "f32"
	OutF16  OutType = "f16"
	OutBF16 OutType = "bf16"
	// The ternary types of the other runtimes (format package).
	OutTQ1_0 OutType = "tq1_0"
	OutTQ2_0 OutType = "tq2_0"
	OutIQ1BN OutType = "iq1_bn"
	OutIQ2BN OutType = "iq2_bn"
)

// OutTypes lists the accepted --outtype values: format's type table in its
// order (format.Names), then f32, f16, bf16.
var OutTypes = outTypes()

func outTypes() []OutType {
	var out []OutType
	for _, n := range format.Names() {
		out = append(out, OutType(n))
	}
	return append(out, OutF32, OutF16, OutBF16)
}

// OutTypeList is the accepted --outtype values joined by sep ("|" for a
// usage line, ", " for a message).
func OutTypeList(sep string) string {
	names := make([]string, len(OutTypes))
	for i, t := range OutTypes {
		names[i] = string(t)
	}
	return strings.Join(names, sep)
}

// ParseOutType validates s against OutTypes.
func ParseOutType(s string) (OutType, error) {
	for _, t := range OutTypes {
		if string(t) == strings.ToLower(s) {
			return t, nil
		}
	}
	return "", fmt.Errorf("unknown output type %q (supported: %s)", s, OutTypeList(", "))
}

// WeightScaleRule says how a packed checkpoint's weight_scale applies to its
// ternary codes: W = t·ws (Multiply, HF AutoBitLinear) or W = t/ws (Divide, HF
// BitLinear). Spec conversion.md §2.4 "Our rule".
type WeightScaleRule string

// Weight-scale rules. RuleAuto reads quantization_config.linear_class.
const (
	RuleAuto     WeightScaleRule = ""
	RuleMultiply WeightScaleRule = "multiply"
	RuleDivide   WeightScaleRule = "divide"
)

// Options configures a conversion. The zero value converts to I2_S.
type Options struct {
	OutType          OutType
	ModelName        string          // general.name; default: the input directory's base name
	WeightScale      WeightScaleRule // override for packed checkpoints
	AllowFallback    bool            // write projections whose row length does not fit the packing as F16
	AllowTieFallback bool            // tie_word_embeddings false without lm_head: tie instead of failing
	NoVocab          bool            // convert without tokenizer
	VocabOnly        bool            // write KVs only, no tensors
	Pre              string          // override tokenizer.ggml.pre for byte-level BPE
	Metadata         []gguf.KV       // general.* overrides (from --metadata)
	KernelConfig     []byte          // kernel_config.ini for tl1/tl2; nil derives one
	I2SLayout        format.Layout   // I2_S bit layout (default x86)
	// TokenEmbeddingType and OutputTensorType override the type of
	// token_embd and of an untied output head (F32, F16, BF16, Q8_0, Q6_K;
	// "" keeps the outtype's policy), as llama-quantize's flags do.
	TokenEmbeddingType string
	OutputTensorType   string
	Threads            int // goroutines per tensor; 0 = GOMAXPROCS
	// Ternarize (--ternarize) asks for lossy abs-mean ternarization (one
	// scale per tensor) where a checkpoint is not ternary as stored: float
	// masters without a BitNet quantization_config (BitNet Distillation;
	// normin.go), and a group-scaled ternary checkpoint's projections when
	// the outtype cannot hold their per-group scales (groupscaled.go;
	// Q2_0 keeps them exactly either way). Without it both are refused.
	Ternarize bool
	// Log receives warnings and notices, one line each (nil: discarded).
	Log io.Writer
	// Verbose adds one line per tensor and the weight-scale rule to Log.
	Verbose bool
	// Progress, when set, is called after each tensor is written.
	Progress func(done, total int, name string)
	// ProgressBytes, when set, is called after each tensor is written with
	// the output tensor bytes written so far and in all (Plan.TotalBytes):
	// a bar over bytes moves with the data, where one over tensors sits
	// still on a large token_embd.
	ProgressBytes func(done, total uint64, name string)
}

// Converter is one architecture family: it knows its GGUF arch name, its
// tensor-name table and its hyper-parameter KVs. Implementations are small
// files (convert_<arch>.go) registered with Register.
type Converter interface {
	// Arch is the GGUF general.architecture value.
	Arch() string
	// Table maps HF tensor names to GGUF names and classes.
	Table() *tensormap.Table
	// StripPrefix is removed from HF names before the table lookup ("" for
	// none; the embedding models drop a leading "model.").
	StripPrefix() string
	// HParams returns the architecture KVs ({arch}.*) from config.json.
	HParams(cfg *hf.Config) ([]gguf.KV, error)
	// Geometry returns the expected shapes for the shape checks.
	Geometry(cfg *hf.Config) (Geometry, error)
	// Embedding reports a sentence-embedding model (no output head; pooling).
	Embedding() bool
}

// Optional hooks. An architecture implements the ones it needs beside the
// Converter interface (ollama's convert.go declares its optional hooks the
// same way); the planner and the streaming converter test for them by name.

// OutTypeLimiter restricts the --outtype values of an architecture (the
// embedding models refuse tl1/tl2). Without it every outtype is allowed.
type OutTypeLimiter interface {
	OutTypes() []OutType
}

// ExtraKVser adds KVs read from files of the checkpoint directory besides
// config.json (pooling type, add_space_prefix), with warnings to print.
type ExtraKVser interface {
	ExtraKVs(dir string) ([]gguf.KV, []string, error)
}

// TokenizerJSONPreferrer reads tokenizer.json before tokenizer.model when
// both exist (the embedding models' converter does).
type TokenizerJSONPreferrer interface {
	TokenizerJSONFirst() bool
}

// VocabFixer rewrites the tokenizer KVs after they are built (the Qwen3 EOS
// override).
type VocabFixer interface {
	FixVocabKVs([]gguf.KV) []gguf.KV
}

// GemmaNormFixer asks for the Gemma (1 + w) fix on the norms its table flags
// "gemma-norm".
type GemmaNormFixer interface {
	GemmaNormFix() bool
}

// RopePermuter interleaves the rows of a projection for GGUF llama's
// adjacent-pair rope: it returns the number of head groups of tensor
// ggufName (0: not permuted). HF [out, in] rows h·d + j·d/2 + i move to
// h·d + 2i + j (bitnet.cpp convert-hf-to-gguf-bitnet.py, LlamaModel.permute).
type RopePermuter interface {
	RopeHeads(ggufName string) int
}

// Geometry is what shape checks need from config.json (hf.Geometry, read
// by hf.Config.Geometry).
type Geometry = hf.Geometry

// NewFunc builds the converter for a parsed config.json.
type NewFunc func(cfg *hf.Config) (Converter, error)

var registry = map[string]NewFunc{}

// Register adds a converter under an HF architectures[0] name (or a
// "model_type:NAME" key for checkpoints matched by model_type). It panics on a
// duplicate name (a programmer error).
func Register(name string, f NewFunc) {
	if _, dup := registry[name]; dup {
		panic("convert: duplicate converter " + name)
	}
	registry[name] = f
}

// Supported returns the registered architecture names, sorted.
func Supported() []string {
	var out []string
	for k := range registry {
		if !strings.HasPrefix(k, "model_type:") {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// ErrUnknownArch is returned (wrapped) for an architecture no converter
// handles.
var ErrUnknownArch = errors.New("unsupported architecture")

// converterFor picks the converter from config.json's architectures[0], then
// model_type.
func converterFor(cfg *hf.Config) (Converter, error) {
	archs, _ := cfg.Raw["architectures"].([]any)
	var name string
	if len(archs) > 0 {
		name, _ = archs[0].(string)
	}
	if f, ok := registry[name]; ok && name != "" {
		return f(cfg)
	}
	if mt, ok, _ := cfg.String("model_type"); ok {
		if f, ok := registry["model_type:"+mt]; ok {
			return f(cfg)
		}
	}
	if name == "" {
		return nil, fmt.Errorf("%s: no \"architectures\" entry: %w (supported: %s)", cfg.Path, ErrUnknownArch, strings.Join(Supported(), ", "))
	}
	return nil, fmt.Errorf("%s: architecture %q: %w (supported: %s)", cfg.Path, name, ErrUnknownArch, strings.Join(Supported(), ", "))
}

// CheckOutType reports whether hf2gguf can write outtype t for the model of
// cfg: an error naming the arch and the outtypes it supports when its
// converter refuses t (the embedding models refuse tl1/tl2), nil otherwise,
// and nil as well for an architecture no converter handles (codegen still
// serves bitnet.cpp's own converter for those). codegen uses it so it does
// not emit kernels for a model hf2gguf would refuse to convert to TL.
func CheckOutType(cfg *hf.Config, t OutType) error {
	conv, err := converterFor(cfg)
	if err != nil {
		return nil
	}
	// A checkpoint without quantization_config is judged by the converter
	// --ternarize builds (the widest reading of it): whether its values
	// make it group-scaled or need the flag is NewPlan's later refusal.
	if dc, ok := conv.(DenseCandidate); ok {
		var te *ternarizeError
		if r := dc.DenseRefusal(); r != nil && errors.As(r, &te) {
			if c, err := te.retry(cfg); err == nil {
				conv = c
			}
		}
	}
	if lim, ok := conv.(OutTypeLimiter); ok && !slices.Contains(lim.OutTypes(), t) {
		if err := noGraphError(conv, t); err != nil {
			return err
		}
		return fmt.Errorf("--outtype %s is not supported for arch %s (supported: %s)", t, conv.Arch(), joinOutTypes(lim.OutTypes()))
	}
	return nil
}

// Convertible returns the error hf2gguf would give for the architecture of
// cfg (ErrUnknownArch wrapped, naming it and the supported ones, or the
// architecture's own refusal, e.g. a LlamaForCausalLM that is not a BitNet
// checkpoint), or nil when a converter accepts it. dummy uses it so it does
// not suggest an hf2gguf command that cannot work (defect D21).
func Convertible(cfg *hf.Config) error {
	conv, err := converterFor(cfg)
	if err != nil {
		return err
	}
	if dc, ok := conv.(DenseCandidate); ok {
		// Only group-scaled ternary values would make it convertible, and
		// the config alone cannot say so.
		return dc.DenseRefusal()
	}
	return nil
}
