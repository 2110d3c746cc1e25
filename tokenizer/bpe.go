package tokenizer

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
)

func init() {
	builders["gpt2"] = func(v *Vocab) (Tokenizer, error) { return NewBPE(v) }
}

// BPE is the byte-level BPE ("gpt2") tokenizer of llama.cpp
// (llm_tokenizer_bpe): special tokens are split off first, the rest is cut
// into pre-tokens by the regex of the vocabulary's pre type, each pre-token's
// bytes are mapped to the GPT-2 byte alphabet and merged by merge rank,
// lowest rank first (leftmost first on ties). A BPE is read-only after
// NewBPE and safe for concurrent use.
type BPE struct {
	v     *Vocab
	pre   *preTokenizer
	re    *regexp2.Regexp   // nil when pre has a hand-written matcher
	then  []*regexp2.Regexp // pre.then, compiled
	ids   map[string]int32
	ranks map[[2]int32]int32 // (left id, right id) → merge rank
	// specials are the tokens matched as a whole in raw text, longest
	// first: USER_DEFINED always, CONTROL and UNKNOWN with parseSpecial.
	specials []int32
	addBOS   bool
	addEOS   bool
}

var _ Tokenizer = (*BPE)(nil)

// NewBPE builds the byte-level BPE tokenizer for a "gpt2" vocabulary. It
// returns an error when v.Model is not "gpt2", v.Pre is not a pre type the
// runtime knows (llama-bpe, qwen2, gpt-2), Tokens and Types differ in length,
// BOS/EOS ids are outside the vocabulary, or a merge is not two vocabulary
// tokens whose concatenation is one (HF tokenizers rejects such merges too).
// Add-BOS defaults to llama.cpp's value for the pre type (true for
// llama-bpe) when v.AddBOS is nil.
func NewBPE(v *Vocab) (*BPE, error) {
	if v.Model != "gpt2" {
		return nil, fmt.Errorf("byte-level BPE needs tokenizer.ggml.model gpt2, got %q", v.Model)
	}
	pre, ok := lookupPre(v.Pre)
	if !ok {
		return nil, fmt.Errorf("tokenizer.ggml.pre %q is not supported by the runtime (supported: %s)", v.Pre, supportedPres())
	}
	if len(v.Types) != len(v.Tokens) {
		return nil, fmt.Errorf("vocabulary has %d tokens but %d token types", len(v.Tokens), len(v.Types))
	}
	for _, sp := range []struct {
		name string
		id   int32
	}{{"BOS", v.BOS}, {"EOS", v.EOS}} {
		if sp.id < NoToken || sp.id >= int32(len(v.Tokens)) {
			return nil, fmt.Errorf("%s id %d is outside the vocabulary (0..%d)", sp.name, sp.id, len(v.Tokens)-1)
		}
	}
	t := &BPE{v: v, pre: pre, ids: make(map[string]int32, len(v.Tokens))}
	if pre.match == nil {
		re, err := pre.compiledRegex()
		if err != nil {
			return nil, err
		}
		t.re = re
		if t.then, err = pre.compiledThen(); err != nil {
			return nil, err
		}
	}
	for id := len(v.Tokens) - 1; id >= 0; id-- {
		t.ids[v.Tokens[id]] = int32(id)
	}
	t.ranks = make(map[[2]int32]int32, len(v.Merges))
	for r, m := range v.Merges {
		// llama.cpp splits at the first space after the first byte, so a
		// left part may itself start with a space.
		sp := strings.IndexByte(m[min(1, len(m)):], ' ')
		if sp < 0 {
			return nil, fmt.Errorf("merge %d %q has no space between its parts", r, m)
		}
		sp += min(1, len(m))
		a, b := m[:sp], m[sp+1:]
		ia, oka := t.ids[a]
		ib, okb := t.ids[b]
		_, okab := t.ids[a+b]
		if !oka || !okb || !okab {
			return nil, fmt.Errorf("merge %d %q: parts or result are not in the vocabulary", r, m)
		}
		if _, dup := t.ranks[[2]int32{ia, ib}]; !dup {
			t.ranks[[2]int32{ia, ib}] = int32(r)
		}
	}
	for id, typ := range v.Types {
		if (typ == TypeControl || typ == TypeUserDefined || typ == TypeUnknown) && v.Tokens[id] != "" {
			t.specials = append(t.specials, int32(id))
		}
	}
	sort.SliceStable(t.specials, func(a, b int) bool {
		return len(v.Tokens[t.specials[a]]) > len(v.Tokens[t.specials[b]])
	})
	t.addBOS = v.AddsBOS()
	t.addEOS = v.AddEOS != nil && *v.AddEOS
	return t, nil
}

// Vocab returns the vocabulary t was built from.
func (t *BPE) Vocab() *Vocab { return t.v }

// AddsBOS reports whether Encode with addSpecial adds BOS (Vocab.AddsBOS).
func (t *BPE) AddsBOS() bool { return t.addBOS }

// partition splits text at special tokens, longest first (llama.cpp
// tokenizer_st_partition).
func (t *BPE) partition(text string, parseSpecial bool) []fragment {
	frags := []fragment{{text: text, id: NoToken}}
	for _, id := range t.specials {
		typ := t.v.Types[id]
		if !parseSpecial && (typ == TypeControl || typ == TypeUnknown) {
			continue
		}
		tok := t.v.Tokens[id]
		frags = splitAt(frags, tok, id)
	}
	return frags
}

// Encode tokenizes text (see Tokenizer). With addSpecial, BOS is prepended
// when add_bos is on and EOS appended when add_eos is on; a missing BOS/EOS
// id is then an error. parseSpecial lets CONTROL tokens' text map to their
// ids; USER_DEFINED tokens are always matched whole, as in llama.cpp.
// Invalid UTF-8 is tokenized byte for byte, so Decode restores it exactly
// (llama.cpp substitutes U+FFFD for each invalid byte instead).
func (t *BPE) Encode(text string, addSpecial, parseSpecial bool) ([]int32, error) {
	// About one id per four bytes of text, so long inputs rarely regrow.
	out := make([]int32, 0, len(text)/4+2)
	if addSpecial && t.addBOS {
		if t.v.BOS == NoToken {
			return nil, fmt.Errorf("add_bos is set but the vocabulary has no BOS token")
		}
		out = append(out, t.v.BOS)
	}
	var sc bpeScratch
	for _, f := range t.partition(text, parseSpecial) {
		if f.id != NoToken {
			out = append(out, f.id)
			continue
		}
		if t.pre.match == nil {
			words, err := splitText(t.re, f.text)
			for _, re := range t.then {
				if err == nil {
					words, err = resplit(re, words)
				}
			}
			if err != nil {
				return nil, err
			}
			for _, w := range words {
				if out, err = t.encodeWord(out, byteEncodeAppend(sc.word[:0], w), &sc); err != nil {
					return nil, err
				}
			}
			continue
		}
		// Hand-written matchers: the fragment is split in pieces of about
		// bpeChunkBytes at places that are always pre-token boundaries
		// (bpeCut), reusing the code point and symbol buffers, so scratch
		// memory does not grow with the text.
		for start := 0; start < len(f.text); {
			end := bpeCut(f.text, start+bpeChunkBytes)
			var err error
			sc.cps, sc.offs = decodeRunesAppend(sc.cps[:0], sc.offs[:0], f.text[start:end])
			chunk := f.text[start:end]
			for i := 0; i < len(sc.cps); {
				k := max(t.pre.match(sc.cps, i), 1)
				sc.word = byteEncodeAppend(sc.word[:0], chunk[sc.offs[i]:sc.offs[i+k]])
				if out, err = t.encodeWord(out, sc.word, &sc); err != nil {
					return nil, err
				}
				i += k
			}
			start = end
		}
	}
	if addSpecial && t.addEOS {
		if t.v.EOS == NoToken {
			return nil, fmt.Errorf("add_eos is set but the vocabulary has no EOS token")
		}
		out = append(out, t.v.EOS)
	}
	return out, nil
}

// bpeChunkBytes is the input length Encode aims to pre-tokenize at a time
// (cut only at places bpeCut proves to be pre-token boundaries). A variable
// so tests can cut at every possible place.
var bpeChunkBytes = 16 << 10

// bpeCut returns the first place p >= from (or len(text)) where text[p] is
// a space and text[p-1] an ASCII byte that is not whitespace. Every split
// pattern of the table (Llama-3, Qwen2, GPT-2) starts a pre-token there:
// the only alternatives that take a space after their first character are
// the whitespace-only ones (\s*[\r\n]+, \s+(?!\S), \s+), which cannot
// contain text[p-1], and the ' ?…[\r\n]*' tail takes only CR/LF. The piece
// ending at p-1 also ends the same way when the text ends at p (each
// alternative stops at the space exactly as at the end), and matching only
// looks forward, so pre-tokenizing the two sides separately gives the same
// pieces. Since text[p-1] is ASCII, the code points on both sides decode the
// same way too.
func bpeCut(text string, from int) int {
	for p := max(from, 1); p < len(text); p++ {
		q := strings.IndexByte(text[p:], ' ')
		if q < 0 {
			break
		}
		p += q
		if c := text[p-1]; c < utf8.RuneSelf && !isS(rune(c)) {
			return p
		}
	}
	return len(text)
}

// bpeScratch is the memory reused across the pre-tokens of one Encode: the
// code points and byte offsets of the current piece of text, the
// byte-encoded word, its symbols and the bigram queue.
type bpeScratch struct {
	cps  []rune
	offs []int
	word []byte
	syms []bpeSymbol
	q    binaryHeap[bpeBigram]
}

// bpeSymbol is a piece word[start:end] of a word during merging, in a
// doubly linked list; merged-away symbols have start == end.
type bpeSymbol struct {
	start, end int
	id         int32 // NoToken when the piece is not a token
	prev, next int
}

// bpeBigram is a candidate merge of symbols left and right.
type bpeBigram struct {
	left, right int
	rank        int32
	size        int // combined byte length when queued, to detect stale entries
}

// before orders BPE merge candidates: lowest rank first, then leftmost.
func (b bpeBigram) before(o bpeBigram) bool {
	if b.rank != o.rank {
		return b.rank < o.rank
	}
	return b.left < o.left
}

// encodeWord appends the ids of one byte-encoded pre-token (llama.cpp
// llm_tokenizer_bpe_session::tokenize for one word), using sc's symbol list
// and queue as scratch.
func (t *BPE) encodeWord(out []int32, word []byte, sc *bpeScratch) ([]int32, error) {
	if len(word) == 0 {
		return out, nil
	}
	if t.pre.ignoreMerges {
		if id, ok := t.ids[string(word)]; ok {
			return append(out, id), nil
		}
	}
	if cap(sc.syms) < len(word)/2+1 {
		sc.syms = make([]bpeSymbol, 0, max(len(word)/2+1, 64))
		sc.q = make(binaryHeap[bpeBigram], 0, cap(sc.syms))
	}
	syms := sc.syms[:0]
	for i := 0; i < len(word); {
		_, n := utf8.DecodeRune(word[i:])
		id, ok := t.ids[string(word[i:i+n])]
		if !ok {
			id = NoToken
		}
		syms = append(syms, bpeSymbol{start: i, end: i + n, id: id, prev: len(syms) - 1, next: len(syms) + 1})
		i += n
	}
	syms[len(syms)-1].next = -1
	sc.syms = syms

	q := sc.q[:0]
	defer func() { sc.q = q[:0] }()
	tryAdd := func(left, right int) {
		if left < 0 || right < 0 {
			return
		}
		l, r := syms[left], syms[right]
		if l.id == NoToken || r.id == NoToken {
			return
		}
		if rank, ok := t.ranks[[2]int32{l.id, r.id}]; ok {
			q.push(bpeBigram{left: left, right: right, rank: rank, size: r.end - l.start})
		}
	}
	for i := 0; i+1 < len(syms); i++ {
		tryAdd(i, i+1)
	}
	for len(q) > 0 {
		b := q.pop()
		l, r := &syms[b.left], &syms[b.right]
		// Skip stale candidates: a side was merged away or grew.
		if l.start == l.end || r.start == r.end || l.next != b.right || r.end-l.start != b.size {
			continue
		}
		l.end = r.end
		l.id = t.ids[string(word[l.start:l.end])] // a merge result is always a token (checked in NewBPE)
		r.start = r.end
		l.next = r.next
		if r.next >= 0 {
			syms[r.next].prev = b.left
		}
		tryAdd(l.prev, b.left)
		tryAdd(b.left, l.next)
	}
	for i := 0; i >= 0 && i < len(syms); i = syms[i].next {
		s := syms[i]
		if s.id != NoToken {
			out = append(out, s.id)
			continue
		}
		// Not a token: fall back to one token per byte character.
		for _, r := range string(word[s.start:s.end]) {
			id, ok := t.ids[string(r)]
			if !ok {
				return nil, fmt.Errorf("byte %#02x has no token in the vocabulary (its byte-level alphabet is incomplete)", runeToByte[r])
			}
			out = append(out, id)
		}
	}
	return out, nil
}

// Decode concatenates the text of ids: NORMAL tokens are mapped back from
// the GPT-2 byte alphabet to bytes, CONTROL and USER_DEFINED tokens give
// their text as is, UNUSED/BYTE/UNKNOWN tokens give nothing (llama.cpp
// llama_token_to_piece with special rendering on). An id outside the
// vocabulary is an error naming it.
func (t *BPE) Decode(ids []int32) (string, error) {
	var sb strings.Builder
	for _, id := range ids {
		if id < 0 || int(id) >= len(t.v.Tokens) {
			return "", fmt.Errorf("token id %d is outside the vocabulary (0..%d)", id, len(t.v.Tokens)-1)
		}
		switch t.v.Types[id] {
		case TypeNormal:
			sb.WriteString(byteDecode(t.v.Tokens[id]))
		case TypeControl, TypeUserDefined:
			sb.WriteString(t.v.Tokens[id])
		}
	}
	return sb.String(), nil
}
