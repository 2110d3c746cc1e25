// Package embed is the `bitnet-convert embed` command: the sentence
// embedding of a text (or token ids) from a BitNet embedding GGUF (arch qwen3
// or gemma3) with the pure-Go runtime, pooled and L2-normalised.
package embed

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/flagx"
	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/idlist"
	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/modelfile"
	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/usage"
	"github.com/bitnet-convert/bitnet-convert/runtime"
	"github.com/bitnet-convert/bitnet-convert/tokenizer"
)

// EmbedOptions are the parsed flags of embed.
type EmbedOptions struct {
	Model     string  // -m: GGUF file
	Prompt    string  // -p: text, tokenized with the GGUF vocabulary (BOS/EOS as its add_* flags say)
	HasPrompt bool    // -p was given
	IDs       []int32 // --ids: token ids, used as given
	JSON      bool    // --json: print a JSON object instead of one line of numbers
	// Pooling is "mean", "cls" or "last"; "" uses the file's
	// {arch}.pooling_type.
	Pooling string
	Threads int  // --threads
	NoMmap  bool // --no-mmap: read the model into memory instead of mapping it

	Out io.Writer
}

// NewCmdEmbed returns the embed command. It only parses flags; runF replaces
// embedRun in tests (nil: embedRun).
func NewCmdEmbed(runF func(*EmbedOptions) error) *cobra.Command {
	opts := &EmbedOptions{}
	var ids string
	cmd := &cobra.Command{
		Use:   "embed -m FILE (-p TEXT | --ids 1,2,3) [--json] [--pooling mean|cls|last] [--no-mmap]",
		Short: "Print the sentence embedding of a text from a BitNet embedding GGUF (qwen3, gemma3)",
		Long: `embed runs the text through the pure-Go runtime (every position, causal attention as the
models were trained), pools the final hidden states (the file's pooling_type unless --pooling is given)
and L2-normalises the result. Without --json it prints the vector on one line, values separated by
spaces; with --json an object {model, arch, pooling, tokens, dim, embedding}.`,
		Args: func(cmd *cobra.Command, args []string) error {
			return modelfile.PositionalModel("embed", args, "give the model with -m FILE and the text with -p TEXT or --ids")
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Out = cmd.OutOrStdout()
			var err error
			if opts.IDs, opts.HasPrompt, err = idlist.PromptOrIDs(cmd.Flags(), opts.Model, ids); err != nil {
				return err
			}
			if opts.Pooling != "" {
				if _, err := runtime.ParsePoolMode(opts.Pooling); err != nil {
					return usage.Errorf("--pooling: %v", err)
				}
			}
			if err := flagx.CheckThreads(opts.Threads); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return embedRun(opts)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.Model, "model", "m", "", "GGUF embedding model (arch qwen3 or gemma3; required)")
	f.StringVarP(&opts.Prompt, "prompt", "p", "", "text to embed (tokenized with the GGUF vocabulary)")
	f.StringVar(&ids, "ids", "", "token ids to embed, comma-separated (e.g. 2,651,9456)")
	f.BoolVar(&opts.JSON, "json", false, "print a JSON object")
	f.StringVar(&opts.Pooling, "pooling", "", "mean, cls or last (default: the file's pooling_type)")
	f.BoolVar(&opts.NoMmap, "no-mmap", false, flagx.NoMmapUsage)
	_ = cmd.RegisterFlagCompletionFunc("pooling", cobra.FixedCompletions([]string{"mean", "cls", "last"}, cobra.ShellCompDirectiveNoFileComp))
	flagx.ThreadsVar(f, &opts.Threads)
	return cmd
}

// Result is the --json output of embed.
type Result struct {
	Model     string    `json:"model"`
	Arch      string    `json:"arch"`
	Pooling   string    `json:"pooling"`
	Tokens    []int32   `json:"tokens"`
	Dim       int       `json:"dim"`
	Embedding []float32 `json:"embedding"`
}

var poolNames = map[runtime.PoolMode]string{runtime.PoolMean: "mean", runtime.PoolCLS: "cls", runtime.PoolLast: "last"}

// embedRun loads the model, tokenizes the prompt and prints the embedding.
func embedRun(opts *EmbedOptions) error {
	m, f, _, err := modelfile.Open(modelfile.Options{Cmd: "embed", Model: opts.Model, Threads: opts.Threads, NoMmap: opts.NoMmap}, runtime.OpenEmbedding)
	if err != nil {
		return err
	}
	defer f.Close()
	ids := opts.IDs
	if opts.HasPrompt {
		v, err := tokenizer.FromGGUF(f.KVs)
		if err != nil {
			return fmt.Errorf("model %s: no usable tokenizer in the GGUF metadata (%v); use --ids", opts.Model, err)
		}
		tok, err := tokenizer.New(v)
		if err != nil {
			return fmt.Errorf("model %s: %w; use --ids", opts.Model, err)
		}
		if ids, err = tok.Encode(opts.Prompt, true, false); err != nil {
			return fmt.Errorf("tokenize the prompt: %w", err)
		}
	}
	if len(ids) == 0 {
		return usage.Errorf("the prompt has no tokens; give a non-empty -p or --ids")
	}
	for _, id := range ids {
		if int(id) >= m.Params.NVocab {
			return usage.Errorf("token id %d is outside the vocabulary of %s (%d tokens)", id, opts.Model, m.Params.NVocab)
		}
	}
	mode := m.Params.Pooling
	if opts.Pooling != "" {
		mode, _ = runtime.ParsePoolMode(opts.Pooling)
	}
	if len(ids) > m.Params.NCtx {
		// A usage error, as in run, perplexity, bench and verify (H22).
		return usage.Errorf("%d tokens exceed the context length %d of %s; shorten the prompt", len(ids), m.Params.NCtx, opts.Model)
	}
	vec, err := m.Embed(ids, mode)
	if err != nil {
		return fmt.Errorf("model %s: %w", opts.Model, err)
	}
	if opts.JSON {
		enc := json.NewEncoder(opts.Out)
		return enc.Encode(Result{Model: opts.Model, Arch: m.Arch, Pooling: poolNames[mode], Tokens: ids, Dim: len(vec), Embedding: vec})
	}
	var sb strings.Builder
	for i, v := range vec {
		if i > 0 {
			sb.WriteByte(' ')
		}
		sb.WriteString(strconv.FormatFloat(float64(v), 'g', -1, 32))
	}
	sb.WriteByte('\n')
	_, err = io.WriteString(opts.Out, sb.String())
	return err
}
