package tokenizer

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"unicode"
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
	// then are further patterns applied in order to every piece the previous
	// one produced (llama.cpp's regex_exprs lists of more than one entry,
	// unicode_regex_split): the Falcon pre types.
	then []string
	// addBOS is llama.cpp's add_bos default for this pre type, used when the
	// GGUF has no tokenizer.ggml.add_bos_token.
	addBOS bool
	// ignoreMerges: a pre-token that is itself a vocabulary entry is emitted
	// whole without applying merges (HF BPE ignore_merges).
	ignoreMerges bool
	// match, when set, is a hand-written matcher equivalent to regex (the
	// tests check it against regex); it returns the length in code points
	// of the piece at cps[i]. Entries without one split with regexp2.
	match func(cps []rune, i int) int
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
	{name: "llama-bpe", patterns: []string{llama3SplitJSON, llama3SplitRuntime}, regex: llama3SplitRuntime, addBOS: true, ignoreMerges: true,
		match: func(cps []rune, i int) int { return splitLlama3(cps, i, 3) }},
	{name: "qwen2", patterns: []string{qwen2SplitJSON, qwen2SplitRuntime}, regex: qwen2SplitRuntime,
		match: func(cps []rune, i int) int { return splitLlama3(cps, i, 1) }},
	{name: "gpt-2", byteLevelRegex: true, regex: gpt2SplitRuntime, match: splitGPT2},
	// falcon3 (Falcon3, llama.cpp) and falcon_e (Falcon-E, bitnet.cpp build B
	// 3rdparty/llama.cpp llama-vocab.cpp, from microsoft/BitNet PR #268):
	// the same three regexes, punctuation runs, the GPT-2 pattern without
	// the trailing \s+, single digits. Their tokenizer.json is a Sequence of
	// Punctuation, ByteLevel and Digits(individual_digits) (detectPre);
	// the two differ only in the vocabulary, so falcon_e is chosen with --pre.
	{name: "falcon3", regex: falconPunct, then: []string{falconWords, `[0-9]`}},
	{name: "falcon_e", regex: falconPunct, then: []string{falconWords, `[0-9]`}},
}

// The Falcon split patterns (llama.cpp llama-vocab.cpp, LLAMA_VOCAB_PRE_TYPE_FALCON*).
const (
	falconPunct = "[\\p{P}\\$\\+<=>\\^~\\|`]+"
	falconWords = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)`
)

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

// compiledThen compiles (once) the further patterns of p.
func (p *preTokenizer) compiledThen() ([]*regexp2.Regexp, error) {
	var out []*regexp2.Regexp
	for i, pat := range p.then {
		key := fmt.Sprintf("%s#%d", p.name, i+1)
		compiledMu.Lock()
		re, ok := compiled[key]
		compiledMu.Unlock()
		if !ok {
			var err error
			if re, err = regexp2.Compile(pat, regexp2.None); err != nil {
				return nil, fmt.Errorf("compile pre-tokenizer regex %d for pre %q: %w", i+1, p.name, err)
			}
			compiledMu.Lock()
			compiled[key] = re
			compiledMu.Unlock()
		}
		out = append(out, re)
	}
	return out, nil
}

// resplit applies re to every piece (splitText on each), as llama.cpp's
// unicode_regex_split applies each further regex to the previous offsets.
func resplit(re *regexp2.Regexp, pieces []string) ([]string, error) {
	var out []string
	for _, p := range pieces {
		sub, err := splitText(re, p)
		if err != nil {
			return nil, err
		}
		out = append(out, sub...)
	}
	return out, nil
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
	runes, offs := decodeRunes(text)

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

// byteEncodeAppend appends the GPT-2 alphabet form of s to dst (byteEncode
// without a new string per word).
func byteEncodeAppend(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		dst = append(dst, byteToken[s[i]]...)
	}
	return dst
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

// Character classes of the split patterns, on the Unicode categories Go's
// unicode package holds: \p{L} letters, \p{N} numbers, \s White_Space
// (the same set as .NET's and llama.cpp's \s).
func isL(r rune) bool {
	return r < utf8.RuneSelf && ('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z') || r >= utf8.RuneSelf && unicode.IsLetter(r)
}
func isN(r rune) bool {
	return r < utf8.RuneSelf && '0' <= r && r <= '9' || r >= utf8.RuneSelf && unicode.IsNumber(r)
}
func isS(r rune) bool     { return unicode.IsSpace(r) }
func isCRLF(r rune) bool  { return r == '\r' || r == '\n' }
func isOther(r rune) bool { return !isS(r) && !isL(r) && !isN(r) } // [^\s\p{L}\p{N}]

// decodeRunes returns the code points of text and their byte offsets
// (len(runes)+1 entries); an invalid byte is one U+FFFD of width 1.
func decodeRunes(text string) ([]rune, []int) {
	return decodeRunesAppend(make([]rune, 0, len(text)), make([]int, 0, len(text)+1), text)
}

// decodeRunesAppend is decodeRunes appending to runes and offs (reused
// buffers).
func decodeRunesAppend(runes []rune, offs []int, text string) ([]rune, []int) {
	for i := 0; i < len(text); {
		r, n := utf8.DecodeRuneInString(text[i:])
		runes = append(runes, r)
		offs = append(offs, i)
		i += n
	}
	return runes, append(offs, len(text))
}

// contraction returns the length of an English contraction at cps[i:]
// ('s 't 're 've 'm 'll 'd), 0 if there is none. foldCase accepts upper
// case letters too (the Llama-3/Qwen2 (?i:…) group).
func contraction(cps []rune, i int, foldCase bool) int {
	if cps[i] != '\'' || i+1 >= len(cps) {
		return 0
	}
	lower := func(r rune) rune {
		if foldCase && 'A' <= r && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}
	switch lower(cps[i+1]) {
	case 's', 't', 'm', 'd':
		return 2
	}
	if i+2 < len(cps) {
		switch string([]rune{lower(cps[i+1]), lower(cps[i+2])}) {
		case "re", "ve", "ll":
			return 3
		}
	}
	return 0
}

// whitespaceTail applies \s+(?!\S)|\s+ at cps[i], a whitespace character:
// the run of whitespace up to the last one before a non-space (which then
// starts the next piece), or the whole run when it ends the text or is one
// character long.
func whitespaceTail(cps []rune, i int) int {
	j := i
	for j < len(cps) && isS(cps[j]) {
		j++
	}
	if j < len(cps) && j-i >= 2 {
		return j - 1 - i
	}
	return j - i
}

// splitLlama3 is the hand-written matcher of the Llama-3 / Qwen2 split
// pattern
//
//	(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,maxDigits}|
//	 ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// (maxDigits 3 for llama-bpe, 1 for qwen2), as llama.cpp's
// unicode_regex_split_custom_llama3 does it: linear time, no allocation per
// piece. It returns the length in code points of the piece at cps[i].
func splitLlama3(cps []rune, i, maxDigits int) int {
	n := len(cps)
	r := cps[i]
	if k := contraction(cps, i, true); k > 0 {
		return k
	}
	// [^\r\n\p{L}\p{N}]?\p{L}+
	if j := i; isL(r) || (!isCRLF(r) && !isN(r) && i+1 < n && isL(cps[i+1])) {
		if !isL(r) {
			j++
		}
		for j < n && isL(cps[j]) {
			j++
		}
		return j - i
	}
	// \p{N}{1,maxDigits}
	if isN(r) {
		j := i
		for j < n && j-i < maxDigits && isN(cps[j]) {
			j++
		}
		return j - i
	}
	// ' ?[^\s\p{L}\p{N}]+[\r\n]*'
	if j := i; isOther(r) || (r == ' ' && i+1 < n && isOther(cps[i+1])) {
		if r == ' ' {
			j++
		}
		for j < n && isOther(cps[j]) {
			j++
		}
		for j < n && isCRLF(cps[j]) {
			j++
		}
		return j - i
	}
	// \s*[\r\n]+: up to and including the last CR/LF of the whitespace run.
	last := -1
	for j := i; j < n && isS(cps[j]); j++ {
		if isCRLF(cps[j]) {
			last = j
		}
	}
	if last >= 0 {
		return last + 1 - i
	}
	return whitespaceTail(cps, i)
}

// splitGPT2 matches the GPT-2 pattern
//
//	's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//
// at cps[i] and returns the piece length in code points.
func splitGPT2(cps []rune, i int) int {
	n := len(cps)
	if k := contraction(cps, i, false); k > 0 {
		return k
	}
	j := i
	if cps[j] == ' ' && j+1 < n && !isS(cps[j+1]) {
		j++
	}
	for _, class := range []func(rune) bool{isL, isN, isOther} {
		if class(cps[j]) {
			for j < n && class(cps[j]) {
				j++
			}
			return j - i
		}
	}
	return whitespaceTail(cps, i)
}

// splitWith cuts text into pieces with a hand-written matcher that returns
// the code-point length of the piece at each position.
func splitWith(text string, match func(cps []rune, i int) int) []string {
	if text == "" {
		return nil
	}
	cps, offs := decodeRunes(text)
	var pieces []string
	for i := 0; i < len(cps); {
		k := match(cps, i)
		if k <= 0 { // cannot happen: every character starts some alternative
			k = 1
		}
		pieces = append(pieces, text[offs[i]:offs[i+k]])
		i += k
	}
	return pieces
}
