package tokenizer

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"
)

func init() {
	builders["llama"] = func(v *Vocab) (Tokenizer, error) { return NewSPM(v) }
}

// spmSpace is U+2581 LOWER ONE EIGHTH BLOCK, which SentencePiece uses for
// a space inside pieces.
const spmSpace = "\u2581"

// spmDefaults are the special ids and flags llama.cpp's llm_load_vocab
// assumes for a "llama" (SPM) vocabulary when the GGUF has no key for them.
var spmDefaults = struct {
	bos, eos, unk                  int32
	addBOS, addEOS, addSpacePrefix bool
}{bos: 1, eos: 2, unk: 0, addBOS: true, addEOS: false, addSpacePrefix: true}

// SPM is llama.cpp's "llama" tokenizer (llm_tokenizer_spm of bitnet.cpp's
// llama.cpp fork): SentencePiece-BPE-style greedy bigram merging by piece
// score over UTF-8 characters, with <0xXX> byte fallback. It is safe for
// concurrent use.
type SPM struct {
	vocab *Vocab
	// toID maps token text to id; on duplicate texts the highest id wins,
	// as llama.cpp fills token_to_id in id order.
	toID  map[string]int32
	score []float32
	// byteTok[b] is the id for byte b under byte fallback, or NoToken.
	byteTok [256]int32
	// special lists ids whose text is matched before SPM (CONTROL,
	// USER_DEFINED, UNKNOWN), longest text first (llama.cpp
	// cache_special_tokens).
	special []int32
	// beforeSpace[b] is true when some token holds byte b right before an
	// inner U+2581; a fragment is never cut for encoding between such a
	// byte and a space (see spmCut).
	beforeSpace [256]bool

	bos, eos, unk                  int32
	addBOS, addEOS, addSpacePrefix bool
}

var _ Tokenizer = (*SPM)(nil)

// NewSPM builds the "llama" tokenizer for v. Special ids and the add_bos /
// add_eos / add_space_prefix flags that v leaves unset take llama.cpp's SPM
// defaults (BOS 1, EOS 2, UNK 0, add BOS, no EOS, add space prefix). An
// empty vocabulary, or Scores/Types whose length differs from Tokens, is an
// error.
func NewSPM(v *Vocab) (*SPM, error) {
	n := len(v.Tokens)
	if n == 0 {
		return nil, fmt.Errorf("llama tokenizer: the vocabulary has no tokens")
	}
	if v.Scores != nil && len(v.Scores) != n {
		return nil, fmt.Errorf("llama tokenizer: %d scores for %d tokens", len(v.Scores), n)
	}
	if v.Types != nil && len(v.Types) != n {
		return nil, fmt.Errorf("llama tokenizer: %d token types for %d tokens", len(v.Types), n)
	}
	t := &SPM{vocab: v, toID: make(map[string]int32, n), score: v.Scores}
	if t.score == nil {
		t.score = make([]float32, n)
	}
	for i, s := range v.Tokens {
		t.toID[s] = int32(i)
		for k := 1; k+len(spmSpace) <= len(s); k++ {
			if s[k:k+len(spmSpace)] == spmSpace {
				t.beforeSpace[s[k-1]] = true
			}
		}
	}
	for b := range t.byteTok {
		t.byteTok[b] = NoToken
		if id, ok := t.toID[fmt.Sprintf("<0x%02X>", b)]; ok {
			t.byteTok[b] = id
		} else if id, ok := t.toID[string([]byte{byte(b)})]; ok {
			t.byteTok[b] = id
		}
	}
	for i := range v.Tokens {
		switch t.typeOf(int32(i)) {
		case TypeControl, TypeUserDefined, TypeUnknown:
			if v.Tokens[i] != "" {
				t.special = append(t.special, int32(i))
			}
		}
	}
	sort.SliceStable(t.special, func(a, b int) bool {
		return len(v.Tokens[t.special[a]]) > len(v.Tokens[t.special[b]])
	})
	pick := func(id, def int32) int32 {
		if id >= 0 && int(id) < n {
			return id
		}
		if int(def) < n {
			return def
		}
		return NoToken
	}
	t.bos, t.eos, t.unk = pick(v.BOS, spmDefaults.bos), pick(v.EOS, spmDefaults.eos), pick(v.UNK, spmDefaults.unk)
	flag := func(p *bool, def bool) bool {
		if p != nil {
			return *p
		}
		return def
	}
	t.addBOS = v.AddsBOS()
	t.addEOS = flag(v.AddEOS, spmDefaults.addEOS)
	t.addSpacePrefix = flag(v.AddSpacePrefix, spmDefaults.addSpacePrefix)
	return t, nil
}

// Vocab returns the vocabulary t was built from.
func (t *SPM) Vocab() *Vocab { return t.vocab }

// AddsBOS reports whether Encode with addSpecial adds BOS (Vocab.AddsBOS).
func (t *SPM) AddsBOS() bool { return t.addBOS }

func (t *SPM) typeOf(id int32) int32 {
	if t.vocab.Types == nil {
		return TypeNormal
	}
	return t.vocab.Types[id]
}

// partition splits text around the text of special tokens, longest token
// first, leftmost occurrences first, as llama.cpp tokenizer_st_partition
// does. Without parseSpecial only USER_DEFINED tokens are matched.
func (t *SPM) partition(text string, parseSpecial bool) []fragment {
	if text == "" {
		return nil // llama.cpp adds no fragment for empty text
	}
	frags := []fragment{{text: text, id: NoToken}}
	for _, id := range t.special {
		if !parseSpecial && t.typeOf(id) != TypeUserDefined {
			continue
		}
		tok := t.vocab.Tokens[id]
		frags = splitAt(frags, tok, id)
	}
	return frags
}

// Encode tokenizes text as llama.cpp's llama_tokenize does for an SPM
// vocabulary. With addSpecial, BOS is prepended when add_bos is on and EOS
// appended when add_eos is on. The text is cut around special-token text
// (CONTROL and UNKNOWN only with parseSpecial; USER_DEFINED always); each
// text fragment that follows the start or a special token gets a leading
// space when add_space_prefix is on (llama.cpp's is_prev_special rule), has
// its spaces replaced by U+2581 and is merged by bigram score. Characters
// with no token come out as <0xXX> byte tokens, else as UNK. Invalid UTF-8 is
// handled byte-wise as llama.cpp does (a lead byte takes the length its
// high bits say). The error is non-nil only when a needed BOS/EOS/UNK id
// does not exist in the vocabulary.
func (t *SPM) Encode(text string, addSpecial, parseSpecial bool) ([]int32, error) {
	// About one id per four bytes of text, so long inputs rarely regrow.
	out := make([]int32, 0, len(text)/4+2)
	if addSpecial && t.addBOS {
		if t.bos == NoToken {
			return nil, fmt.Errorf("llama tokenizer: add_bos is set but there is no BOS token")
		}
		out = append(out, t.bos)
	}
	prevSpecial := true
	var sc spmScratch
	for _, f := range t.partition(text, parseSpecial) {
		if f.id != NoToken {
			out = append(out, f.id)
			prevSpecial = true
			continue
		}
		// The fragment is encoded in pieces of about spmChunkBytes cut
		// where no token can span (spmCut), each escaped into the same
		// buffer, so scratch memory does not grow with the text.
		prefix := t.addSpacePrefix && prevSpecial
		for start := 0; start < len(f.text); {
			end := t.spmCut(f.text, start+spmChunkBytes)
			chunk := f.text[start:end]
			sc.esc = slices.Grow(sc.esc[:0], len(chunk)+2*strings.Count(chunk, " ")+len(spmSpace))
			if prefix && start == 0 {
				sc.esc = append(sc.esc, spmSpace...)
			}
			sc.esc = spmEscape(sc.esc, chunk)
			var err error
			if out, err = t.encodeFragment(sc.esc, out, &sc); err != nil {
				return nil, err
			}
			start = end
		}
		prevSpecial = false
	}
	if addSpecial && t.addEOS {
		if t.eos == NoToken {
			return nil, fmt.Errorf("llama tokenizer: add_eos is set but there is no EOS token")
		}
		out = append(out, t.eos)
	}
	return out, nil
}

// spmChunkBytes is the input length Encode aims to encode at a time (the
// pieces are cut only where it cannot change the result; see spmCut). A
// variable so tests can cut at every possible place.
var spmChunkBytes = 16 << 10

// spmCut returns the first place p >= from (or len(text)) where text can be
// cut without changing the tokens: text[p] is a space, the three bytes
// before it are ASCII (so, after escaping, no malformed UTF-8 lead byte
// reaches across p and p starts a character of the escaped text), and no
// token holds text[p-1] followed by U+2581. Then no token spans p, so no
// bigram merge crosses it; merges on each side happen in the same relative
// order (score, then leftmost), and encoding the two sides separately gives
// the same ids as encoding them together.
func (t *SPM) spmCut(text string, from int) int {
	for p := max(from, 3); p < len(text); p++ {
		q := strings.IndexByte(text[p:], ' ')
		if q < 0 {
			break
		}
		p += q
		a, b, c := text[p-3], text[p-2], text[p-1]
		if a < utf8.RuneSelf && b < utf8.RuneSelf && c < utf8.RuneSelf && c != ' ' && !t.beforeSpace[c] {
			return p
		}
	}
	return len(text)
}

// spmEscape appends s to dst with every space replaced by U+2581.
func spmEscape(dst []byte, s string) []byte {
	for {
		i := strings.IndexByte(s, ' ')
		if i < 0 {
			return append(dst, s...)
		}
		dst = append(append(dst, s[:i]...), spmSpace...)
		s = s[i+1:]
	}
}

// spmScratch is the memory reused across the pieces of one Encode: the
// escaped text, the symbol list and the bigram queue.
type spmScratch struct {
	esc  []byte
	syms []spmSymbol
	q    binaryHeap[spmBigram]
}

// spmSymbol is one node of the doubly linked symbol list of
// llm_tokenizer_spm: text[start:start+n] of the escaped fragment. Fields
// are int32 to keep the list at 16 bytes per input character.
type spmSymbol struct {
	start, n   int32
	prev, next int32
}

// spmBigram is a candidate merge of symbols left and right into a token of
// the given score; size is the merged byte length, used to detect stale
// entries.
type spmBigram struct {
	left, right int32
	score       float32
	size        int32
}

// before orders SentencePiece merge candidates: highest score first, ties to
// the leftmost pair (the comparator of llama.cpp's llm_bigram_spm).
func (b spmBigram) before(o spmBigram) bool {
	if b.score != o.score {
		return b.score > o.score
	}
	return b.left < o.left
}

// spmUTF8Len is llama.cpp's utf8_len: the sequence length a lead byte
// announces (1 for ASCII and stray continuation bytes).
func spmUTF8Len(b byte) int {
	return [16]int{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4}[b>>4]
}

// encodeFragment runs llm_tokenizer_spm::tokenize on one escaped fragment
// and appends the ids to out, using sc's slices as scratch.
func (t *SPM) encodeFragment(text []byte, out []int32, sc *spmScratch) ([]int32, error) {
	if len(text) == 0 {
		return out, nil
	}
	if len(text) > math.MaxInt32 {
		return nil, fmt.Errorf("llama tokenizer: a text fragment of %d bytes is longer than 2 GiB; split the input", len(text))
	}
	if cap(sc.syms) < len(text) {
		// At most one symbol (and one queued bigram) per byte; sized once
		// per Encode for chunks of spmChunkBytes.
		sc.syms = make([]spmSymbol, 0, len(text))
		sc.q = make(binaryHeap[spmBigram], 0, len(text))
	}
	syms := sc.syms[:0]
	for off := 0; off < len(text); {
		n := min(spmUTF8Len(text[off]), len(text)-off)
		idx := int32(len(syms))
		next := idx + 1
		if off+n == len(text) {
			next = -1
		}
		syms = append(syms, spmSymbol{start: int32(off), n: int32(n), prev: idx - 1, next: next})
		off += n
	}
	sc.syms = syms
	sym := func(i int32) []byte { return text[syms[i].start : syms[i].start+syms[i].n] }
	q := sc.q[:0]
	defer func() { sc.q = q[:0] }()
	tryAdd := func(left, right int32) {
		if left < 0 || right < 0 {
			return
		}
		s := text[syms[left].start : syms[right].start+syms[right].n]
		id, ok := t.toID[string(s)]
		if !ok {
			return
		}
		q.push(spmBigram{left: left, right: right, score: t.score[id], size: int32(len(s))})
	}
	for i := int32(1); i < int32(len(syms)); i++ {
		tryAdd(i-1, i)
	}
	for len(q) > 0 {
		b := q.pop()
		l, r := &syms[b.left], &syms[b.right]
		if l.n == 0 || r.n == 0 || l.n+r.n != b.size {
			continue // one side was merged away since this pair was queued
		}
		l.n += r.n
		r.n = 0
		l.next = r.next
		if r.next >= 0 {
			syms[r.next].prev = b.left
		}
		tryAdd(l.prev, b.left)
		tryAdd(b.left, l.next)
	}
	for i := int32(0); i != -1; i = syms[i].next {
		s := sym(i)
		if id, ok := t.toID[string(s)]; ok {
			out = append(out, id)
			continue
		}
		// Byte fallback (llama_byte_to_token for SPM), then UNK.
		for j := 0; j < len(s); j++ {
			id := t.byteTok[s[j]]
			if id == NoToken {
				id = t.unk
			}
			if id == NoToken {
				return nil, fmt.Errorf("llama tokenizer: byte 0x%02X has no <0x%02X> token and there is no UNK token", s[j], s[j])
			}
			out = append(out, id)
		}
	}
	return out, nil
}

// Piece returns the text of token id as llama.cpp's llama_token_to_piece
// renders it for an SPM vocabulary: NORMAL tokens with U+2581 turned into
// spaces, BYTE tokens as their single byte (not necessarily valid UTF-8),
// USER_DEFINED tokens as their text; CONTROL and UNKNOWN tokens as their
// text when special is true and as "" otherwise; UNUSED and other types as
// "". An id outside the vocabulary is an error naming it.
func (t *SPM) Piece(id int32, special bool) (string, error) {
	if id < 0 || int(id) >= len(t.vocab.Tokens) {
		return "", fmt.Errorf("llama tokenizer: token id %d is outside the vocabulary of %d tokens", id, len(t.vocab.Tokens))
	}
	text := t.vocab.Tokens[id]
	switch t.typeOf(id) {
	case TypeNormal:
		return strings.ReplaceAll(text, spmSpace, " "), nil
	case TypeByte:
		if b, ok := spmParseByteToken(text); ok {
			return string([]byte{b}), nil
		}
		return text, nil
	case TypeUserDefined:
		// SentencePiece vocabularies spell spaces as U+2581 in every token,
		// user-defined ones included (Gemma3's whitespace-run tokens "▁▁",
		// …), so they decode to spaces too; llama.cpp copies them verbatim,
		// which does not give the text back.
		return strings.ReplaceAll(text, spmSpace, " "), nil
	case TypeControl, TypeUnknown:
		if special {
			return text, nil
		}
	}
	return "", nil
}

// spmParseByteToken decodes a "<0xXX>" token text.
func spmParseByteToken(s string) (byte, bool) {
	if len(s) != 6 || s[:3] != "<0x" || s[5] != '>' {
		return 0, false
	}
	var b byte
	for _, c := range []byte(s[3:5]) {
		switch {
		case c >= '0' && c <= '9':
			b = b<<4 | (c - '0')
		case c >= 'A' && c <= 'F':
			b = b<<4 | (c - 'A' + 10)
		case c >= 'a' && c <= 'f':
			b = b<<4 | (c - 'a' + 10)
		default:
			return 0, false
		}
	}
	return b, true
}

// Decode concatenates the pieces of ids (Piece with special false: control
// tokens such as BOS render as nothing) and, when add_space_prefix is on,
// removes one leading space from the first piece that renders any text —
// the space Encode's prefix added — so Decode(Encode(s)) == s for text
// without special-token text. Byte tokens are joined as raw bytes. An id
// outside the vocabulary is an error naming it.
func (t *SPM) Decode(ids []int32) (string, error) {
	var sb strings.Builder
	strip := t.addSpacePrefix
	for _, id := range ids {
		p, err := t.Piece(id, false)
		if err != nil {
			return "", err
		}
		if strip && p != "" {
			p = strings.TrimPrefix(p, " ")
			strip = false
		}
		sb.WriteString(p)
	}
	return sb.String(), nil
}
