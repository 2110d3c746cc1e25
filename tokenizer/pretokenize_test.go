package tokenizer

import (
	"slices"
	"testing"
	"unicode/utf8"
)

func TestSplitText(t *testing.T) {
	for _, c := range []struct {
		pre, in string
		want    []string
	}{
		{"llama-bpe", "Hello world", []string{"Hello", " world"}},
		{"llama-bpe", "I'M here, they'll 12345!", []string{"I", "'M", " here", ",", " they", "'ll", " ", "123", "45", "!"}},
		{"qwen2", "x 12345", []string{"x", " ", "1", "2", "3", "4", "5"}},
		{"llama-bpe", "a   b\n\n c", []string{"a", "  ", " b", "\n\n", " c"}},
		{"llama-bpe", "tail  ", []string{"tail", "  "}},
		{"llama-bpe", "\xffab\xfe", []string{"\xffab", "\xfe"}},
		{"gpt-2", "Hello  world's 42", []string{"Hello", " ", " world", "'s", " 42"}},
		{"llama-bpe", "", nil},
	} {
		p, ok := lookupPre(c.pre)
		if !ok {
			t.Fatalf("no pre %q", c.pre)
		}
		re, err := p.compiledRegex()
		if err != nil {
			t.Fatal(err)
		}
		got, err := splitText(re, c.in)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s regex split %q = %q, want %q", c.pre, c.in, got, c.want)
		}
		if got := splitWith(c.in, p.match); !slices.Equal(got, c.want) {
			t.Errorf("%s hand split %q = %q, want %q", c.pre, c.in, got, c.want)
		}
	}
}

// FuzzSplitMatchesRegex checks the hand-written matchers against the
// table's regexes (run by regexp2) on arbitrary text.
func FuzzSplitMatchesRegex(f *testing.F) {
	for _, s := range roundTripTexts {
		f.Add(s)
	}
	for _, s := range []string{"I'M 'Ll 'RE 've'd", " !\n\r\n  x", "\t\n\n\t\n a", "1234567 ½²٣", "\u00a0\u3000x\u2028y", "\xff\xfe'", "  \n", "a  ", "' '", "''s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for i := range preTokenizers {
			p := &preTokenizers[i]
			if p.match == nil {
				continue
			}
			re, err := p.compiledRegex()
			if err != nil {
				t.Fatal(err)
			}
			want, err := splitText(re, s)
			if err != nil {
				t.Fatal(err)
			}
			if got := splitWith(s, p.match); !slices.Equal(got, want) {
				t.Fatalf("%s: hand split %q = %q, regex gives %q", p.name, s, got, want)
			}
		}
	})
}

// TestByteAlphabet checks the GPT-2 byte-to-unicode table: a bijection of
// the 256 bytes onto distinct printable characters, printable ASCII and
// Latin-1 kept, space → 'Ġ', newline → 'Ċ', and the rest in byte order from
// U+0100.
func TestByteAlphabet(t *testing.T) {
	seen := map[rune]bool{}
	for b := 0; b < 256; b++ {
		r := byteToRune[b]
		if seen[r] {
			t.Fatalf("byte %#x maps to %q twice", b, r)
		}
		seen[r] = true
		if runeToByte[r] != byte(b) {
			t.Errorf("runeToByte[%q] = %#x, want %#x", r, runeToByte[r], b)
		}
	}
	for _, c := range []struct {
		b byte
		r rune
	}{{' ', 'Ġ'}, {'\n', 'Ċ'}, {0, 'Ā'}, {'!', '!'}, {0x7F, 'ġ'}, {0xAD, 'Ń'}, {0xA1, '¡'}, {0xFF, 'ÿ'}} {
		if byteToRune[c.b] != c.r {
			t.Errorf("byte %#x → %q, want %q", c.b, byteToRune[c.b], c.r)
		}
	}
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	enc := byteEncode(string(all))
	if utf8.RuneCountInString(enc) != 256 || byteDecode(enc) != string(all) {
		t.Errorf("byteDecode(byteEncode(0..255)) does not round-trip")
	}
}

// TestPreDetection: the pre_tokenizer sections of the real tokenizers map
// to their families through the table.
func TestPreDetection(t *testing.T) {
	for _, c := range []struct{ pattern, want string }{
		{llama3SplitJSON, "llama-bpe"},
		{llama3SplitRuntime, "llama-bpe"},
		{qwen2SplitJSON, "qwen2"},
	} {
		p, ok := preForPattern(c.pattern)
		if !ok || p.name != c.want {
			t.Errorf("preForPattern(%.30q…) = %v, want %s", c.pattern, p, c.want)
		}
	}
	if _, ok := preForPattern(`\w+`); ok {
		t.Error(`\w+ matched a family`)
	}
	for _, p := range preTokenizers {
		if _, err := p.compiledRegex(); err != nil {
			t.Errorf("%s: %v", p.name, err)
		}
	}
}
