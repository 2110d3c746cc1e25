package tokenizer

import (
	"slices"
	"strings"
	"testing"
)

func TestBPEVectors(t *testing.T) {
	for _, tc := range []struct{ model, vectors string }{
		{"llama3", "ggml-vocab-llama-bpe.gguf"},
		{"qwen3", "ggml-vocab-qwen2.gguf"},
	} {
		t.Run(tc.model, func(t *testing.T) {
			v, _ := realVocab(t, tc.model)
			tok, err := New(v)
			if err != nil {
				t.Fatal(err)
			}
			for i, c := range readVectors(t, tc.vectors) {
				got, err := tok.Encode(c.in, false, false)
				if err != nil {
					t.Fatalf("input %d %q: %v", i, c.in, err)
				}
				if !slices.Equal(got, c.ids) {
					t.Errorf("input %d %q:\n got %v\nwant %v", i, c.in, got, c.ids)
				}
			}
		})
	}
}

// TestBPEHelloWorld is the spec's anchor: "Hello world" → 9906 1917 with
// the Llama-3 vocabulary, and BOS 128000 first with addSpecial (llama-bpe
// adds BOS by default).
func TestBPEHelloWorld(t *testing.T) {
	v, _ := realVocab(t, "llama3")
	tok, err := New(v)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		add  bool
		want []int32
	}{{false, []int32{9906, 1917}}, {true, []int32{128000, 9906, 1917}}} {
		got, err := tok.Encode("Hello world", c.add, false)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("Encode(Hello world, addSpecial=%v) = %v, %v; want %v", c.add, got, err, c.want)
		}
	}
}

// roundTripTexts mixes scripts, emoji (with ZWJ and skin tones), combining
// marks, RTL text, control characters and whitespace runs.
var roundTripTexts = []string{
	"Hello, world! It's 2026; we'll see.",
	"日本語のテキストと中文混合，还有한국어도 있어요。",
	"emoji: 👩‍👩‍👧‍👦 👍🏽 🇫🇷 ❤️‍🔥 and 🦙",
	"العربية: مرحبا بالعالم، كيف حالك؟",
	"combining: e\u0301 a\u0308 n\u0303 q\u0323\u0307 Z\u0335\u0321a\u0337l\u0336g\u0334o",
	"Ελληνικά, русский текст, עִבְרִית, हिन्दी, ไทย",
	"  leading\tand\ttabs\n\n\nnew lines \r\n  trailing   ",
	"numbers 1234567890 3.14159 1e-9 ½ ² ٣",
	"code: func main() { fmt.Println(\"hi\") } // <|eot_id|> <think>",
	"",
}

func TestBPERoundTrip(t *testing.T) {
	for _, model := range []string{"llama3", "qwen3"} {
		t.Run(model, func(t *testing.T) {
			v, _ := realVocab(t, model)
			tok, err := New(v)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range roundTripTexts {
				ids, err := tok.Encode(s, false, false)
				if err != nil {
					t.Fatalf("Encode(%q): %v", s, err)
				}
				got, err := tok.Decode(ids)
				if err != nil {
					t.Fatalf("Decode(%v): %v", ids, err)
				}
				if got != s {
					t.Errorf("Decode(Encode(%q)) = %q (ids %v)", s, got, ids)
				}
			}
		})
	}
}

// TestBPEParseSpecial: with parseSpecial the text of control tokens maps to
// their ids; without it, it is tokenized as text. USER_DEFINED tokens
// (Qwen3's <think>) are matched either way, as in llama.cpp.
func TestBPEParseSpecial(t *testing.T) {
	v, _ := realVocab(t, "qwen3")
	tok, err := New(v)
	if err != nil {
		t.Fatal(err)
	}
	const text = "<|im_start|>user\n<think>hi</think><|im_end|>"
	special, err := tok.Encode(text, false, true)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := tok.Encode(text, false, false)
	if err != nil {
		t.Fatal(err)
	}
	if special[0] != 151644 || special[len(special)-1] != 151645 || !slices.Contains(special, 151667) || !slices.Contains(special, 151668) {
		t.Errorf("parseSpecial ids = %v, want <|im_start|>=151644 first, <|im_end|>=151645 last, <think>/</think> inside", special)
	}
	if slices.Contains(plain, 151644) || slices.Contains(plain, 151645) || !slices.Contains(plain, 151667) {
		t.Errorf("plain ids = %v, want no control ids but <think>=151667", plain)
	}
	for _, ids := range [][]int32{special, plain} {
		if s, err := tok.Decode(ids); err != nil || s != text {
			t.Errorf("Decode = %q, %v; want %q", s, err, text)
		}
	}
	if _, err := tok.Decode([]int32{151936}); err == nil {
		t.Error("Decode of an out-of-range id succeeded")
	}
	// Pads are UNUSED: never matched in text, decoded as nothing.
	if s, err := tok.Decode([]int32{151700, 151643}); err != nil || s != "<|endoftext|>" {
		t.Errorf("Decode(pad, <|endoftext|>) = %q, %v", s, err)
	}
	if ids, _ := tok.Encode("[PAD151700]", false, true); slices.Contains(ids, 151700) {
		t.Errorf("pad token matched in text: %v", ids)
	}
}

// TestSPMGemma3Vectors runs the Gemma3 vectors through the "llama"
// (SentencePiece-style) tokenizer built from the tokenizer.json vocabulary.
func TestSPMGemma3Vectors(t *testing.T) {
	v, _ := realVocab(t, "gemma3")
	tok, err := New(v)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range readVectors(t, "gemma3") {
		got, err := tok.Encode(c.in, false, false)
		if err != nil {
			t.Fatalf("input %d %q: %v", i, c.in, err)
		}
		if !slices.Equal(got, c.ids) {
			t.Errorf("input %d %q:\n got %v\nwant %v", i, c.in, got, c.ids)
		}
	}
}

func TestNewBPEErrors(t *testing.T) {
	base := func() *Vocab {
		v := NewVocab("gpt2", "llama-bpe")
		v.Tokens = []string{"a", "b", "ab"}
		v.Types = []int32{TypeNormal, TypeNormal, TypeNormal}
		v.Merges = []string{"a b"}
		return v
	}
	for _, c := range []struct {
		name string
		mod  func(*Vocab)
		want string
	}{
		{"ok", func(*Vocab) {}, ""},
		{"model", func(v *Vocab) { v.Model = "llama" }, "needs tokenizer.ggml.model gpt2"},
		{"pre", func(v *Vocab) { v.Pre = "deepseek-llm" }, `pre "deepseek-llm" is not supported`},
		{"types", func(v *Vocab) { v.Types = v.Types[:2] }, "3 tokens but 2 token types"},
		{"merge without space", func(v *Vocab) { v.Merges = []string{"ab"} }, "no space"},
		{"merge not in vocab", func(v *Vocab) { v.Merges = []string{"a c"} }, "not in the vocabulary"},
		{"merge result not in vocab", func(v *Vocab) { v.Merges = []string{"b a"} }, "not in the vocabulary"},
		{"bos out of range", func(v *Vocab) { v.BOS = 3 }, "BOS id 3 is outside the vocabulary (0..2)"},
		{"eos negative", func(v *Vocab) { v.EOS = -2 }, "EOS id -2 is outside"},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := base()
			c.mod(v)
			_, err := NewBPE(v)
			if c.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error = %v, want %q", err, c.want)
			}
		})
	}
	// add_bos without a BOS id is an error at Encode time.
	tok, err := NewBPE(base())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tok.Encode("ab", true, false); err == nil || !strings.Contains(err.Error(), "no BOS token") {
		t.Errorf("Encode with add_bos and no BOS: %v", err)
	}
	if ids, err := tok.Encode("ab", false, false); err != nil || !slices.Equal(ids, []int32{2}) {
		t.Errorf("Encode(ab) = %v, %v; want [2]", ids, err)
	}
	if _, err := tok.Encode("abc", false, false); err == nil || !strings.Contains(err.Error(), "byte 0x63 has no token") {
		t.Errorf("Encode(abc) with no token for c: %v", err)
	}
}

func FuzzBPEEncode(f *testing.F) {
	for _, s := range roundTripTexts {
		f.Add(s, true)
	}
	f.Add("\xff\xfe invalid \xc3", false)
	f.Add("<|begin_of_text|><|eot_id|>x", true)
	v, _ := realVocab(f, "llama3")
	tok, err := New(v)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string, parseSpecial bool) {
		ids, err := tok.Encode(s, false, parseSpecial)
		if err != nil {
			t.Fatalf("Encode(%q): %v", s, err)
		}
		got, err := tok.Decode(ids)
		if err != nil {
			t.Fatal(err)
		}
		// Byte-level BPE is lossless, for any bytes.
		if got != s {
			t.Fatalf("Decode(Encode(%q)) = %q", s, got)
		}
	})
}

func BenchmarkBPEEncode10KB(b *testing.B) {
	v, _ := realVocab(b, "llama3")
	tok, err := New(v)
	if err != nil {
		b.Fatal(err)
	}
	text := strings.Repeat(strings.Join(roundTripTexts, " "), 1+10240/len(strings.Join(roundTripTexts, " ")))[:10240]
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	for b.Loop() {
		if _, err := tok.Encode(text, true, true); err != nil {
			b.Fatal(err)
		}
	}
}

// TestNewNilOnError (D1): when the builder fails, New returns a nil
// interface, not one holding a nil *BPE, so a caller's tok == nil check
// works (run used to call Encode on the nil *BPE and panic).
func TestNewNilOnError(t *testing.T) {
	v := NewVocab("gpt2", "deepseek-llm")
	v.Tokens = []string{"a"}
	v.Types = []int32{TypeNormal}
	tok, err := New(v)
	if err == nil || tok != nil {
		t.Fatalf("New = %#v, %v; want a nil Tokenizer and an error", tok, err)
	}
}
