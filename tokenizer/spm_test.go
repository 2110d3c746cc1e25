package tokenizer

import (
	"bytes"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

const (
	tinyHFDir    = "../testdata/golden/tiny-bitnet/hf"
	llama2Dir    = "../testdata/tokenizers/llama2"
	spmVectorInp = "../testdata/tokenizers/vectors/ggml-vocab-llama-spm.gguf.inp"
	spmVectorOut = "../testdata/tokenizers/vectors/ggml-vocab-llama-spm.gguf.out"
)

// spmLoad builds the llama tokenizer from a tokenizer.model directory.
func spmLoad(t testing.TB, dir string, vocabSize int) *SPM {
	t.Helper()
	v, _, err := LoadSentencePiece(dir, vocabSize)
	if err != nil {
		t.Fatal(err)
	}
	tk, err := NewSPM(v)
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

// spmVector is one llama.cpp tokenizer test case.
type spmVector struct {
	input string
	ids   []int32
}

// spmReadVectors reads llama.cpp's test-tokenizer-0 files: every input in .inp is
// followed by "\n__ggml_vocab_test__\n"; .out has the ids of input i on line i.
func spmReadVectors(t testing.TB, inp, out string) []spmVector {
	t.Helper()
	in, err := os.ReadFile(inp)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	inputs := strings.Split(string(in), "\n__ggml_vocab_test__\n")
	if inputs[len(inputs)-1] != "" {
		t.Fatalf("%s: does not end with a separator", inp)
	}
	inputs = inputs[:len(inputs)-1]
	lines := strings.Split(strings.TrimSuffix(string(want), "\n"), "\n")
	if len(lines) != len(inputs) {
		t.Fatalf("%d inputs but %d output lines", len(inputs), len(lines))
	}
	vs := make([]spmVector, len(inputs))
	for i, line := range lines {
		vs[i].input = inputs[i]
		for _, f := range strings.Fields(line) {
			n, err := strconv.ParseInt(f, 10, 32)
			if err != nil {
				t.Fatalf("%s line %d: %v", out, i+1, err)
			}
			vs[i].ids = append(vs[i].ids, int32(n))
		}
	}
	return vs
}

func spmCheckVectors(t *testing.T, tk Tokenizer) {
	t.Helper()
	vs := spmReadVectors(t, spmVectorInp, spmVectorOut)
	if len(vs) != 46 {
		t.Fatalf("read %d vectors, want 46", len(vs))
	}
	for i, v := range vs {
		got, err := tk.Encode(v.input, false, false)
		if err != nil {
			t.Fatalf("vector %d %q: %v", i, v.input, err)
		}
		if !slices.Equal(got, v.ids) {
			t.Errorf("vector %d %q:\n got %v\nwant %v", i, v.input, got, v.ids)
		}
	}
}

// TestSPMVectorsFromTokenizerModel runs every llama-spm vector of llama.cpp
// against the vocabulary built from the LLaMA tokenizer.model they belong to.
func TestSPMVectorsFromTokenizerModel(t *testing.T) {
	spmCheckVectors(t, spmLoad(t, llama2Dir, 0))
}

// TestSPMGoldenPrompt: the reference runtime's ids for the golden prompt
// (testdata/golden/tiny-bitnet/README.md).
func TestSPMGoldenPrompt(t *testing.T) {
	tk := spmLoad(t, tinyHFDir, 512)
	got, err := tk.Encode("Hello world, this is a tiny BitNet test.", true, false)
	if err != nil {
		t.Fatal(err)
	}
	want := []int32{1, 413, 480, 414, 271, 417, 313, 269, 421, 427, 457, 360, 314, 411, 280, 262, 261, 437, 413, 461, 268, 469, 316, 262, 414, 284, 432}
	if !slices.Equal(got, want) {
		t.Fatalf("got  %v\nwant %v", got, want)
	}
	s, err := tk.Decode(got)
	if err != nil {
		t.Fatal(err)
	}
	if s != "Hello world, this is a tiny BitNet test." {
		t.Fatalf("Decode = %q", s)
	}
}

// TestSPMRoundTrip: Decode(Encode(s)) == s with the LLaMA-2 vocabulary for
// mixed scripts, byte-fallback characters, whitespace runs and emoji.
func TestSPMRoundTrip(t *testing.T) {
	tk := spmLoad(t, llama2Dir, 0)
	for _, s := range []string{
		"Hello world",
		" leading space",
		"  two leading spaces and trailing  ",
		"Grüße aus München – naïve café",
		"Привет, мир! Ελληνικά κείμενα",
		"日本語のテキストと中文混合",
		"한국어 문장 🦙🚀 emoji 😶‍🌫️",
		"tabs\tand\nnewlines\r\n",
		"क्षत्रिय और العربية",
		"𝔘𝔫𝔦𝔠𝔬𝔡𝔢 ᚠᛇᚻ",
		"",
		"x",
	} {
		for _, bos := range []bool{false, true} {
			ids, err := tk.Encode(s, bos, false)
			if err != nil {
				t.Fatalf("Encode(%q): %v", s, err)
			}
			got, err := tk.Decode(ids)
			if err != nil {
				t.Fatalf("Decode(%v): %v", ids, err)
			}
			if got != s {
				t.Errorf("round trip (bos %v) of %q gave %q (ids %v)", bos, s, got, ids)
			}
		}
	}
}

// TestSPMEncodeCases pins llama.cpp behaviour for special-token parsing, the
// space prefix and byte fallback on the LLaMA-2 vocabulary.
func TestSPMEncodeCases(t *testing.T) {
	tk := spmLoad(t, llama2Dir, 0)
	for _, c := range []struct {
		name                     string
		text                     string
		addSpecial, parseSpecial bool
		want                     []int32
	}{
		{"empty with BOS", "", true, false, []int32{1}},
		{"empty without BOS", "", false, false, nil},
		{"Hello with BOS", "Hello", true, false, []int32{1, 15043}},
		{"space prefix", " Hello", false, false, []int32{29871, 15043}},
		// Without parseSpecial the text of <s> is tokenized as text.
		{"control as text", "<s>Hello", false, false, []int32{529, 29879, 29958, 10994}},
		// With parseSpecial <s> is one token and the following text gets
		// the space prefix again (llama.cpp is_prev_special).
		{"control parsed", "<s>Hello", false, true, []int32{1, 15043}},
		{"control in middle", "Hi</s>there", false, true, []int32{6324, 2, 727}},
		// A character with no piece falls back to its UTF-8 bytes.
		{"byte fallback", "\U0001F999", false, false, []int32{29871, 243, 162, 169, 156}},
		// Invalid UTF-8: the lone lead byte swallows the next byte, as
		// llama.cpp's utf8_len does, and both come out as bytes.
		{"invalid utf8", "a\xC3(", false, false, []int32{263, 198, 43}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := tk.Encode(c.text, c.addSpecial, c.parseSpecial)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, c.want) {
				t.Fatalf("Encode(%q, %v, %v) = %v, want %v", c.text, c.addSpecial, c.parseSpecial, got, c.want)
			}
		})
	}
}

// TestSPMPieceAndDecode checks token rendering (llama_token_to_piece).
func TestSPMPieceAndDecode(t *testing.T) {
	tk := spmLoad(t, llama2Dir, 0)
	for _, c := range []struct {
		id      int32
		special bool
		want    string
	}{
		{1, false, ""},
		{1, true, "<s>"},
		{0, true, "<unk>"},
		{15043, false, " Hello"},
		{3, false, "\x00"},
		{0x41 + 3, false, "A"},
	} {
		got, err := tk.Piece(c.id, c.special)
		if err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("Piece(%d, %v) = %q, want %q", c.id, c.special, got, c.want)
		}
	}
	if _, err := tk.Piece(32000, false); err == nil || !strings.Contains(err.Error(), "32000") {
		t.Errorf("Piece(32000) error = %v, want one naming the id", err)
	}
	if _, err := tk.Decode([]int32{1, -1}); err == nil || !strings.Contains(err.Error(), "-1") {
		t.Errorf("Decode(-1) error = %v, want one naming the id", err)
	}
	// Byte tokens join into one UTF-8 character.
	s, err := tk.Decode([]int32{1, 29871, 243, 162, 169, 156})
	if err != nil {
		t.Fatal(err)
	}
	if s != "\U0001F999" {
		t.Errorf("Decode of byte tokens = %q", s)
	}
}

// TestSPMUserDefinedAlwaysSplit: USER_DEFINED tokens are matched even without
// parseSpecial (llama.cpp tokenizer_st_partition), CONTROL ones only with it.
func TestSPMUserDefinedAlwaysSplit(t *testing.T) {
	v := NewVocab("llama", "default")
	v.Tokens = []string{"<unk>", "<s>", "</s>", "▁", "a", "b", "▁a", "<tool>", "<ctl>"}
	v.Scores = []float32{0, 0, 0, -1, -2, -3, -0.5, -1000, -1000}
	v.Types = []int32{TypeUnknown, TypeControl, TypeControl, TypeNormal, TypeNormal, TypeNormal, TypeNormal, TypeUserDefined, TypeControl}
	tk, err := NewSPM(v)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := tk.Encode("a<tool>b<ctl>", false, false)
	// After <tool> the text "b" gets the space prefix again (is_prev_special).
	// "<ctl>" is not matched without parseSpecial: '<' etc. have no piece and
	// no byte tokens exist, so they become UNK.
	want := []int32{6, 7, 3, 5, 0, 0, 0, 0, 0}
	if !slices.Equal(got, want) {
		t.Fatalf("no parseSpecial: got %v, want %v", got, want)
	}
	got, _ = tk.Encode("a<tool>b<ctl>", false, true)
	want = []int32{6, 7, 3, 5, 8}
	if !slices.Equal(got, want) {
		t.Fatalf("parseSpecial: got %v, want %v", got, want)
	}
}

// FuzzSPMEncode: arbitrary (also invalid UTF-8) text never panics, every id is
// in range, and valid UTF-8 round-trips through Decode.
func FuzzSPMEncode(f *testing.F) {
	tk := spmLoad(f, tinyHFDir, 512)
	for _, s := range []string{"", "Hello world", " \t\n", "<s></s><unk>", "\xff\xfe", "a\xC3(", "日本 🦙", "\u2581\u2581x"} {
		f.Add(s, true)
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, s string, parseSpecial bool) {
		ids, err := tk.Encode(s, true, parseSpecial)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range ids {
			if id < 0 || int(id) >= len(tk.Vocab().Tokens) {
				t.Fatalf("id %d out of range", id)
			}
		}
		got, err := tk.Decode(ids)
		if err != nil {
			t.Fatal(err)
		}
		if !parseSpecial && utf8.ValidString(s) && !strings.Contains(s, "\u2581") && got != s {
			t.Fatalf("round trip of %q gave %q", s, got)
		}
		// Invalid UTF-8 comes back byte for byte, unless a space was escaped
		// to U+2581 and then swallowed into a malformed sequence (llama.cpp
		// escapes before it splits characters, so those bytes stay U+2581).
		if !parseSpecial && !utf8.ValidString(s) && !strings.ContainsAny(s, " \u2581") && !bytes.Equal([]byte(got), []byte(s)) {
			t.Fatalf("bytes of %q came back as %q", s, got)
		}
	})
}

func BenchmarkSPMEncode(b *testing.B) {
	tk := spmLoad(b, llama2Dir, 0)
	text := strings.Repeat("The quick brown fox jumps over the lazy dog. Über café 日本語. ", 64)
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := tk.Encode(text, true, false); err != nil {
			b.Fatal(err)
		}
	}
}

// TestNewSPMDefaultsAndErrors: llama.cpp's SPM defaults fill unset ids and
// flags; inconsistent vocabularies are errors; add_space_prefix false
// neither adds nor strips the space.
func TestNewSPMDefaultsAndErrors(t *testing.T) {
	base := func() *Vocab {
		v := NewVocab("llama", "default")
		v.Tokens = []string{"<unk>", "<s>", "</s>", "▁", "a", "▁a", "<0x62>"}
		v.Scores = []float32{0, 0, 0, -1, -2, -0.5, 0}
		v.Types = []int32{TypeUnknown, TypeControl, TypeControl, TypeNormal, TypeNormal, TypeNormal, TypeByte}
		return v
	}
	for _, c := range []struct {
		name string
		mod  func(*Vocab)
		want string
	}{
		{"no tokens", func(v *Vocab) { v.Tokens, v.Scores, v.Types = nil, nil, nil }, "no tokens"},
		{"scores", func(v *Vocab) { v.Scores = v.Scores[:2] }, "2 scores for 7 tokens"},
		{"types", func(v *Vocab) { v.Types = v.Types[:3] }, "3 token types for 7 tokens"},
	} {
		v := base()
		c.mod(v)
		if _, err := NewSPM(v); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.name, err, c.want)
		}
	}

	tk, err := NewSPM(base())
	if err != nil {
		t.Fatal(err)
	}
	// Defaults: BOS 1 added, EOS 2 not added; "b" has only a byte token,
	// "c" has neither and becomes UNK 0.
	got, _ := tk.Encode("a bc", true, false)
	if want := []int32{1, 5, 3, 6, 0}; !slices.Equal(got, want) {
		t.Errorf("defaults: got %v, want %v", got, want)
	}

	v := base()
	f, tr := false, true
	v.AddSpacePrefix, v.AddEOS, v.AddBOS = &f, &tr, &f
	tk, err = NewSPM(v)
	if err != nil {
		t.Fatal(err)
	}
	got, _ = tk.Encode("a a", true, false)
	if want := []int32{4, 5, 2}; !slices.Equal(got, want) {
		t.Errorf("no space prefix, add_eos: got %v, want %v", got, want)
	}
	if s, _ := tk.Decode([]int32{5, 5}); s != " a a" {
		t.Errorf("Decode without space prefix = %q, want %q", s, " a a")
	}

	// Text that needs UNK when the vocabulary has none is an error.
	v = base()
	v.Types[0] = TypeNormal
	v.Tokens[0] = "x"
	v.UNK = NoToken
	tk, err = NewSPM(v)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tk.Encode("q", false, false); err != nil {
		t.Errorf("id 0 is the llama.cpp default UNK even when it is not <unk>: %v", err)
	}
}
