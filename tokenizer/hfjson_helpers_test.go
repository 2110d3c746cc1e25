package tokenizer

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
)

// tokenizersDir holds the real tokenizers (see testdata/tokenizers/README.md).
const tokenizersDir = "../testdata/tokenizers"

// modelFS returns testdata/tokenizers/<name> as an fs.FS with the .gz files
// decompressed (tokenizer.json.gz → tokenizer.json), plus extra files.
func modelFS(t testing.TB, name string, extra map[string]string) fstest.MapFS {
	t.Helper()
	dir := filepath.Join(tokenizersDir, name)
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	fsys := fstest.MapFS{}
	for _, e := range ents {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		fname := e.Name()
		if strings.HasSuffix(fname, ".gz") {
			zr, err := gzip.NewReader(bytes.NewReader(data))
			if err != nil {
				t.Fatalf("%s: %v", fname, err)
			}
			if data, err = io.ReadAll(zr); err != nil {
				t.Fatalf("%s: %v", fname, err)
			}
			fname = strings.TrimSuffix(fname, ".gz")
		}
		fsys[fname] = &fstest.MapFile{Data: data}
	}
	for k, v := range extra {
		fsys[k] = &fstest.MapFile{Data: []byte(v)}
	}
	return fsys
}

// loaded caches the vocabularies of the real tokenizers: building Gemma3's
// takes a second.
type loadedVocab struct {
	once     sync.Once
	v        *Vocab
	warnings []string
	err      error
}

var (
	loadedMu sync.Mutex
	loaded   = map[string]*loadedVocab{}
)

// realVocabSizes are the models' config vocab_size values.
var realVocabSizes = map[string]int{"llama3": 128256, "qwen3": 151936, "gemma3": 262144, "llama2": 32000}

// realVocab loads testdata/tokenizers/<name> with its model's vocab_size.
func realVocab(t testing.TB, name string) (*Vocab, []string) {
	t.Helper()
	loadedMu.Lock()
	l, ok := loaded[name]
	if !ok {
		l = &loadedVocab{}
		loaded[name] = l
	}
	loadedMu.Unlock()
	l.once.Do(func() {
		l.v, l.warnings, l.err = LoadTokenizerJSONFS(modelFS(t, name, nil), JSONOptions{VocabSize: realVocabSizes[name]})
	})
	if l.err != nil {
		t.Fatalf("%s: %v", name, l.err)
	}
	return l.v, l.warnings
}

// vectorCase is one input of a ggml vocab test file and its expected ids.
type vectorCase struct {
	in  string
	ids []int32
}

// readVectors reads vectors/<name>.inp and .out: inputs are separated by
// lines "__ggml_vocab_test__" (the newline before the separator ends the
// input and is not part of it); .out has one line of ids per input.
func readVectors(t testing.TB, name string) []vectorCase {
	t.Helper()
	inp, err := os.ReadFile(filepath.Join(tokenizersDir, "vectors", name+".inp"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.ReadFile(filepath.Join(tokenizersDir, "vectors", name+".out"))
	if err != nil {
		t.Fatal(err)
	}
	const sep = "\n__ggml_vocab_test__\n"
	s := string(inp)
	if !strings.HasSuffix(s, sep) {
		t.Fatalf("%s.inp does not end with the separator", name)
	}
	ins := strings.Split(strings.TrimSuffix(s, sep), sep)
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(ins) != len(lines) {
		t.Fatalf("%s: %d inputs but %d output lines", name, len(ins), len(lines))
	}
	cases := make([]vectorCase, len(ins))
	for i := range ins {
		cases[i].in = ins[i]
		for _, f := range strings.Fields(lines[i]) {
			n, err := strconv.Atoi(f)
			if err != nil {
				t.Fatalf("%s.out line %d: %v", name, i+1, err)
			}
			cases[i].ids = append(cases[i].ids, int32(n))
		}
	}
	return cases
}
