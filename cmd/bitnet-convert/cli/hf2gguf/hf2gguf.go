// Package hf2gguf is the `bitnet-convert hf2gguf DIR` command: a Hugging Face
// BitNet checkpoint to GGUF in one step.
package hf2gguf

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/spf13/cobra"

	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/flagx"
	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/interrupt"
	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/progress"
	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/summary"
	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/usage"
	"github.com/bitnet-convert/bitnet-convert/convert"
	"github.com/bitnet-convert/bitnet-convert/format"
	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/internal/fsutil"
	"github.com/bitnet-convert/bitnet-convert/internal/outname"
	"github.com/bitnet-convert/bitnet-convert/tokenizer"
)

// Options are the parsed flags of hf2gguf.
type Options struct {
	Dir              string
	OutType          string
	OutFile          string
	ModelName        string
	DryRun           bool
	VocabOnly        bool
	NoVocab          bool
	MetadataFile     string
	Force            bool
	Verbose          bool
	WeightScale      string
	AllowFallback    bool
	AllowTieFallback bool
	Ternarize        bool // --ternarize (convert.Options.Ternarize)
	Pre              string
	KernelConfig     string
	Threads          int
	// JSON prints the summary (or the --dry-run plan) as one JSON object.
	JSON bool
	// ListArchs prints the supported architectures and output types and
	// converts nothing.
	ListArchs     bool
	I2SLayout     string
	TokenEmbdType string
	OutputType    string

	Stdout, Stderr io.Writer
	// StderrIsTerminal enables the progress bar.
	StderrIsTerminal bool
	// Context is cancelled on Ctrl-C; nil means context.Background with
	// signal handling installed by Run.
	Context context.Context
}

// NewCmd returns the hf2gguf command. runF replaces Run in tests (nil: Run).
func NewCmd(runF func(*Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "hf2gguf DIR|ORG/NAME[@REVISION]",
		Short: "Convert a Hugging Face BitNet checkpoint (directory or repo id) to GGUF (" + strings.ToUpper(convert.OutTypeList(", ")) + ")",
		Long: `Convert a Hugging Face BitNet b1.58 checkpoint (config.json + model.safetensors or shards)
to a GGUF file for ` + format.RuntimeList() + `. Master weights are ternarized with abs-mean; packed checkpoints
(U8 + weight_scale) are unpacked and never re-quantized. A dense checkpoint without quantization_config
whose projections are ternary times one scale per 128 inputs (group-scaled, e.g. Ternary Bonsai
-unpacked; recognised from the values) converts exactly to --outtype q2_0; other ternary outtypes
are refused unless --ternarize asks for the lossy abs-mean conversion. The input directory is only read; the
output is written atomically. A Hugging Face repo id (org/name[@revision]; a directory that
exists wins) is downloaded first into the Hugging Face cache (HF_HUB_CACHE, HF_HOME; HF_TOKEN,
HF_ENDPOINT, HF_HUB_OFFLINE=1 as for huggingface_hub); a cache folder models--org--name
converts the snapshot its refs/main names.`,
		Example: `  bitnet-convert hf2gguf ./bitnet_b1_58-large
  bitnet-convert hf2gguf microsoft/bitnet-b1.58-2B-4T@main
  bitnet-convert hf2gguf ./bitnet_b1_58-large --outtype tl2 --outfile out/
  bitnet-convert hf2gguf ./bitnet_b1_58-large --outfile 'large-{ftype}.gguf' --dry-run --json
  bitnet-convert hf2gguf ~/.cache/huggingface/hub/models--org--name/snapshots/REV --vocab-only
  bitnet-convert hf2gguf --list-archs`,
		Args: func(cmd *cobra.Command, args []string) error {
			if opts.ListArchs {
				if len(args) != 0 {
					return usage.Errorf("--list-archs takes no checkpoint directory (got %q)", args)
				}
				return nil
			}
			if len(args) != 1 {
				return usage.Errorf("hf2gguf takes exactly one argument, the checkpoint directory (got %d)", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Stdout = cmd.OutOrStdout()
			if opts.ListArchs {
				return ListArchs(opts.Stdout, opts.JSON)
			}
			opts.Dir = args[0]
			opts.Stderr = cmd.ErrOrStderr()
			opts.StderrIsTerminal = progress.IsTerminal(opts.Stderr)
			if _, err := convert.ParseOutType(opts.OutType); err != nil {
				return usage.Errorf("--outtype: %v", err)
			}
			switch opts.WeightScale {
			case "", "multiply", "divide":
			default:
				return usage.Errorf("--weight-scale must be multiply or divide, got %q", opts.WeightScale)
			}
			if opts.VocabOnly && opts.NoVocab {
				return usage.Errorf("--vocab-only and --no-vocab exclude each other")
			}
			if err := flagx.CheckThreads(opts.Threads); err != nil {
				return err
			}
			if _, err := format.ParseLayout(opts.I2SLayout); err != nil {
				return usage.Errorf("--i2s-layout: %v", err)
			}
			if opts.I2SLayout != "x86" && !strings.EqualFold(opts.OutType, "i2_s") {
				return usage.Errorf("--i2s-layout applies to --outtype i2_s, not %s", opts.OutType)
			}
			for _, fl := range []struct{ name, v string }{{"--token-embedding-type", opts.TokenEmbdType}, {"--output-tensor-type", opts.OutputType}} {
				if fl.v == "" {
					continue
				}
				if _, err := convert.ParseFloatType(fl.v); err != nil {
					return usage.Errorf("%s: %v", fl.name, err)
				}
			}
			if opts.Pre != "" && !tokenizer.KnownPre(opts.Pre) {
				return usage.Errorf("--pre %q is not a pre-tokenizer llama.cpp knows (e.g. llama-bpe, qwen2, gpt-2; see llama.cpp's src/llama-vocab.cpp)", opts.Pre)
			}
			if ot, _ := convert.ParseOutType(opts.OutType); convert.CheckPre(opts.Pre, ot) != nil {
				return usage.Errorf("%v", convert.CheckPre(opts.Pre, ot))
			}
			if opts.KernelConfig != "" && opts.OutType != "tl1" && opts.OutType != "tl2" {
				return usage.Errorf("--kernel-config applies to --outtype tl1 or tl2, not %s", opts.OutType)
			}
			if runF != nil {
				return runF(opts)
			}
			return Run(opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.OutType, "outtype", "i2_s", "output type: "+strings.Join(outTypeNames(), ", ")+" (--list-archs says which each architecture takes)")
	f.StringVar(&opts.OutFile, "outfile", "", "output file, or a directory to put the default name in; {ftype}/{outtype} in the name become the output type (default ./<model-name>-<outtype>.gguf, ./<model-name>-vocab.gguf with --vocab-only)")
	f.StringVar(&opts.ModelName, "model-name", "", "general.name, kept verbatim (a repo id such as org/name works; the file name is sanitised) (default: the input directory's name, or the repository's name for a repo id or a Hugging Face cache snapshot)")
	f.BoolVar(&opts.DryRun, "dry-run", false, "print the plan (output path, tensor names, shapes, types, bytes) and write nothing; fails as the real run would (existing output without --force, missing directory)")
	f.BoolVar(&opts.VocabOnly, "vocab-only", false, "write the metadata and vocabulary only, no tensors (needs only config.json and the tokenizer files)")
	f.BoolVar(&opts.JSON, "json", false, "print the summary, or the --dry-run plan, as JSON")
	f.BoolVar(&opts.ListArchs, "list-archs", false, "list the supported architectures and output types, and exit")
	f.StringVar(&opts.I2SLayout, "i2s-layout", "x86", "I2_S bit layout: x86 (QK 128), arm (QK 64, bitnet.cpp ARM builds), x86-1x4 (x86 builds without ACT_PARALLEL)")
	f.StringVar(&opts.TokenEmbdType, "token-embedding-type", "", "type of token_embd: F32, F16, BF16, Q8_0, Q6_K (default: the outtype's)")
	f.StringVar(&opts.OutputType, "output-tensor-type", "", "type of an untied output head: F32, F16, BF16, Q8_0, Q6_K (default: the outtype's)")
	f.BoolVar(&opts.NoVocab, "no-vocab", false, "convert without a tokenizer")
	f.StringVar(&opts.MetadataFile, "metadata", "", "TOML file of general.* keys to set or override")
	f.BoolVar(&opts.Force, "force", false, "overwrite an existing output file")
	f.BoolVarP(&opts.Verbose, "verbose", "v", false, "print one line per tensor and the weight-scale rule")
	f.StringVar(&opts.WeightScale, "weight-scale", "", "packed checkpoints: multiply (AutoBitLinear) or divide (BitLinear) by weight_scale; default from quantization_config.linear_class")
	f.BoolVar(&opts.AllowFallback, "allow-fallback", false, "write projections whose rows do not fit the ternary packing as F16 instead of failing")
	f.BoolVar(&opts.Ternarize, "ternarize", false, "lossy abs-mean ternarization, one scale per tensor, where the checkpoint is not ternary as stored: float master weights without a BitNet quantization_config (e.g. BitNet Distillation), and group-scaled ternary checkpoints (Ternary Bonsai -unpacked) for an outtype that cannot hold their per-128-input scales (--outtype q2_0 keeps those exactly); without it both are refused")
	f.BoolVar(&opts.AllowTieFallback, "allow-tie-fallback", false, "tie_word_embeddings false but no lm_head: use token_embd as the head")
	f.StringVar(&opts.Pre, "pre", "", "tokenizer.ggml.pre for byte-level BPE tokenizers (default: from the tokenizer's split pattern)")
	f.StringVar(&opts.KernelConfig, "kernel-config", "", "kernel_config.ini for --outtype tl1/tl2 (default: the tiling of the preset with the checkpoint's shapes, else derived from the shapes as codegen --from-config)")
	flagx.ThreadsVar(f, &opts.Threads)
	_ = cmd.RegisterFlagCompletionFunc("outtype", cobra.FixedCompletions(outTypeNames(), cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// Run converts opts.Dir as the flags say and prints the summary (or the plan
// for --dry-run) to opts.Stdout; warnings go to opts.Stderr.
func Run(opts *Options) error {
	ctx := opts.Context
	if ctx == nil {
		var stop context.CancelFunc
		ctx, stop = interrupt.NotifyContext(context.Background())
		defer stop()
	}
	outType, _ := convert.ParseOutType(opts.OutType)
	copts := convert.Options{
		OutType:            outType,
		ModelName:          opts.ModelName,
		WeightScale:        convert.WeightScaleRule(opts.WeightScale),
		AllowFallback:      opts.AllowFallback,
		AllowTieFallback:   opts.AllowTieFallback,
		Ternarize:          opts.Ternarize,
		NoVocab:            opts.NoVocab,
		VocabOnly:          opts.VocabOnly,
		Pre:                opts.Pre,
		Threads:            opts.Threads,
		Verbose:            opts.Verbose,
		I2SLayout:          format.Layout(strings.ToLower(opts.I2SLayout)),
		TokenEmbeddingType: opts.TokenEmbdType,
		OutputTensorType:   opts.OutputType,
		Log:                prefixWriter{w: opts.Stderr},
	}
	if opts.MetadataFile != "" {
		md, err := ReadMetadata(opts.MetadataFile)
		if err != nil {
			return err
		}
		copts.Metadata = md
	}
	if opts.KernelConfig != "" {
		data, err := fsutil.ReadFile(opts.KernelConfig)
		if err != nil {
			return fmt.Errorf("--kernel-config: %w", err)
		}
		copts.KernelConfig = data
	}
	dir, inputNote, err := resolveInput(ctx, opts)
	if err != nil {
		return err
	}
	name := opts.ModelName
	if name == "" {
		name = convert.DefaultModelName(dir)
	}
	req := outname.Request{OutFile: opts.OutFile, ModelName: name, OutType: string(outType)}
	if opts.VocabOnly {
		req.Suffix = "vocab"
	}
	out, err := outname.Resolve(req)
	if err != nil {
		return err
	}
	// --force replaces an old output, never a file this run reads (H2).
	for _, in := range []struct{ flag, path string }{{"--metadata", opts.MetadataFile}, {"--kernel-config", opts.KernelConfig}} {
		if fsutil.SameFile(out, in.path) {
			return fmt.Errorf("output %s is the %s file; give another path", out, in.flag)
		}
	}
	if di, err := os.Stat(opts.OutFile); err == nil && di.IsDir() {
		if in, err := os.Stat(dir); err == nil && os.SameFile(di, in) {
			// convert_hf_to_gguf.py writes into the model directory; ours
			// is only read.
			return fmt.Errorf("--outfile %s is the input directory; the input directory is only read, give another directory or file", opts.OutFile)
		}
	}
	bar := progress.New(opts.Stderr, opts.StderrIsTerminal && !opts.DryRun, "converting")
	copts.ProgressBytes = bar.StepBytes
	start := time.Now()
	var plan *convert.Plan
	plan, err = convert.ConvertDir(ctx, dir, out, opts.Force, opts.DryRun, copts)
	bar.Finish()
	if plan != nil && err == nil {
		// On failure only the error line is printed: the notices are
		// about a file that was not written (friction item 13).
		if inputNote != "" {
			fmt.Fprintf(opts.Stderr, "bitnet-convert: %s\n", inputNote)
		}
		printWarnings(opts.Stderr, plan)
		if plan.WeightScaleRule != "" && opts.Verbose {
			fmt.Fprintf(opts.Stderr, "bitnet-convert: weight_scale rule: %s (%s)\n", plan.WeightScaleRule, plan.WeightScaleWhy)
		}
	}
	if err != nil {
		return err
	}
	if opts.DryRun {
		// The real run would fail here too: say so after the plan (exit 1).
		check := outname.Check(out, opts.Force)
		if opts.JSON {
			if err := printJSON(opts.Stdout, planJSON(plan, out, check, opts.VocabOnly)); err != nil {
				return err
			}
		} else {
			printPlan(opts.Stdout, plan, out, opts.VocabOnly)
		}
		if check != nil {
			return fmt.Errorf("the real run would fail: %w", check)
		}
		return nil
	}
	if opts.JSON {
		return printJSON(opts.Stdout, summaryJSON(plan, out, time.Since(start), opts.VocabOnly))
	}
	printSummary(opts.Stdout, plan, out, time.Since(start), opts.VocabOnly)
	return nil
}

func printWarnings(w io.Writer, p *convert.Plan) {
	summary.Notices(w, p.Warnings)
}

func printPlan(w io.Writer, p *convert.Plan, out string, vocabOnly bool) {
	fmt.Fprintf(w, "output %s\n", out)
	if vocabOnly {
		fmt.Fprintf(w, "arch %s, vocab only: %s, %d KVs, no tensors\n", p.Arch, vocabSummary(p), len(p.KVs))
		return
	}
	fmt.Fprintf(w, "arch %s, outtype %s, %d tensors, %d KVs\n", p.Arch, p.OutType, len(p.Tensors), len(p.KVs))
	fmt.Fprintf(w, "%-48s   %-32s %-16s %s\n", "HF tensor", "GGUF tensor", "HF shape", "dtype → type, bytes")
	for _, t := range p.Tensors {
		fmt.Fprintf(w, "%-48s → %-32s %-16s %-4s → %-4s %12d bytes\n", t.HFName, t.GGUFName, fmt.Sprint(t.HFShape), t.Source.DType, t.Type, t.Bytes)
	}
	printTotals(w, p)
	fmt.Fprintf(w, "estimated peak memory: about %s (the largest projection's input, float32 copy, codes and output; other tensors stream)\n", human(p.PeakMemoryEstimate()))
}

func printTotals(w io.Writer, p *convert.Plan) {
	_ = summary.Totals(w, counts(p))
}

// counts is the per-type summary of p's tensors.
func counts(p *convert.Plan) []summary.Count {
	var cs []summary.Count
	for _, c := range p.Summary() {
		cs = append(cs, summary.Count{Type: c.Type, Tensors: c.Tensors, Bytes: c.Bytes})
	}
	return cs
}

func printSummary(w io.Writer, p *convert.Plan, out string, took time.Duration, vocabOnly bool) {
	if vocabOnly {
		fmt.Fprintf(w, "wrote %s: arch %s, vocab only: %s, %d KVs, no tensors, in %.2fs\n", out, p.Arch, vocabSummary(p), len(p.KVs), took.Seconds())
		return
	}
	_ = summary.Write(w, summary.File{Path: out, Arch: p.Arch, Runtime: p.RuntimeLabel(), OutType: string(p.OutType), Tensors: len(p.Tensors), KVs: len(p.KVs), Counts: counts(p), Took: took})
}

func human(n uint64) string { return summary.Human(n) }

// prefixWriter prefixes each write (one line) with the program name.
type prefixWriter struct{ w io.Writer }

func (p prefixWriter) Write(b []byte) (int, error) {
	if p.w == nil {
		return len(b), nil
	}
	if _, err := fmt.Fprintf(p.w, "bitnet-convert: %s", b); err != nil {
		return 0, err
	}
	return len(b), nil
}

// protectedKeys cannot be overridden with --metadata: they describe the data.
var protectedKeys = map[string]bool{"general.architecture": true, "general.file_type": true, "general.quantization_version": true, "general.alignment": true}

// ReadMetadata reads a TOML file of general.* overrides. Keys are written
// either dotted and quoted ("general.license" = "MIT") or as a [general]
// table. Integers become uint32 (int64 when negative or above 2^32−1), floats
// float32, booleans bool, strings string, string arrays string arrays.
// Errors name the file and the key.
func ReadMetadata(path string) ([]gguf.KV, error) {
	var raw map[string]any
	if err := fsutil.CheckRegular(path); err != nil {
		return nil, fmt.Errorf("--metadata: %w", err)
	}
	md, err := toml.DecodeFile(path, &raw)
	if err != nil {
		return nil, fmt.Errorf("--metadata %s: %w", path, err)
	}
	var kvs []gguf.KV
	seen := map[string]bool{}
	for _, key := range md.Keys() {
		parts := []string(key)
		var v any = raw
		for _, p := range parts {
			m, ok := v.(map[string]any)
			if !ok {
				v = nil
				break
			}
			v = m[p]
		}
		if _, isTable := v.(map[string]any); isTable {
			continue
		}
		name := strings.Join(parts, ".")
		if !strings.HasPrefix(name, "general.") {
			return nil, fmt.Errorf("--metadata %s: key %q is not a general.* key", path, name)
		}
		if seen[name] {
			return nil, fmt.Errorf("--metadata %s: key %q is given twice", path, name)
		}
		seen[name] = true
		if protectedKeys[name] {
			return nil, fmt.Errorf("--metadata %s: key %q describes the data and cannot be overridden", path, name)
		}
		val, err := tomlValue(v)
		if err != nil {
			return nil, fmt.Errorf("--metadata %s: key %q: %w", path, name, err)
		}
		if want, ok := generalKeyTypes[name]; ok && (val.Type != want.Type || val.Elem != want.Elem) {
			return nil, fmt.Errorf("--metadata %s: key %q must be a %s (llama.cpp reads it so), not %s", path, name, typeName(want), typeName(val))
		}
		kvs = append(kvs, gguf.KV{Key: name, Value: val})
	}
	return kvs, nil
}

// generalKeyTypes are the value types llama.cpp's gguf-py gives the standard
// general.* keys (gguf constants.py Keys.General): strings, and string arrays
// for the list keys.
var generalKeyTypes = func() map[string]gguf.Value {
	m := map[string]gguf.Value{}
	for _, k := range []string{"name", "author", "version", "organization", "basename", "finetune", "description",
		"quantized_by", "size_label", "license", "license.name", "license.link", "url", "doi", "uuid", "repo_url",
		"source.url", "source.doi", "source.uuid", "source.repo_url", "source.huggingface.repository"} {
		m["general."+k] = gguf.String("")
	}
	for _, k := range []string{"tags", "languages", "datasets"} {
		m["general."+k] = gguf.Strings(nil)
	}
	return m
}()

func typeName(v gguf.Value) string {
	if v.Type == gguf.ValueArray {
		return "array of " + v.Elem.String()
	}
	return v.Type.String()
}

func tomlValue(v any) (gguf.Value, error) {
	switch x := v.(type) {
	case string:
		return gguf.String(x), nil
	case bool:
		return gguf.Bool(x), nil
	case int64:
		if x >= 0 && x <= 1<<32-1 {
			return gguf.Uint32(uint32(x)), nil
		}
		return gguf.Int64(x), nil
	case float64:
		return gguf.Float32(float32(x)), nil
	case []any:
		ss := make([]string, len(x))
		for i, e := range x {
			s, ok := e.(string)
			if !ok {
				return gguf.Value{}, errors.New("only arrays of strings are supported")
			}
			ss[i] = s
		}
		return gguf.Strings(ss), nil
	}
	return gguf.Value{}, fmt.Errorf("%s cannot be a GGUF value; give a string, an integer, a float, a boolean or an array of strings", tomlKind(v))
}

// tomlKind names the TOML type of a decoded value in the words of the
// TOML spec, not Go's (defect H23 printed time.Time and
// []map[string]interface {}).
func tomlKind(v any) string {
	switch v.(type) {
	case time.Time:
		return "a date-time" // offset or local date-time, local date, local time
	case []map[string]any:
		return "an array of tables"
	case map[string]any:
		return "a table"
	case []any:
		return "an array"
	}
	return fmt.Sprintf("a value of an unknown TOML type (%T)", v)
}
