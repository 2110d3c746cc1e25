package tokenize

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/usage"
	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
	"github.com/bitnet-convert/bitnet-convert/internal/fsutil"
	"github.com/bitnet-convert/bitnet-convert/tokenizer"
)

// TokenizeOptions are the parsed flags of tokenize.
type TokenizeOptions struct {
	// Model is the GGUF file whose tokenizer.* metadata is used (-m).
	Model string
	// Prompt is the text to tokenize (-p); HasPrompt says -p was given, so
	// an empty prompt is allowed.
	Prompt    string
	HasPrompt bool
	// File is a file whose whole content is the text (-f); "-" (or --stdin)
	// reads stdin, and a pipe is read as a stream (at most
	// fsutil.MaxTextBytes).
	File string
	// Stdin is read for -f - / --stdin.
	Stdin io.Reader
	// NoBOS turns off the special tokens the vocabulary adds (BOS, and EOS
	// where add_eos is set), like llama-tokenize --no-bos.
	NoBOS bool
	// ParseSpecial makes control-token text such as "<s>" map to its id.
	ParseSpecial bool
	// JSON prints {"ids":[…],"pieces":[…]} instead of one line per token.
	JSON bool
	// IDs prints only the ids, as one Python-style list "[1, 2, 3]"
	// (llama-tokenize --ids).
	IDs bool
	// ShowCount adds the line "Total number of tokens: N" after the
	// tokens (llama-tokenize --show-count).
	ShowCount bool
	// Out receives the result (the command's stdout).
	Out io.Writer
}

// NewCmdTokenize returns the tokenize command. It only parses flags; runF
// replaces the real run in tests (nil: tokenizeRun). Exactly one of -p and
// -f is required (usage error otherwise).
func NewCmdTokenize(runF func(*TokenizeOptions) error) *cobra.Command {
	opts := &TokenizeOptions{}
	var stdin bool
	cmd := &cobra.Command{
		Use:   "tokenize -m FILE (-p TEXT | -f FILE | --stdin) [--no-bos] [--parse-special] [--ids] [--show-count] [--json]",
		Short: "Tokenize text with the vocabulary of a GGUF file, as llama-tokenize does",
		Long: `Load the tokenizer.* metadata of a GGUF file and tokenize the prompt (-p) or a file's content (-f)
with llama.cpp's algorithm for that vocabulary ("llama" SentencePiece or "gpt2" byte-level BPE).
Prints one line per token, "    id -> 'piece'" (pieces rendered with control tokens shown, as
llama-tokenize prints them), with --ids only the list of ids "[1, 2, 3]", with --show-count a last
line "Total number of tokens: N", or with --json one object {"ids":[…],"pieces":[…]}. BOS (and EOS
where the vocabulary says add_eos) are added unless --no-bos; --parse-special maps the text of
control tokens such as <s> to their ids. -f - or --stdin (as llama-tokenize --stdin) reads the text
from stdin; -f also reads a pipe such as <(zcat x.gz); at most 512 MiB of text.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 0 {
				return usage.Errorf("tokenize takes no arguments (got %q); give the text with -p TEXT or -f FILE", args)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.HasPrompt = cmd.Flags().Changed("prompt")
			if stdin {
				if opts.File != "" && opts.File != "-" {
					return usage.Errorf("--stdin and -f %s exclude each other", opts.File)
				}
				opts.File = "-"
			}
			if opts.Model == "" {
				return usage.Errorf("tokenize needs -m FILE, the GGUF file whose vocabulary to use")
			}
			if opts.JSON && (opts.IDs || opts.ShowCount) {
				return usage.Errorf("--json excludes --ids and --show-count (its ids array is both)")
			}
			if opts.HasPrompt == (opts.File != "") {
				return usage.Errorf("tokenize needs exactly one of -p TEXT, -f FILE and --stdin")
			}
			opts.Out = cmd.OutOrStdout()
			opts.Stdin = cmd.InOrStdin()
			if runF != nil {
				return runF(opts)
			}
			return tokenizeRun(opts)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.Model, "model", "m", "", "GGUF file with tokenizer.* metadata")
	f.StringVarP(&opts.Prompt, "prompt", "p", "", "text to tokenize")
	f.StringVarP(&opts.File, "file", "f", "", `file whose content is the text to tokenize ("-" for stdin)`)
	f.BoolVar(&stdin, "stdin", false, "read the text from stdin (same as -f -)")
	f.BoolVar(&opts.NoBOS, "no-bos", false, "do not add BOS (nor EOS) even if the vocabulary asks for it")
	f.BoolVar(&opts.ParseSpecial, "parse-special", false, "map the text of control tokens (e.g. <s>) to their ids")
	f.BoolVar(&opts.JSON, "json", false, `print {"ids":[…],"pieces":[…]} instead of one line per token`)
	f.BoolVar(&opts.IDs, "ids", false, "print only the ids, as one list [1, 2, 3] (as llama-tokenize --ids)")
	f.BoolVar(&opts.ShowCount, "show-count", false, `end with "Total number of tokens: N" (as llama-tokenize --show-count)`)
	return cmd
}

// piecer is implemented by tokenizers that render a single token as
// llama_token_to_piece does (tokenizer.SPM).
type piecer interface {
	Piece(id int32, special bool) (string, error)
}

// result is the --json output.
type result struct {
	IDs    []int32  `json:"ids"`
	Pieces []string `json:"pieces"`
}

// tokenizeRun loads the vocabulary of opts.Model, tokenizes the text and
// prints it to opts.Out. Errors name the file they concern.
func tokenizeRun(opts *TokenizeOptions) error {
	text := opts.Prompt
	if opts.File != "" {
		b, err := fsutil.ReadText(opts.File, opts.Stdin, fsutil.MaxTextBytes)
		if err != nil {
			return fmt.Errorf("tokenize: -f/--file: read the text: %w", err)
		}
		text = string(b)
	}
	if err := fsutil.CheckRegular(opts.Model); err != nil {
		return fmt.Errorf("tokenize: -m/--model: %w", err)
	}
	f, err := reader.Open(opts.Model)
	if err != nil {
		return fmt.Errorf("tokenize: %w", err)
	}
	v, err := tokenizer.FromGGUF(f.KVs)
	f.Close()
	if err != nil {
		return fmt.Errorf("tokenize %s: %w", opts.Model, err)
	}
	tok, err := tokenizer.New(v)
	if err != nil {
		return fmt.Errorf("tokenize %s: %w", opts.Model, err)
	}
	ids, err := tok.Encode(text, !opts.NoBOS, opts.ParseSpecial)
	if err != nil {
		return fmt.Errorf("tokenize %s: %w", opts.Model, err)
	}
	if opts.JSON {
		res := result{IDs: ids, Pieces: make([]string, len(ids))}
		if res.IDs == nil {
			res.IDs = []int32{}
		}
		for i, id := range ids {
			if res.Pieces[i], err = piece(tok, id); err != nil {
				return fmt.Errorf("tokenize %s: %w", opts.Model, err)
			}
		}
		enc := json.NewEncoder(opts.Out)
		enc.SetEscapeHTML(false) // pieces such as "<s>" print as they are
		return enc.Encode(res)
	}
	// Text mode renders each piece as it is written, through one buffer: a
	// large file's ids never hold all their pieces in memory.
	w := bufio.NewWriterSize(opts.Out, 1<<16)
	if opts.IDs {
		w.WriteByte('[')
		for i, id := range ids {
			if i > 0 {
				w.WriteString(", ")
			}
			w.WriteString(strconv.Itoa(int(id)))
		}
		w.WriteString("]\n")
	} else if err := writePieces(w, tok, ids); err != nil {
		return fmt.Errorf("tokenize %s: %w", opts.Model, err)
	}
	if opts.ShowCount {
		fmt.Fprintf(w, "Total number of tokens: %d\n", len(ids))
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("tokenize: write output: %w", err)
	}
	return nil
}

// writePieces writes one line "    id -> 'piece'" per id, as
// llama-tokenize prints them.
func writePieces(w io.Writer, tok tokenizer.Tokenizer, ids []int32) error {
	for _, id := range ids {
		p, err := piece(tok, id)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(w, "%6d -> '%s'\n", id, p); err != nil {
			return fmt.Errorf("write output: %w", err)
		}
	}
	return nil
}

// piece renders token id as llama-tokenize shows it (special tokens as their
// text). Tokenizers without a Piece method get their control, user-defined
// and unknown tokens shown as the token text and the rest decoded alone.
func piece(tok tokenizer.Tokenizer, id int32) (string, error) {
	if p, ok := tok.(piecer); ok {
		return p.Piece(id, true)
	}
	v := tok.Vocab()
	if id >= 0 && int(id) < len(v.Tokens) && v.Types != nil {
		switch v.Types[id] {
		case tokenizer.TypeControl, tokenizer.TypeUserDefined, tokenizer.TypeUnknown:
			return v.Tokens[id], nil
		}
	}
	return tok.Decode([]int32{id})
}
