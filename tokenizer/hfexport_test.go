package tokenizer

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"testing/fstest"
)

func gunzip(t *testing.T, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func sameVocab(t *testing.T, a, b *Vocab) {
	t.Helper()
	if a.Model != b.Model || a.Pre != b.Pre {
		t.Fatalf("model/pre %s/%s back, want %s/%s", b.Model, b.Pre, a.Model, a.Pre)
	}
	if !slices.Equal(a.Tokens, b.Tokens) || !slices.Equal(a.Types, b.Types) || !slices.Equal(a.Scores, b.Scores) || !slices.Equal(a.Merges, b.Merges) {
		for i := range min(len(a.Tokens), len(b.Tokens)) {
			if a.Tokens[i] != b.Tokens[i] || a.Types[i] != b.Types[i] {
				t.Fatalf("token %d: %q type %d back, want %q type %d", i, b.Tokens[i], b.Types[i], a.Tokens[i], a.Types[i])
			}
		}
		t.Fatalf("vocabulary differs: %d/%d tokens, %d/%d merges", len(b.Tokens), len(a.Tokens), len(b.Merges), len(a.Merges))
	}
}

// TestHFTokenizerJSONRoundTrip: the tokenizer.json rebuilt from the Llama 3
// and Qwen3 vocabularies (byte-level BPE) loads back to the same tokens,
// types, merges and pre type (Qwen3 with BITNET_HEAVY=1: each load takes
// seconds on a busy machine).
func TestHFTokenizerJSONRoundTrip(t *testing.T) {
	for _, name := range []string{"llama3", "qwen3"} {
		t.Run(name, func(t *testing.T) {
			if name == "qwen3" && os.Getenv("BITNET_HEAVY") == "" {
				t.Skip("set BITNET_HEAVY=1")
			}
			src := gunzip(t, filepath.Join("..", "testdata", "tokenizers", name, "tokenizer.json.gz"))
			v, _, err := LoadTokenizerJSONFS(fstest.MapFS{"tokenizer.json": {Data: src}}, JSONOptions{})
			if err != nil {
				t.Fatal(err)
			}
			b, err := v.HFTokenizerJSON()
			if err != nil {
				t.Fatal(err)
			}
			back, _, err := LoadTokenizerJSONFS(fstest.MapFS{"tokenizer.json": {Data: b}}, JSONOptions{})
			if err != nil {
				t.Fatal(err)
			}
			sameVocab(t, v, back)
		})
	}
}

// TestSentencePieceModelRoundTrip: the tokenizer.model rebuilt from the
// Llama 2 vocabulary loads back to the same pieces, scores and types, and
// keeps byte fallback.
func TestSentencePieceModelRoundTrip(t *testing.T) {
	dir := filepath.Join("..", "testdata", "tokenizers", "llama2")
	v, _, err := LoadSentencePiece(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	b, err := v.SentencePieceModel()
	if err != nil {
		t.Fatal(err)
	}
	m, err := parseSentencePiece(b)
	if err != nil {
		t.Fatal(err)
	}
	if !m.ByteFallback || m.ModelType != spModelTypeBPE || !m.AddDummyPrefix {
		t.Errorf("byte_fallback %v, model_type %d, add_dummy_prefix %v; want true, BPE, true", m.ByteFallback, m.ModelType, m.AddDummyPrefix)
	}
	back, _, err := LoadSentencePieceFS(fstest.MapFS{"tokenizer.model": {Data: b}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	sameVocab(t, v, back)
	orig, _ := os.ReadFile(filepath.Join(dir, "tokenizer.model"))
	if bytes.Equal(orig, b) {
		t.Log("byte-identical to the original tokenizer.model")
	}
}
