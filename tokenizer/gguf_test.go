package tokenizer

import (
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
)

// ggufSampleFiles are every GGUF in testdata with a vocabulary.
var ggufSampleFiles = []struct {
	path      string
	n         int
	bos, eos  int32
	unk       int32
	hasPre    bool
	addBOSKey bool
}{
	{llamaSPMGGUF, 32000, 1, 2, 0, true, true},
	{llama2TinyGGUF, 32000, 1, 2, 0, false, false},
	{goldenI2SGGUF, 512, 1, 2, NoToken, true, true},
	{"../testdata/golden/tiny-bitnet/gguf/ggml-model-f32.gguf", 512, 1, 2, NoToken, true, true},
	{"../testdata/golden/tiny-bitnet/gguf/ggml-model-i2_s-q8embd.gguf", 512, 1, 2, NoToken, true, true},
	{"../testdata/golden/tiny-bitnet/gguf/ggml-model-tl1.gguf", 512, 1, 2, NoToken, true, true},
	{"../testdata/golden/tiny-bitnet/gguf/ggml-model-tl2.gguf", 512, 1, 2, NoToken, true, true},
	{"../testdata/golden/b158-h512/gguf/tiny-b158-h512-f32.gguf", 512, 1, 2, NoToken, false, true},
}

// loadGGUFVocab reads the vocabulary of a GGUF file with gguf/reader.
func loadGGUFVocab(t testing.TB, path string) (*Vocab, []gguf.KV) {
	t.Helper()
	f, err := reader.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	v, err := FromGGUF(f.KVs)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return v, f.KVs
}

// TestFromGGUFFiles: every GGUF in testdata loads, and writing the Vocab
// back (Vocab.KVs) gives the file's tokenizer KVs again.
func TestFromGGUFFiles(t *testing.T) {
	for _, c := range ggufSampleFiles {
		t.Run(filepath.Base(c.path), func(t *testing.T) {
			v, kvs := loadGGUFVocab(t, c.path)
			if v.Model != "llama" || len(v.Tokens) != c.n || len(v.Scores) != c.n || len(v.Types) != c.n {
				t.Fatalf("model %q, %d tokens %d scores %d types", v.Model, len(v.Tokens), len(v.Scores), len(v.Types))
			}
			if v.BOS != c.bos || v.EOS != c.eos || v.UNK != c.unk || v.PAD != NoToken {
				t.Errorf("bos %d eos %d unk %d pad %d", v.BOS, v.EOS, v.UNK, v.PAD)
			}
			if (v.AddBOS != nil) != c.addBOSKey || (v.AddBOS != nil && !*v.AddBOS) {
				t.Errorf("add_bos = %v", v.AddBOS)
			}
			want := map[string]gguf.Value{}
			for _, kv := range kvs {
				if strings.HasPrefix(kv.Key, "tokenizer.") {
					want[kv.Key] = kv.Value
				}
			}
			if !c.hasPre {
				if v.Pre != "default" {
					t.Errorf("missing pre read as %q, want default", v.Pre)
				}
				want["tokenizer.ggml.pre"] = gguf.String("default")
			}
			compareTokenizerKVs(t, v.KVs(), want)
		})
	}
}

// TestSPMVectorsFromGGUF runs every llama-spm vector with the vocabulary of
// llama.cpp's ggml-vocab-llama-spm.gguf, through tokenizer.New.
func TestSPMVectorsFromGGUF(t *testing.T) {
	v, _ := loadGGUFVocab(t, llamaSPMGGUF)
	tk, err := New(v)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := tk.(*SPM); !ok {
		t.Fatalf("New gave %T for model llama", tk)
	}
	spmCheckVectors(t, tk)
}

// TestSPMGoldenPromptFromGGUF: the golden prompt through the vocabulary
// stored in the golden I2_S file gives the reference runtime's ids.
func TestSPMGoldenPromptFromGGUF(t *testing.T) {
	v, _ := loadGGUFVocab(t, goldenI2SGGUF)
	tk, err := New(v)
	if err != nil {
		t.Fatal(err)
	}
	got, err := tk.Encode("Hello world, this is a tiny BitNet test.", true, false)
	if err != nil {
		t.Fatal(err)
	}
	want := []int32{1, 413, 480, 414, 271, 417, 313, 269, 421, 427, 457, 360, 314, 411, 280, 262, 261, 437, 413, 461, 268, 469, 316, 262, 414, 284, 432}
	if !slices.Equal(got, want) {
		t.Fatalf("got  %v\nwant %v", got, want)
	}
}

// ggufTestKVs is a small valid tokenizer KV set.
func ggufTestKVs() []gguf.KV {
	return []gguf.KV{
		{Key: "general.architecture", Value: gguf.String("llama")},
		{Key: "tokenizer.ggml.model", Value: gguf.String("llama")},
		{Key: "tokenizer.ggml.pre", Value: gguf.String("default")},
		{Key: "tokenizer.ggml.tokens", Value: gguf.Strings([]string{"<unk>", "<s>", "</s>", "▁a"})},
		{Key: "tokenizer.ggml.scores", Value: gguf.Float32s([]float32{0, 0, 0, -1})},
		{Key: "tokenizer.ggml.token_type", Value: gguf.Int32s([]int32{2, 3, 3, 1})},
		{Key: "tokenizer.ggml.bos_token_id", Value: gguf.Uint32(1)},
		{Key: "tokenizer.ggml.add_bos_token", Value: gguf.Bool(true)},
	}
}

// withKV returns kvs with key replaced by (or, if absent, set to) val; a
// zero Value deletes the key.
func withKV(kvs []gguf.KV, key string, val gguf.Value) []gguf.KV {
	out := make([]gguf.KV, 0, len(kvs)+1)
	found := false
	for _, kv := range kvs {
		if kv.Key == key {
			found = true
			if val.V == nil {
				continue
			}
			kv.Value = val
		}
		out = append(out, kv)
	}
	if !found && val.V != nil {
		out = append(out, gguf.KV{Key: key, Value: val})
	}
	return out
}

// TestFromGGUFIntegerWidths: token_type and special ids written with other
// integer widths by other tools (BR-27) read the same as i32/u32.
func TestFromGGUFIntegerWidths(t *testing.T) {
	want := []int32{2, 3, 3, 1}
	for _, val := range []gguf.Value{
		{Type: gguf.ValueArray, Elem: gguf.ValueUint32, V: []uint32{2, 3, 3, 1}},
		{Type: gguf.ValueArray, Elem: gguf.ValueInt8, V: []int8{2, 3, 3, 1}},
		{Type: gguf.ValueArray, Elem: gguf.ValueUint8, V: []uint8{2, 3, 3, 1}},
		{Type: gguf.ValueArray, Elem: gguf.ValueInt16, V: []int16{2, 3, 3, 1}},
		{Type: gguf.ValueArray, Elem: gguf.ValueUint16, V: []uint16{2, 3, 3, 1}},
		{Type: gguf.ValueArray, Elem: gguf.ValueInt64, V: []int64{2, 3, 3, 1}},
		{Type: gguf.ValueArray, Elem: gguf.ValueUint64, V: []uint64{2, 3, 3, 1}},
	} {
		t.Run(val.Elem.String(), func(t *testing.T) {
			kvs := withKV(ggufTestKVs(), "tokenizer.ggml.token_type", val)
			kvs = withKV(kvs, "tokenizer.ggml.bos_token_id", gguf.Int64(1))
			kvs = withKV(kvs, "tokenizer.ggml.eos_token_id", gguf.Uint8(2))
			v, err := FromGGUF(kvs)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(v.Types, want) || v.BOS != 1 || v.EOS != 2 {
				t.Errorf("types %v bos %d eos %d", v.Types, v.BOS, v.EOS)
			}
		})
	}
	// float64 scores and absent types/scores.
	kvs := withKV(ggufTestKVs(), "tokenizer.ggml.scores", gguf.Value{Type: gguf.ValueArray, Elem: gguf.ValueFloat64, V: []float64{0, 0, 0, -1.5}})
	kvs = withKV(kvs, "tokenizer.ggml.token_type", gguf.Value{})
	v, err := FromGGUF(kvs)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(v.Scores, []float32{0, 0, 0, -1.5}) || !reflect.DeepEqual(v.Types, []int32{1, 1, 1, 1}) {
		t.Errorf("scores %v types %v", v.Scores, v.Types)
	}
}

// TestFromGGUFErrors: bad metadata is an error wrapping ErrGGUFVocab that
// names the key.
func TestFromGGUFErrors(t *testing.T) {
	for _, c := range []struct {
		key string
		val gguf.Value // zero: delete the key
	}{
		{"tokenizer.ggml.model", gguf.Value{}},
		{"tokenizer.ggml.model", gguf.Uint32(1)},
		{"tokenizer.ggml.pre", gguf.Strings([]string{"x"})},
		{"tokenizer.ggml.tokens", gguf.Value{}},
		{"tokenizer.ggml.tokens", gguf.Uint8s([]uint8{1, 2, 3, 4})},
		{"tokenizer.ggml.tokens", gguf.Strings([]string{})},
		{"tokenizer.ggml.scores", gguf.Float32s([]float32{0, 0})},
		{"tokenizer.ggml.scores", gguf.Int32s([]int32{0, 0, 0, 0})},
		{"tokenizer.ggml.token_type", gguf.Int32s([]int32{1, 1, 1})},
		{"tokenizer.ggml.token_type", gguf.Strings([]string{"a", "b", "c", "d"})},
		{"tokenizer.ggml.token_type", gguf.Value{Type: gguf.ValueArray, Elem: gguf.ValueInt64, V: []int64{1, 1, 1, 1 << 40}}},
		{"tokenizer.ggml.token_type", gguf.Value{Type: gguf.ValueArray, Elem: gguf.ValueUint64, V: []uint64{1, 1, 1, 1 << 63}}},
		{"tokenizer.ggml.merges", gguf.Int32s([]int32{1})},
		{"tokenizer.ggml.bos_token_id", gguf.Uint32(4)},
		{"tokenizer.ggml.eos_token_id", gguf.Int32(-1)},
		{"tokenizer.ggml.unknown_token_id", gguf.Float32(0)},
		{"tokenizer.ggml.padding_token_id", gguf.Bool(true)},
		{"tokenizer.ggml.add_bos_token", gguf.Uint8(1)},
		{"tokenizer.ggml.add_space_prefix", gguf.String("false")},
		{"tokenizer.chat_template", gguf.Uint32(0)},
	} {
		t.Run(fmt.Sprintf("%s=%v", c.key, c.val), func(t *testing.T) {
			_, err := FromGGUF(withKV(ggufTestKVs(), c.key, c.val))
			if !errors.Is(err, ErrGGUFVocab) || !strings.Contains(err.Error(), c.key) {
				t.Fatalf("err = %v, want ErrGGUFVocab naming %s", err, c.key)
			}
		})
	}
}

// TestFromGGUFRoundTrip: Vocab → KVs → FromGGUF is the identity, for every
// special id and flag.
func TestFromGGUFRoundTrip(t *testing.T) {
	v := NewVocab("gpt2", "llama-bpe")
	v.Tokens = []string{"a", "b", "ab", "<|eot|>", "", "héllo", "日本", " x"}
	v.Types = []int32{1, 1, 1, 3, 4, 1, 1, 1}
	v.Merges = []string{"a b"}
	v.BOS, v.EOS, v.UNK, v.SEP, v.PAD, v.CLS, v.MASK, v.EOT = 0, 1, 2, 3, 4, 5, 6, 3
	f, tr := false, true
	v.AddBOS, v.AddEOS, v.AddSpacePrefix = &tr, &f, &f
	v.ChatTemplate = "{{ messages }}"
	got, err := FromGGUF(v.KVs())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, v) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, v)
	}
}
