package tokenizer

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bitnet-convert/bitnet-convert/internal/fsutil"
	"github.com/bitnet-convert/bitnet-convert/internal/osx"
)

// TestSideFileFIFO: a FIFO in place of any file the tokenizer loaders read is
// an error naming the file, returned at once (opening a FIFO with no writer
// would block forever).
func TestSideFileFIFO(t *testing.T) {
	spModel, err := os.ReadFile("../testdata/tokenizers/llama2/tokenizer.model")
	if err != nil {
		t.Fatal(err)
	}
	loadSP := func(dir string) error { _, _, err := LoadSentencePiece(dir, 0); return err }
	loadJSON := func(dir string) error { _, _, err := LoadTokenizerJSON(dir, JSONOptions{}); return err }
	special := func(dir string) error {
		v := NewVocab("llama", "default")
		v.Tokens = []string{"<s>", "</s>"}
		_, err := ApplySpecialVocab(v, dir)
		return err
	}
	tests := []struct {
		fifo string
		with map[string][]byte // real files written beside the FIFO
		load func(dir string) error
	}{
		{"tokenizer.model", nil, loadSP},
		{"added_tokens.json", map[string][]byte{"tokenizer.model": spModel}, loadSP},
		{"tokenizer.json", nil, loadJSON},
		{"tokenizer.json", nil, special},
		{"tokenizer_config.json", nil, special},
		{"special_tokens_map.json", map[string][]byte{"tokenizer_config.json": []byte("{}")}, special},
		{"config.json", nil, special},
	}
	for _, tc := range tests {
		t.Run(tc.fifo, func(t *testing.T) {
			dir := t.TempDir()
			for name, data := range tc.with {
				if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := osx.Mkfifo(filepath.Join(dir, tc.fifo)); err != nil {
				t.Skipf("mkfifo: %v", err)
			}
			done := make(chan error, 1)
			go func() { done <- tc.load(dir) }()
			select {
			case err := <-done:
				if !errors.Is(err, fsutil.ErrNotRegular) {
					t.Fatalf("error %v, want one wrapping fsutil.ErrNotRegular", err)
				}
				if !strings.Contains(err.Error(), tc.fifo) || strings.Contains(err.Error(), "\n") {
					t.Errorf("error %q: want one line naming %s", err, tc.fifo)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("loader blocked on FIFO %s", tc.fifo)
			}
		})
	}
}
