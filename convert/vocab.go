package convert

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/tokenizer"
)

// vocabSources are the tokenizer files tried in order: a SentencePiece model
// first (as bitnet.cpp's converter does), then an HF tokenizer.json.
var vocabSources = []struct {
	file string
	load func(dir string, vocabSize int, opts Options) (*tokenizer.Vocab, []string, error)
}{
	{"tokenizer.model", func(dir string, n int, opts Options) (*tokenizer.Vocab, []string, error) {
		v, warns, err := tokenizer.LoadSentencePiece(dir, n)
		if err == nil && opts.Pre != "" && opts.Pre != "default" {
			// As the tokenizer.json path says for SentencePiece-style
			// files (defect D14).
			warns = append(warns, fmt.Sprintf("--pre %q ignored: tokenizer.model is a SentencePiece model (tokenizer.ggml.model llama), whose pre is always \"default\"", opts.Pre))
		}
		return v, warns, err
	}},
	{"tokenizer.json", func(dir string, n int, opts Options) (*tokenizer.Vocab, []string, error) {
		return tokenizer.LoadTokenizerJSON(dir, tokenizer.JSONOptions{VocabSize: n, Pre: opts.Pre})
	}},
}

// ErrNoTokenizer is returned (wrapped) when the directory has none of the
// tokenizer files and --no-vocab was not given.
var ErrNoTokenizer = errors.New("no tokenizer found")

// loadVocab builds the tokenizer KVs from the first tokenizer file present.
// jsonFirst tries tokenizer.json before tokenizer.model (the embedding
// converter reads tokenizer.json, spec §5.3 P5).
func loadVocab(dir string, vocabSize int, opts Options, jsonFirst bool) ([]gguf.KV, []string, error) {
	var looked []string
	sources := vocabSources
	if jsonFirst {
		sources = []struct {
			file string
			load func(dir string, vocabSize int, opts Options) (*tokenizer.Vocab, []string, error)
		}{vocabSources[1], vocabSources[0]}
	}
	for _, src := range sources {
		path := filepath.Join(dir, src.file)
		looked = append(looked, src.file)
		if _, err := os.Stat(path); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return nil, nil, fmt.Errorf("tokenizer %s: %w", path, err)
		}
		v, warns, err := src.load(dir, vocabSize, opts)
		if err != nil {
			return nil, nil, err
		}
		if len(v.Tokens) != vocabSize {
			return nil, nil, fmt.Errorf("tokenizer %s: %d tokens but config.json vocab_size is %d", path, len(v.Tokens), vocabSize)
		}
		// A tokenizer that adds BOS/EOS but lost the token (its id is
		// ≥ vocab_size, or its name resolves to nothing) gives a GGUF no
		// runtime can tokenize with; llama.cpp's converter fails here too
		// (defect D12).
		for _, sp := range []struct {
			name string
			add  bool
			id   int32
		}{{"bos", v.AddsBOS(), v.BOS}, {"eos", v.AddEOS != nil && *v.AddEOS, v.EOS}} {
			// (SPM vocabularies fall back to llama.cpp's ids 1 and 2.)
			if sp.add && sp.id < 0 && v.Model == "gpt2" {
				return nil, nil, fmt.Errorf("tokenizer %s: the tokenizer adds %s but the vocabulary has no %s token (config.json vocab_size %d drops the tokenizer's ids ≥ %d, or %s_token names no token); fix vocab_size or the tokenizer", path, strings.ToUpper(sp.name), strings.ToUpper(sp.name), vocabSize, vocabSize, sp.name)
			}
		}
		return v.KVs(), warns, nil
	}
	return nil, nil, fmt.Errorf("%s: %w (looked for %v); pass --no-vocab to convert without one", dir, ErrNoTokenizer, looked)
}
