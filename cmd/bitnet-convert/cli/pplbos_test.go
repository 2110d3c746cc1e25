package cli

import (
	"compress/gzip"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
	"github.com/bitnet-convert/bitnet-convert/internal/testutil"
	"github.com/bitnet-convert/bitnet-convert/tokenizer"
)

// bpe512KVs returns the tokenizer metadata of a 512-token llama-bpe
// vocabulary cut from the Llama 3 tokenizer of testdata/tokenizers/llama3:
// its ids 0…509 (the 256 byte tokens and the first 254 merged ones), its
// merges in rank order whose two parts and result are among them, then
// <|end_of_text|> (510, EOS) and <|begin_of_text|> (511, BOS), both control.
// No tokenizer.ggml.add_bos_token: llama.cpp's default for the llama-bpe
// pre type (add BOS) applies.
func bpe512KVs(t *testing.T) []gguf.KV {
	t.Helper()
	f, err := os.Open(filepath.Join(testdata, "tokenizers/llama3/tokenizer.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var tj struct {
		Model struct {
			Vocab  map[string]int `json:"vocab"`
			Merges []string       `json:"merges"`
		} `json:"model"`
	}
	if err := json.NewDecoder(zr).Decode(&tj); err != nil {
		t.Fatal(err)
	}
	const n = 510
	tokens := make([]string, n, n+2)
	for s, id := range tj.Model.Vocab {
		if id < n {
			tokens[id] = s
		}
	}
	in := func(s string) bool { id, ok := tj.Model.Vocab[s]; return ok && id < n }
	var merges []string
	for _, m := range tj.Model.Merges {
		a, b, ok := strings.Cut(m, " ")
		if ok && in(a) && in(b) && in(a+b) {
			merges = append(merges, m)
		}
	}
	tokens = append(tokens, "<|end_of_text|>", "<|begin_of_text|>")
	types := make([]int32, len(tokens))
	for i := range types {
		types[i] = tokenizer.TypeNormal
	}
	types[n], types[n+1] = tokenizer.TypeControl, tokenizer.TypeControl
	return []gguf.KV{
		{Key: "tokenizer.ggml.model", Value: gguf.String("gpt2")},
		{Key: "tokenizer.ggml.pre", Value: gguf.String("llama-bpe")},
		{Key: "tokenizer.ggml.tokens", Value: gguf.Strings(tokens)},
		{Key: "tokenizer.ggml.token_type", Value: gguf.Int32s(types)},
		{Key: "tokenizer.ggml.merges", Value: gguf.Strings(merges)},
		{Key: "tokenizer.ggml.bos_token_id", Value: gguf.Uint32(n + 1)},
		{Key: "tokenizer.ggml.eos_token_id", Value: gguf.Uint32(n)},
	}
}

// bpeB158 writes dir/b158-h512-bpe-i2_s.gguf: hf2gguf (I2_S) of
// testdata/golden/b158-h512/hf with its tokenizer metadata replaced by
// bpe512KVs, the file of testdata/golden/ppl-bpe-bos.
func bpeB158(t *testing.T, dir string) string {
	t.Helper()
	spm := filepath.Join(dir, "b158-h512-spm-i2_s.gguf")
	mainOK(t, "hf2gguf", filepath.Join(testdata, "golden/b158-h512/hf"), "--outtype", "i2_s", "--outfile", spm)
	bpe := bpe512KVs(t)
	return testutil.WithKVs(t, spm, filepath.Join(dir, "b158-h512-bpe-i2_s.gguf"), func(kvs []gguf.KV) []gguf.KV {
		return append(testutil.Drop(kvs, "tokenizer.ggml."), bpe...)
	})
}

// pplBOSGolden is the folder of build B's llama-perplexity output on the
// file bpeB158 writes.
const pplBOSGolden = "golden/ppl-bpe-bos"

// tensorDataSHA256 is the sha256 (hex) of the data of every tensor of the
// GGUF at path, in file order: what the converter computed, whatever KVs a
// later version adds.
func tensorDataSHA256(t *testing.T, path string) string {
	t.Helper()
	f, err := reader.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	for _, ti := range f.Tensors {
		d, err := f.TensorData(ti.Name)
		if err != nil {
			t.Fatal(err)
		}
		h.Write(d)
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// pplFigures returns the running-estimate line ("[1]…,[2]…,") and the
// final-estimate line of a perplexity output (ours or llama-perplexity's).
func pplFigures(t *testing.T, out string) (chunks, final string) {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "[1]") {
			chunks = l
		}
		if _, f, ok := strings.Cut(l, "Final estimate: "); ok {
			// llama-perplexity ends its progress line with it.
			final = "Final estimate: " + f
		}
	}
	if chunks == "" || final == "" {
		t.Fatalf("no running estimates or no final estimate in:\n%s", out)
	}
	return chunks, final
}

// TestPerplexityBPEBOSBuildB (issue 24 d, H37): perplexity on a llama-bpe
// vocabulary without add_bos_token puts BOS first in every chunk as
// llama-perplexity does: its figures equal, digit for digit, those of
// bitnet.cpp build B's llama-perplexity at -b 1 -ub 1 -t 1 on the same file
// and text (testdata/golden/ppl-bpe-bos/README.md; the file is rebuilt here
// and the sha256 of its tensor data checked against that of the file build
// B read). So does the same file with add_bos_token false (no BOS, which is
// what perplexity did before the fix on the file without the key), whose
// figures differ.
func TestPerplexityBPEBOSBuildB(t *testing.T) {
	dir := t.TempDir()
	model := bpeB158(t, dir)
	noBOS := testutil.WithKVs(t, model, filepath.Join(dir, "b158-h512-bpe-nobos-i2_s.gguf"),
		testutil.SetKV("tokenizer.ggml.add_bos_token", gguf.Bool(false)))
	if keep := os.Getenv("BITNET_PPL_BOS_KEEP"); keep != "" {
		// The inputs of the README's llama-perplexity runs.
		for _, p := range []string{model, noBOS} {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(keep, filepath.Base(p)), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	readme, err := os.ReadFile(filepath.Join(testdata, pplBOSGolden, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if sum := tensorDataSHA256(t, model); !strings.Contains(string(readme), sum) {
		t.Fatalf("the rebuilt file's tensor data (sha256 %s) is not the one in %s/README.md: the converter's output changed; "+
			"run build B's llama-perplexity on the new file (README) and update the output and the sums", sum, pplBOSGolden)
	}
	text := filepath.Join(testdata, "golden/tiny-bitnet/outputs/ppl_text.txt")
	var chunks []string
	for _, c := range []struct{ model, ref string }{
		{model, "llama-perplexity.txt"},
		{noBOS, "llama-perplexity-nobos.txt"},
	} {
		ref, err := os.ReadFile(filepath.Join(testdata, pplBOSGolden, c.ref))
		if err != nil {
			t.Fatal(err)
		}
		wantChunks, wantFinal := pplFigures(t, string(ref))
		gotChunks, gotFinal := pplFigures(t, mainOK(t, "perplexity", "-m", c.model, "-f", text, "-c", "64", "--chunks", "4", "-b", "1", "-ub", "1", "-t", "1"))
		if gotChunks != wantChunks || gotFinal != wantFinal {
			t.Errorf("%s: perplexity:\n%s\n%s\nllama-perplexity (build B, %s):\n%s\n%s",
				filepath.Base(c.model), gotChunks, gotFinal, c.ref, wantChunks, wantFinal)
		}
		chunks = append(chunks, wantChunks)
	}
	if chunks[0] == chunks[1] {
		t.Errorf("with and without BOS build B's figures are the same (%s): the test cannot tell", chunks[0])
	}
}
