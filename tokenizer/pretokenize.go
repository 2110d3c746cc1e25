package tokenizer

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
)

// preTokenizer describes one tokenizer.ggml.pre family of byte-level BPE
// tokenizers: how tokenizer.json spells its Split regex (detection, our rule
// in spec conversion.md §5.3 instead of llama.cpp's probe-text hash) and how
// the runtime splits text before BPE (the regex llama.cpp uses for that pre
// type in llama-vocab.cpp).
type preTokenizer struct {
	// name is the tokenizer.ggml.pre value.
	name string
	// patterns are the tokenizer.json pre_tokenizer Split regexes that
	// identify the family, exactly as the JSON holds them.
	patterns []string
	// byteLevelRegex marks the family a ByteLevel pre-tokenizer with
	// use_regex true (and no Split) stands for: the GPT-2 pattern.
	byteLevelRegex bool
	// regex is the pattern the runtime splits with.
	regex string
	// addBOS is llama.cpp's add_bos default for this pre type, used when the
	// GGUF has no tokenizer.ggml.add_bos_token.
	addBOS bool
	// ignoreMerges: a pre-token that is itself a vocabulary entry is emitted
	// whole without applying merges (HF BPE ignore_merges).
	ignoreMerges bool
}

// The split patterns. The Llama-3 pattern takes digits in runs of up to
// three; the Qwen2 one takes single digits. The runtime forms spell the
// case-insensitive contraction group with character classes, as llama.cpp
// does, so that (?i) Unicode case folding cannot match extra letters.
const (
	llama3SplitJSON    = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	llama3SplitRuntime = `(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	qwen2SplitJSON     = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	qwen2SplitRuntime  = `(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	gpt2SplitRuntime   = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`
)

// preTokenizers is the table of supported byte-level BPE families.
var preTokenizers = []preTokenizer{
	{name: "llama-bpe", patterns: []string{llama3SplitJSON, llama3SplitRuntime}, regex: llama3SplitRuntime, addBOS: true, ignoreMerges: true},
	{name: "qwen2", patterns: []string{qwen2SplitJSON, qwen2SplitRuntime}, regex: qwen2SplitRuntime},
	{name: "gpt-2", byteLevelRegex: true, regex: gpt2SplitRuntime},
}

// lookupPre returns the table entry for a tokenizer.ggml.pre name.
func lookupPre(name string) (*preTokenizer, bool) {
	for i := range preTokenizers {
		if preTokenizers[i].name == name {
			return &preTokenizers[i], true
		}
	}
	return nil, false
}

// preForPattern returns the family whose tokenizer.json Split regex is
// pattern.
func preForPattern(pattern string) (*preTokenizer, bool) {
	for i := range preTokenizers {
		for _, p := range preTokenizers[i].patterns {
			if p == pattern {
				return &preTokenizers[i], true
			}
		}
	}
	return nil, false
}

// supportedPres lists the pre names of the table, sorted, for error messages.
func supportedPres() string {
	names := make([]string, len(preTokenizers))
	for i, p := range preTokenizers {
		names[i] = p.name
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

var (
	compiledMu sync.Mutex
	compiled   = map[string]*regexp2.Regexp{}
)

// compiledRegex compiles (once) the runtime regex of p.
func (p *preTokenizer) compiledRegex() (*regexp2.Regexp, error) {
	compiledMu.Lock()
	defer compiledMu.Unlock()
	if re, ok := compiled[p.name]; ok {
		return re, nil
	}
	re, err := regexp2.Compile(p.regex, regexp2.None)
	if err != nil {
		return nil, fmt.Errorf("compile pre-tokenizer regex for pre %q: %w", p.name, err)
	}
	compiled[p.name] = re
	return re, nil
}

// splitText cuts text into pre-tokens with re, the way llama.cpp's
// unicode_regex_split does: every match is a piece, and text between matches
// (none for the table's patterns, which cover every character) is a piece of
// its own. The pieces are substrings of text, so invalid UTF-8 bytes survive
// unchanged (each invalid byte is matched as U+FFFD).
func splitText(re *regexp2.Regexp, text string) ([]string, error) {
	if text == "" {
		return nil, nil
	}
	runes := make([]rune, 0, len(text))
	offs := make([]int, 0, len(text)+1)
	for i := 0; i < len(text); {
		r, n := utf8.DecodeRuneInString(text[i:])
		runes = append(runes, r)
		offs = append(offs, i)
		i += n
	}
	offs = append(offs, len(text))

	var pieces []string
	last := 0 // rune index up to which text is emitted
	m, err := re.FindRunesMatch(runes)
	for ; err == nil && m != nil; m, err = re.FindNextMatch(m) {
		start, end := m.Index, m.Index+m.Length
		if m.Length == 0 {
			continue
		}
		if start > last {
			pieces = append(pieces, text[offs[last]:offs[start]])
		}
		pieces = append(pieces, text[offs[start]:offs[end]])
		last = end
	}
	if err != nil {
		return nil, fmt.Errorf("pre-tokenize: %w", err)
	}
	if last < len(runes) {
		pieces = append(pieces, text[offs[last]:])
	}
	return pieces, nil
}

// byteToRune is the GPT-2 byte-to-unicode alphabet: printable Latin-1 bytes
// map to themselves, the other 68 bytes to U+0100 upwards in byte order
// (GPT-2 encoder.py bytes_to_unicode; the space byte becomes 'Ġ' U+0120).
var byteToRune [256]rune

// runeToByte inverts byteToRune.
var runeToByte = map[rune]byte{}

// byteToken holds byteToRune[b] as a string, for building pre-tokens.
var byteToken [256]string

func init() {
	next := rune(256)
	for b := 0; b < 256; b++ {
		printable := (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF)
		if printable {
			byteToRune[b] = rune(b)
		} else {
			byteToRune[b] = next
			next++
		}
		runeToByte[byteToRune[b]] = byte(b)
		byteToken[b] = string(byteToRune[b])
	}
}

// byteEncode maps every byte of s to its GPT-2 alphabet character.
func byteEncode(s string) string {
	var sb strings.Builder
	sb.Grow(2 * len(s))
	for i := 0; i < len(s); i++ {
		sb.WriteString(byteToken[s[i]])
	}
	return sb.String()
}

// byteDecode inverts byteEncode. Characters outside the GPT-2 alphabet are
// copied as UTF-8 (llama.cpp llama_decode_text does the same for unknown
// code points).
func byteDecode(s string) string {
	out := make([]byte, 0, len(s))
	for _, r := range s {
		if b, ok := runeToByte[r]; ok {
			out = append(out, b)
		} else {
			out = utf8.AppendRune(out, r)
		}
	}
	return string(out)
}
