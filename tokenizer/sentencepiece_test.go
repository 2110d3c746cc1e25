package tokenizer

import (
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
)

const (
	goldenI2SGGUF  = "../testdata/golden/tiny-bitnet/gguf/ggml-model-i2_s.gguf"
	llama2TinyGGUF = "../testdata/gguf-samples/llama-2-tiny-random.gguf"
	llamaSPMGGUF   = "../testdata/gguf-samples/ggml-vocab-llama-spm.gguf"
)

// spTestPiece is a piece for spBuildModel.
type spTestPiece struct {
	piece string
	score float32
	typ   int32 // 0: leave the field out (proto default NORMAL)
}

// spBuildModel serialises a ModelProto with protowire: the pieces, a
// trainer_spec with model_type BPE, and a normalizer_spec whose
// add_dummy_prefix is written only when dummy is non-nil.
func spBuildModel(pieces []spTestPiece, dummy *bool) []byte {
	var b []byte
	for _, p := range pieces {
		var m []byte
		m = protowire.AppendTag(m, 1, protowire.BytesType)
		m = protowire.AppendString(m, p.piece)
		m = protowire.AppendTag(m, 2, protowire.Fixed32Type)
		m = protowire.AppendFixed32(m, math.Float32bits(p.score))
		if p.typ != 0 {
			m = protowire.AppendTag(m, 3, protowire.VarintType)
			m = protowire.AppendVarint(m, uint64(p.typ))
		}
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		b = protowire.AppendBytes(b, m)
	}
	var ts []byte
	ts = protowire.AppendTag(ts, 3, protowire.VarintType)
	ts = protowire.AppendVarint(ts, 2)
	ts = protowire.AppendTag(ts, 35, protowire.VarintType)
	ts = protowire.AppendVarint(ts, 1)
	b = protowire.AppendTag(b, 2, protowire.BytesType)
	b = protowire.AppendBytes(b, ts)
	var ns []byte
	ns = protowire.AppendTag(ns, 1, protowire.BytesType)
	ns = protowire.AppendString(ns, "identity")
	if dummy != nil {
		ns = protowire.AppendTag(ns, 3, protowire.VarintType)
		ns = protowire.AppendVarint(ns, protowire.EncodeBool(*dummy))
	}
	b = protowire.AppendTag(b, 3, protowire.BytesType)
	b = protowire.AppendBytes(b, ns)
	return b
}

// spSmallPieces is a minimal valid model: unk, bos, eos, one user-defined,
// one unused, one byte and two normal pieces.
var spSmallPieces = []spTestPiece{
	{"<unk>", 0, spUnknown}, {"<s>", 0, spControl}, {"</s>", 0, spControl},
	{"<0x41>", 0, spByte}, {"<mine>", 0, spUserDefined}, {"<old>", 0, spUnused},
	{"▁a", -1, 0}, {"b", -2.5, spNormal},
}

// spWriteDir makes a model directory with the given files.
func spWriteDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// ggufTokenizerKVs returns the tokenizer.* KVs of a GGUF file, keyed by name.
func ggufTokenizerKVs(t *testing.T, path string) map[string]gguf.Value {
	t.Helper()
	f, err := reader.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]gguf.Value{}
	for _, kv := range f.KVs {
		if strings.HasPrefix(kv.Key, "tokenizer.") {
			out[kv.Key] = kv.Value
		}
	}
	return out
}

// compareTokenizerKVs reports every difference between the tokenizer KVs we
// would write and those of a reference file, element by element for arrays.
func compareTokenizerKVs(t *testing.T, got []gguf.KV, want map[string]gguf.Value) {
	t.Helper()
	seen := map[string]bool{}
	for _, kv := range got {
		seen[kv.Key] = true
		w, ok := want[kv.Key]
		if !ok {
			t.Errorf("we write %s = %v, the reference has no such key", kv.Key, kv.Value)
			continue
		}
		if kv.Value.Type != w.Type || kv.Value.Elem != w.Elem {
			t.Errorf("%s: type %s/%s, reference %s/%s", kv.Key, kv.Value.Type, kv.Value.Elem, w.Type, w.Elem)
			continue
		}
		if kv.Value.Type == gguf.ValueArray {
			gv, wv := reflect.ValueOf(kv.Value.V), reflect.ValueOf(w.V)
			if gv.Len() != wv.Len() {
				t.Errorf("%s: %d entries, reference %d", kv.Key, gv.Len(), wv.Len())
				continue
			}
			for i := 0; i < gv.Len(); i++ {
				if g, w := gv.Index(i).Interface(), wv.Index(i).Interface(); g != w {
					t.Errorf("%s[%d] = %v, reference %v", kv.Key, i, g, w)
					break
				}
			}
			continue
		}
		if kv.Value.V != w.V {
			t.Errorf("%s = %v, reference %v", kv.Key, kv.Value.V, w.V)
		}
	}
	for k := range want {
		if !seen[k] {
			t.Errorf("the reference has %s, we do not write it", k)
		}
	}
}

// TestLoadSentencePieceGolden: the tokenizer KVs built from the tiny golden
// checkpoint equal those bitnet.cpp's converter wrote into the I2_S GGUF,
// key set included (bos 1, eos 2, add_bos true, add_eos false, no unk id).
func TestLoadSentencePieceGolden(t *testing.T) {
	for _, c := range []struct{ hf, gguf string }{
		{tinyHFDir, goldenI2SGGUF},
		{tinyHFDir, "../testdata/golden/tiny-bitnet/gguf/ggml-model-f32.gguf"},
		{"../testdata/golden/b158-h512/hf", "../testdata/golden/b158-h512/gguf/tiny-b158-h512-f32.gguf"},
	} {
		t.Run(filepath.Base(c.gguf), func(t *testing.T) {
			v, warnings, err := LoadSentencePiece(c.hf, 512)
			if err != nil {
				t.Fatal(err)
			}
			if len(warnings) != 0 {
				t.Errorf("warnings: %q", warnings)
			}
			want := ggufTokenizerKVs(t, c.gguf)
			if _, ok := want["tokenizer.ggml.pre"]; !ok {
				// The b158-h512 file was written by plain gguf-py without a
				// pre key; everything else must match.
				want["tokenizer.ggml.pre"] = gguf.String("default")
			}
			compareTokenizerKVs(t, v.KVs(), want)
			if v.BOS != 1 || v.EOS != 2 || v.UNK != NoToken || *v.AddBOS != true || *v.AddEOS != false {
				t.Errorf("specials: bos %d eos %d unk %d add_bos %v add_eos %v", v.BOS, v.EOS, v.UNK, *v.AddBOS, *v.AddEOS)
			}
		})
	}
}

// TestLoadSentencePieceLlama2: the LLaMA tokenizer.model (32000 pieces) gives
// exactly the vocabulary llama.cpp's converter stored in two independent
// GGUF files, plus spot checks of well-known ids.
func TestLoadSentencePieceLlama2(t *testing.T) {
	v, _, err := LoadSentencePiece(llama2Dir, 32000)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Tokens) != 32000 {
		t.Fatalf("%d tokens, want 32000", len(v.Tokens))
	}
	for _, c := range []struct {
		id    int
		text  string
		typ   int32
		score float32
	}{
		{0, "<unk>", TypeUnknown, 0},
		{1, "<s>", TypeControl, 0},
		{2, "</s>", TypeControl, 0},
		{3, "<0x00>", TypeByte, 0},
		{13, "<0x0A>", TypeByte, 0},
		{258, "<0xFF>", TypeByte, 0},
		{29871, "▁", TypeNormal, -1e9},
		{259, "▁▁", TypeNormal, -1e9},
		{15043, "▁Hello", TypeNormal, -14784},
	} {
		if v.Tokens[c.id] != c.text || v.Types[c.id] != c.typ || v.Scores[c.id] != c.score {
			t.Errorf("token %d = %q type %d score %g, want %q type %d score %g", c.id, v.Tokens[c.id], v.Types[c.id], v.Scores[c.id], c.text, c.typ, c.score)
		}
	}
	for _, ref := range []string{llama2TinyGGUF, llamaSPMGGUF} {
		want := ggufTokenizerKVs(t, ref)
		for _, key := range []string{"tokenizer.ggml.tokens", "tokenizer.ggml.scores", "tokenizer.ggml.token_type"} {
			var got gguf.Value
			for _, kv := range v.KVs() {
				if kv.Key == key {
					got = kv.Value
				}
			}
			if !reflect.DeepEqual(got.V, want[key].V) {
				t.Errorf("%s differs from %s", key, ref)
			}
		}
	}
}

// TestLoadSentencePieceAddedAndPadding: added_tokens.json entries not already
// present are appended (score −1000, USER_DEFINED) and the rest is padded
// with [PAD1]…[PADn] (score −1000, UNUSED), as the reference converter does.
func TestLoadSentencePieceAddedAndPadding(t *testing.T) {
	dir := spWriteDir(t, map[string]string{
		"tokenizer.model":   string(spBuildModel(spSmallPieces, nil)),
		"added_tokens.json": `{"<new2>": 9, "<s>": 1, "<new1>": 8}`,
	})
	v, warnings, err := LoadSentencePiece(dir, 13)
	if err != nil {
		t.Fatal(err)
	}
	wantTokens := []string{"<unk>", "<s>", "</s>", "<0x41>", "<mine>", "<old>", "▁a", "b", "<new1>", "<new2>", "[PAD1]", "[PAD2]", "[PAD3]"}
	wantScores := []float32{0, 0, 0, 0, 0, 0, -1, -2.5, -1000, -1000, -1000, -1000, -1000}
	// USER_DEFINED pieces of the model become NORMAL (the reference checks
	// only is_unknown/is_control/is_unused/is_byte).
	wantTypes := []int32{2, 3, 3, 6, 1, 5, 1, 1, 4, 4, 5, 5, 5}
	if !reflect.DeepEqual(v.Tokens, wantTokens) || !reflect.DeepEqual(v.Scores, wantScores) || !reflect.DeepEqual(v.Types, wantTypes) {
		t.Fatalf("got\n%q\n%v\n%v", v.Tokens, v.Scores, v.Types)
	}
	if v.Model != "llama" || v.Pre != "default" || v.AddSpacePrefix != nil {
		t.Errorf("model %q pre %q add_space_prefix %v", v.Model, v.Pre, v.AddSpacePrefix)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "[PAD1]…[PAD3]") {
		t.Errorf("warnings = %q, want one about 3 padding tokens", warnings)
	}

	// vocabSize 0 means the tokenizer's own size: no padding.
	v, _, err = LoadSentencePiece(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Tokens) != 10 {
		t.Errorf("vocabSize 0: %d tokens, want 10", len(v.Tokens))
	}
}

// TestLoadSentencePieceTooManyTokens: more tokens than vocab_size is an
// error naming both numbers.
func TestLoadSentencePieceTooManyTokens(t *testing.T) {
	dir := spWriteDir(t, map[string]string{
		"tokenizer.model":   string(spBuildModel(spSmallPieces, nil)),
		"added_tokens.json": `{"<x>": 8}`,
	})
	_, _, err := LoadSentencePiece(dir, 8)
	if !errors.Is(err, ErrVocabTooLarge) {
		t.Fatalf("err = %v, want ErrVocabTooLarge", err)
	}
	for _, s := range []string{"9 tokens", "vocab_size is 8", "tokenizer.model"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not mention %q", err, s)
		}
	}
}

// TestLoadSentencePieceNoDummyPrefix: add_dummy_prefix false is carried into
// add_space_prefix = false (with a warning); an explicit true is the default.
func TestLoadSentencePieceNoDummyPrefix(t *testing.T) {
	for _, c := range []struct {
		dummy *bool
		want  *bool
	}{{nil, nil}, {new(true), nil}, {new(false), new(false)}} {
		dir := spWriteDir(t, map[string]string{"tokenizer.model": string(spBuildModel(spSmallPieces, c.dummy))})
		v, warnings, err := LoadSentencePiece(dir, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(v.AddSpacePrefix, c.want) {
			t.Errorf("add_dummy_prefix %v: AddSpacePrefix %v, want %v", c.dummy, v.AddSpacePrefix, c.want)
		}
		if (c.want != nil) != (len(warnings) == 1) {
			t.Errorf("add_dummy_prefix %v: warnings %q", c.dummy, warnings)
		}
	}
}

// TestParseSentencePieceErrors: malformed models are errors that wrap
// ErrSentencePiece, and LoadSentencePiece names the file.
func TestParseSentencePieceErrors(t *testing.T) {
	good := spBuildModel(spSmallPieces, nil)
	wrongWire := protowire.AppendTag(nil, 1, protowire.VarintType)
	wrongWire = protowire.AppendVarint(wrongWire, 7)
	badScore := protowire.AppendTag(nil, 1, protowire.BytesType)
	inner := protowire.AppendTag(nil, 1, protowire.BytesType)
	inner = protowire.AppendString(inner, "x")
	inner = protowire.AppendTag(inner, 2, protowire.VarintType)
	inner = protowire.AppendVarint(inner, 1)
	badScore = protowire.AppendBytes(badScore, inner)
	for _, c := range []struct {
		name, data, want string
	}{
		{"empty file", "", "no pieces"},
		{"truncated", string(good[:len(good)-3]), "field"},
		{"pieces as varint", string(wrongWire), "wire type"},
		{"score as varint", string(badScore), "score has wire type"},
		{"empty piece", string(spBuildModel([]spTestPiece{{"<unk>", 0, spUnknown}, {"", 0, 0}}, nil)), "piece 1 is empty"},
		{"duplicate", string(spBuildModel([]spTestPiece{{"<unk>", 0, spUnknown}, {"a", 0, 0}, {"a", 0, 0}}, nil)), "duplicates piece 1"},
		{"no unk", string(spBuildModel([]spTestPiece{{"a", 0, 0}}, nil)), "no UNKNOWN"},
		{"two unk", string(spBuildModel([]spTestPiece{{"<unk>", 0, spUnknown}, {"<u2>", 0, spUnknown}}, nil)), "both UNKNOWN"},
		{"invalid utf8", string(spBuildModel([]spTestPiece{{"<unk>", 0, spUnknown}, {"\xff", 0, 0}}, nil)), "UTF-8"},
		{"not protobuf", "this is a text file, not a model\n", "field 14"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := spWriteDir(t, map[string]string{"tokenizer.model": c.data})
			_, _, err := LoadSentencePiece(dir, 0)
			if !errors.Is(err, ErrSentencePiece) {
				t.Fatalf("err = %v, want ErrSentencePiece", err)
			}
			if !strings.Contains(err.Error(), filepath.Join(dir, "tokenizer.model")) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q should name the file and say %q", err, c.want)
			}
		})
	}
	_, _, err := LoadSentencePiece(t.TempDir(), 0)
	if err == nil || !strings.Contains(err.Error(), "tokenizer.model") {
		t.Errorf("missing file: err = %v", err)
	}
}

// FuzzSentencePieceModel: arbitrary bytes as tokenizer.model give an error
// or a model whose pieces are non-empty, unique, valid UTF-8 and contain
// exactly one UNKNOWN piece; never a panic.
func FuzzSentencePieceModel(f *testing.F) {
	tiny, err := os.ReadFile(filepath.Join(tinyHFDir, "tokenizer.model"))
	if err != nil {
		f.Fatal(err)
	}
	// A few hundred bytes of the real model (it breaks off mid-piece); the
	// whole 7 KB file makes the fuzzer's minimisation of every new input
	// very slow and is covered by TestLoadSentencePieceGolden.
	f.Add(tiny[:300])
	f.Add(spBuildModel(spSmallPieces, nil))
	f.Add(spBuildModel(spSmallPieces, new(false)))
	f.Add([]byte{})
	f.Add([]byte{0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := parseSentencePiece(data)
		if err != nil {
			if !errors.Is(err, ErrSentencePiece) {
				t.Fatalf("error %v does not wrap ErrSentencePiece", err)
			}
			return
		}
		seen := map[string]bool{}
		unk := 0
		for _, p := range m.Pieces {
			if p.Piece == "" || seen[p.Piece] {
				t.Fatalf("bad piece %q accepted", p.Piece)
			}
			seen[p.Piece] = true
			if p.Type == spUnknown {
				unk++
			}
		}
		if unk != 1 {
			t.Fatalf("%d UNKNOWN pieces accepted", unk)
		}
		v, _, err := vocabFromSentencePiece(m, modelFiles{fsys: fstest.MapFS{}}, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := NewSPM(v); err != nil {
			t.Fatal(err)
		}
	})
}

// BenchmarkLoadSentencePiece parses the 32000-piece LLaMA tokenizer.model
// and builds its Vocab (bytes/s of tokenizer.model).
func BenchmarkLoadSentencePiece(b *testing.B) {
	st, err := os.Stat(filepath.Join(llama2Dir, "tokenizer.model"))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
	for i := 0; i < b.N; i++ {
		if _, _, err := LoadSentencePiece(llama2Dir, 32000); err != nil {
			b.Fatal(err)
		}
	}
}

// TestLoadSentencePieceFS: the fs.FS form reads the same files and names
// them relative to the FS root in errors.
func TestLoadSentencePieceFS(t *testing.T) {
	fsys := fstest.MapFS{
		"tokenizer.model":       {Data: spBuildModel(spSmallPieces, nil)},
		"tokenizer_config.json": {Data: []byte(`{"add_bos_token": false, "chat_template": "T"}`)},
		"config.json":           {Data: []byte(`{"bos_token_id": 1, "eos_token_id": 2}`)},
	}
	v, warnings, err := LoadSentencePieceFS(fsys, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Tokens) != 10 || v.Tokens[9] != "[PAD2]" || v.BOS != 1 || v.EOS != 2 || *v.AddBOS || v.ChatTemplate != "T" {
		t.Errorf("tokens %q bos %d eos %d add_bos %v template %q", v.Tokens, v.BOS, v.EOS, *v.AddBOS, v.ChatTemplate)
	}
	if len(warnings) != 1 {
		t.Errorf("warnings %q, want the padding one", warnings)
	}

	v2 := NewVocab("llama", "default")
	v2.Tokens = v.Tokens
	if _, err := ApplySpecialVocabFS(v2, fsys); err != nil || v2.BOS != 1 || v2.EOS != 2 || *v2.AddBOS {
		t.Errorf("ApplySpecialVocabFS: err %v bos %d eos %d", err, v2.BOS, v2.EOS)
	}

	fsys["config.json"] = &fstest.MapFile{Data: []byte(`[1, 2]`)}
	if _, _, err := LoadSentencePieceFS(fsys, 10); err == nil || !strings.HasPrefix(err.Error(), "config.json: not a JSON object") {
		t.Errorf("bad config.json: err = %v", err)
	}
	delete(fsys, "tokenizer.model")
	if _, _, err := LoadSentencePieceFS(fsys, 10); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "tokenizer.model") {
		t.Errorf("missing model: err = %v", err)
	}

	// A side file that exists but cannot be read is an error, not "absent".
	dir := spWriteDir(t, map[string]string{"tokenizer.model": string(spBuildModel(spSmallPieces, nil))})
	if err := os.Mkdir(filepath.Join(dir, "added_tokens.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, _, err := LoadSentencePiece(dir, 0); err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "added_tokens.json")) {
		t.Errorf("unreadable added_tokens.json: err = %v", err)
	}
}
