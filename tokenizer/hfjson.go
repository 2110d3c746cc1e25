package tokenizer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/bitnet-convert/bitnet-convert/internal/fsutil"
)

// JSONOptions controls LoadTokenizerJSON.
type JSONOptions struct {
	// VocabSize is the model's vocab_size (config.json): the token list is
	// padded or trimmed to it (see the reconcile rules on LoadTokenizerJSONFS).
	// 0 keeps the size tokenizer.json implies.
	VocabSize int
	// Pre overrides tokenizer.ggml.pre for byte-level BPE tokenizers (the
	// --pre flag); "" detects it from the pre_tokenizer section.
	Pre string
}

// ErrUnknownPreTokenizer is returned (wrapped) when a byte-level BPE
// tokenizer.json has a pre-tokenizer regex that is not in the table of known
// families and JSONOptions.Pre is empty.
var ErrUnknownPreTokenizer = errors.New("unknown pre-tokenizer")

// ErrUnsupportedTokenizerJSON is returned (wrapped) for a tokenizer.json whose
// model is not BPE (Unigram, WordPiece, …) or that is neither byte-level nor
// SentencePiece-style.
var ErrUnsupportedTokenizerJSON = errors.New("unsupported tokenizer.json")

// hfMaxVocabSize bounds token ids and vocab_size (16 Mi tokens; real
// vocabularies stay below 300 Ki) so that bad input cannot make us allocate
// without limit.
const hfMaxVocabSize = 1 << 24

// Scores of the SentencePiece-style path (spec conversion.md §5.3, gemma3
// rules).
const (
	hfScoreAdded = -1000
	hfScorePad   = -10000
)

// LoadTokenizerJSON reads dir/tokenizer.json (plus tokenizer_config.json,
// special_tokens_map.json and config.json when present) and returns the GGUF
// vocabulary and warnings for the user. It is LoadTokenizerJSONFS on
// os.DirFS(dir).
func LoadTokenizerJSON(dir string, opts JSONOptions) (*Vocab, []string, error) {
	return LoadTokenizerJSONFS(os.DirFS(dir), opts)
}

// LoadTokenizerJSONFS reads tokenizer.json from the root of fsys and builds
// the GGUF vocabulary (spec conversion.md §5.3):
//
//   - Byte-level BPE (a ByteLevel pre-tokenizer or decoder: Llama-3, Qwen2/3)
//     gives model "gpt2" with merges and no scores. Pre comes from
//     opts.Pre, else from the Split regex of the pre_tokenizer section
//     looked up in our table (Llama-3 pattern → "llama-bpe", Qwen2 pattern
//     → "qwen2", a bare ByteLevel with use_regex → "gpt-2"); an unknown
//     pattern returns ErrUnknownPreTokenizer quoting the pattern.
//   - SentencePiece-style BPE (byte_fallback, "▁" for spaces, no ByteLevel
//     step: Gemma3, Llama-2) gives model "llama", pre "default", no merges,
//     and scores: −rank of the first merge producing the token, 0 for single
//     characters, <0xHH> byte tokens (type BYTE) and the unk token (type
//     UNKNOWN), −1000 for added tokens. AddSpacePrefix is true only when
//     the normalizer or pre-tokenizer prepends "▁".
//
// Token types: NORMAL; CONTROL for special added tokens, USER_DEFINED for
// other added tokens. Ids missing below the final size become "[PAD<id>]"
// with type UNUSED (and score −10000 on the "llama" path). UNUSED is our
// choice for the gpt2 path too, where bitnet.cpp's converter writes
// USER_DEFINED: an unused pad must never be matched in text by the runtime.
//
// With opts.VocabSize > 0 the list is reconciled with it: a shorter list is
// padded; surplus tokens with ids ≥ VocabSize are dropped with a warning when
// they are all added tokens, and are an error naming the first one
// otherwise.
//
// Special ids, add_bos/add_eos and the chat template come from
// ApplySpecialVocabFS (gguf-py SpecialVocab rules: tokenizer_config.json,
// special_tokens_map.json, then config.json; names resolve among the added
// tokens only); EOT is set when the vocabulary holds a known end-of-turn
// token as an added token (<|eot_id|>, <|im_end|>, <end_of_turn>, …).
// Errors name the file and say what to do; bad input never panics.
func LoadTokenizerJSONFS(fsys fs.FS, opts JSONOptions) (*Vocab, []string, error) {
	data, err := fsutil.ReadFileFS(fsys, "tokenizer.json")
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, fmt.Errorf("tokenizer.json not found: the model directory needs tokenizer.json or tokenizer.model")
		}
		return nil, nil, fmt.Errorf("read tokenizer.json: %w", err)
	}
	v, warnings, err := buildFromTokenizerJSON(data, opts)
	if err != nil {
		return nil, nil, err
	}
	w, err := ApplySpecialVocabFS(v, fsys)
	if err != nil {
		return nil, nil, err
	}
	setEOT(v)
	return v, append(warnings, w...), nil
}

// hfTokenizerJSON is the part of a Hugging Face tokenizers tokenizer.json we
// read.
type hfTokenizerJSON struct {
	AddedTokens  []hfAddedToken `json:"added_tokens"`
	Normalizer   *hfComponent   `json:"normalizer"`
	PreTokenizer *hfComponent   `json:"pre_tokenizer"`
	Decoder      *hfComponent   `json:"decoder"`
	Model        struct {
		Type         string          `json:"type"`
		Vocab        json.RawMessage `json:"vocab"`
		Merges       []hfMerge       `json:"merges"`
		ByteFallback bool            `json:"byte_fallback"`
		UnkToken     *string         `json:"unk_token"`
	} `json:"model"`
}

// hfAddedToken is one added_tokens entry.
type hfAddedToken struct {
	ID      int64  `json:"id"`
	Content string `json:"content"`
	Special bool   `json:"special"`
}

// hfComponent is a normalizer, pre-tokenizer or decoder, possibly a Sequence
// of them.
type hfComponent struct {
	Type    string `json:"type"`
	Pattern *struct {
		Regex  *string `json:"Regex"`
		String *string `json:"String"`
	} `json:"pattern"`
	Content       string `json:"content"`
	Prepend       string `json:"prepend"`
	Replacement   string `json:"replacement"`
	PrependScheme string `json:"prepend_scheme"`
	AddPrefix     *bool  `json:"add_prefix_space"`
	UseRegex      *bool  `json:"use_regex"`
	// IndividualDigits is the Digits pre-tokenizer's flag.
	IndividualDigits *bool         `json:"individual_digits"`
	PreTokenizers    []hfComponent `json:"pretokenizers"`
	Normalizers      []hfComponent `json:"normalizers"`
	Decoders         []hfComponent `json:"decoders"`
}

// flatten returns c and the members of nested Sequences, depth first.
func (c *hfComponent) flatten() []*hfComponent {
	if c == nil {
		return nil
	}
	out := []*hfComponent{c}
	for _, list := range [][]hfComponent{c.PreTokenizers, c.Normalizers, c.Decoders} {
		for i := range list {
			out = append(out, list[i].flatten()...)
		}
	}
	return out
}

// hfMerge is one merge rule, stored either as "a b" or as ["a", "b"]
// (tokenizers ≥ 0.20); it holds the two parts.
type hfMerge struct {
	A, B string
	pair bool // written as a pair
}

// UnmarshalJSON accepts both merge spellings.
func (m *hfMerge) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		a, c, ok := strings.Cut(s, " ")
		if !ok {
			return fmt.Errorf("merge %q has no space between its two parts", s)
		}
		*m = hfMerge{A: a, B: c}
		return nil
	}
	var p []string
	if err := json.Unmarshal(b, &p); err != nil {
		return fmt.Errorf("merge is neither \"a b\" nor [\"a\", \"b\"]: %w", err)
	}
	if len(p) != 2 {
		return fmt.Errorf("merge pair has %d parts, want 2", len(p))
	}
	*m = hfMerge{A: p[0], B: p[1], pair: true}
	return nil
}

// tokenizerKind is the family LoadTokenizerJSON found.
type tokenizerKind int

const (
	kindByteLevel tokenizerKind = iota + 1
	kindSentencePiece
)

// classify decides between byte-level BPE and SentencePiece-style BPE.
func (j *hfTokenizerJSON) classify() (tokenizerKind, error) {
	if j.Model.Type != "BPE" {
		t := j.Model.Type
		if t == "" {
			t = "(none)"
		}
		return 0, fmt.Errorf("%w: model type %s, only BPE tokenizer.json is supported (a Unigram/WordPiece model needs its tokenizer.model)", ErrUnsupportedTokenizerJSON, t)
	}
	for _, c := range append(j.PreTokenizer.flatten(), j.Decoder.flatten()...) {
		if c.Type == "ByteLevel" {
			return kindByteLevel, nil
		}
	}
	if j.Model.ByteFallback {
		return kindSentencePiece, nil
	}
	for _, c := range append(append(j.Normalizer.flatten(), j.PreTokenizer.flatten()...), j.Decoder.flatten()...) {
		if c.Type == "Metaspace" || c.Content == "▁" || c.Prepend == "▁" {
			return kindSentencePiece, nil
		}
	}
	return 0, fmt.Errorf("%w: BPE without a ByteLevel step, byte_fallback or \"▁\" spaces; cannot tell gpt2 from llama", ErrUnsupportedTokenizerJSON)
}

// detectPre finds the pre-tokenizer family of a byte-level tokenizer.json.
func (j *hfTokenizerJSON) detectPre() (string, error) {
	var splits []string
	byteLevelRegex, punct, digits := false, false, false
	for _, c := range j.PreTokenizer.flatten() {
		switch c.Type {
		case "Punctuation":
			punct = true
		case "Digits":
			digits = c.IndividualDigits != nil && *c.IndividualDigits
		case "Split":
			if c.Pattern != nil && c.Pattern.Regex != nil {
				splits = append(splits, *c.Pattern.Regex)
			}
		case "ByteLevel":
			if c.UseRegex == nil || *c.UseRegex {
				byteLevelRegex = true
			}
		}
	}
	if len(splits) > 0 {
		for _, s := range splits {
			if p, ok := preForPattern(s); ok {
				return p.name, nil
			}
		}
		return "", fmt.Errorf("tokenizer.json: %w: Split regex %q is not a known family (known: %s); pass --pre NAME to set tokenizer.ggml.pre", ErrUnknownPreTokenizer, splits[0], supportedPres())
	}
	if byteLevelRegex && punct && digits {
		// Punctuation, ByteLevel, Digits(individual): the Falcon3 layout
		// (falcon_e, identical in split, is chosen with --pre).
		return "falcon3", nil
	}
	if byteLevelRegex {
		for _, p := range preTokenizers {
			if p.byteLevelRegex {
				return p.name, nil
			}
		}
	}
	return "", fmt.Errorf("tokenizer.json: %w: the pre_tokenizer section has no Split regex; pass --pre NAME to set tokenizer.ggml.pre (known: %s)", ErrUnknownPreTokenizer, supportedPres())
}

// addSpacePrefix reports whether a SentencePiece-style tokenizer.json
// prepends "▁" to the text (a Prepend normalizer, or a Metaspace
// pre-tokenizer with prepend_scheme other than "never").
func (j *hfTokenizerJSON) addSpacePrefix() bool {
	for _, c := range j.Normalizer.flatten() {
		if c.Type == "Prepend" && c.Prepend == "▁" {
			return true
		}
	}
	for _, c := range j.PreTokenizer.flatten() {
		if c.Type == "Metaspace" {
			if c.PrependScheme != "" {
				return c.PrependScheme != "never"
			}
			return c.AddPrefix == nil || *c.AddPrefix
		}
	}
	return false
}

// hfEntry is one token while the vocabulary is assembled.
type hfEntry struct {
	text    string
	typ     int32
	score   float32
	added   bool
	present bool
}

// buildFromTokenizerJSON turns tokenizer.json bytes into a Vocab without
// special ids (LoadTokenizerJSONFS adds them).
func buildFromTokenizerJSON(data []byte, opts JSONOptions) (*Vocab, []string, error) {
	if opts.VocabSize < 0 || opts.VocabSize > hfMaxVocabSize {
		return nil, nil, fmt.Errorf("vocab_size %d is out of range (1..%d)", opts.VocabSize, hfMaxVocabSize)
	}
	if !utf8.Valid(data) {
		// encoding/json would silently turn the bad bytes into U+FFFD and
		// change a token's text; HF tokenizers (serde_json) refuses them.
		off := 0
		for off < len(data) {
			r, n := utf8.DecodeRune(data[off:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			off += n
		}
		return nil, nil, fmt.Errorf("tokenizer.json is not valid UTF-8 (bad byte 0x%02x at offset %d); re-save it as UTF-8", data[off], off)
	}
	var j hfTokenizerJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return nil, nil, fmt.Errorf("parse tokenizer.json: %w", err)
	}
	kind, err := j.classify()
	if err != nil {
		return nil, nil, fmt.Errorf("tokenizer.json: %w", err)
	}
	var vocab map[string]int64
	if err := json.Unmarshal(j.Model.Vocab, &vocab); err != nil || vocab == nil {
		return nil, nil, fmt.Errorf("tokenizer.json: model.vocab must be an object of token → id: %v", err)
	}

	var warnings []string
	var v *Vocab
	switch kind {
	case kindByteLevel:
		pre := opts.Pre
		if pre == "" {
			if pre, err = j.detectPre(); err != nil {
				return nil, nil, err
			}
		} else if _, ok := lookupPre(pre); !ok {
			warnings = append(warnings, fmt.Sprintf("--pre %q is not one the bundled runtime can tokenize with (it supports %s); the GGUF is written with it anyway", pre, supportedPres()))
		}
		v = NewVocab("gpt2", pre)
	case kindSentencePiece:
		if opts.Pre != "" && opts.Pre != "default" {
			warnings = append(warnings, fmt.Sprintf("--pre %q ignored: tokenizer.json is SentencePiece-style (model llama), whose pre is always \"default\"", opts.Pre))
		}
		v = NewVocab("llama", "default")
		asp := j.addSpacePrefix()
		v.AddSpacePrefix = &asp
	}

	entries, err := collectEntries(&j, vocab, opts.VocabSize)
	if err != nil {
		return nil, nil, err
	}
	if kind == kindSentencePiece {
		scoreSentencePiece(&j, entries)
	}
	entries, w, err := reconcile(entries, opts.VocabSize)
	if err != nil {
		return nil, nil, err
	}
	warnings = append(warnings, w...)

	v.Tokens = make([]string, len(entries))
	v.Types = make([]int32, len(entries))
	if kind == kindSentencePiece {
		v.Scores = make([]float32, len(entries))
	}
	for id, e := range entries {
		v.Tokens[id] = e.text
		v.Types[id] = e.typ
		if v.Scores != nil {
			v.Scores[id] = e.score
		}
	}
	if kind == kindByteLevel {
		if err := checkMerges(j.Model.Merges, v.Tokens); err != nil {
			return nil, nil, err
		}
		v.Merges = make([]string, len(j.Model.Merges))
		for i, m := range j.Model.Merges {
			a, b := m.A, m.B
			if m.pair {
				// A space inside a part would split the GGUF "a b" form in
				// the wrong place; write it as the GPT-2 alphabet's 'Ġ'.
				a = strings.ReplaceAll(a, " ", byteToken[' '])
				b = strings.ReplaceAll(b, " ", byteToken[' '])
			}
			v.Merges[i] = a + " " + b
		}
	}
	return v, warnings, nil
}

// collectEntries places model.vocab and added_tokens by id. Ids must be in
// 0..hfMaxVocabSize, and without vocabSize the id space must be reasonably
// dense (holes are padded, so a stray huge id would otherwise allocate
// millions of pads).
func collectEntries(j *hfTokenizerJSON, vocab map[string]int64, vocabSize int) ([]hfEntry, error) {
	maxID := int64(-1)
	check := func(what, text string, id int64) error {
		if id < 0 || id >= hfMaxVocabSize {
			return fmt.Errorf("tokenizer.json: %s %q has id %d, outside 0..%d", what, text, id, hfMaxVocabSize-1)
		}
		if id > maxID {
			maxID = id
		}
		return nil
	}
	for text, id := range vocab {
		if err := check("token", text, id); err != nil {
			return nil, err
		}
	}
	for _, a := range j.AddedTokens {
		if err := check("added token", a.Content, a.ID); err != nil {
			return nil, err
		}
	}
	n := maxID + 1
	count := int64(len(vocab) + len(j.AddedTokens))
	if limit := max(int64(vocabSize), 2*count+256); n > limit {
		return nil, fmt.Errorf("tokenizer.json: token ids reach %d for only %d tokens; pass the model's vocab_size or fix the ids", maxID, count)
	}
	entries := make([]hfEntry, n)
	// Iterate the vocabulary in id order so duplicate-id errors are
	// deterministic.
	type kv struct {
		text string
		id   int64
	}
	list := make([]kv, 0, len(vocab))
	for t, id := range vocab {
		list = append(list, kv{t, id})
	}
	sort.Slice(list, func(a, b int) bool {
		if list[a].id != list[b].id {
			return list[a].id < list[b].id
		}
		return list[a].text < list[b].text
	})
	for _, e := range list {
		if entries[e.id].present {
			return nil, fmt.Errorf("tokenizer.json: tokens %q and %q share id %d", entries[e.id].text, e.text, e.id)
		}
		entries[e.id] = hfEntry{text: e.text, typ: TypeNormal, present: true}
	}
	for _, a := range j.AddedTokens {
		typ := TypeUserDefined
		if a.Special {
			typ = TypeControl
		}
		// An added token may restate the model's entry for its id (Llama-2's
		// <unk>, <s>, </s>), never replace another token: HF tokenizers
		// refuses to load a tokenizer.json whose added token claims an id
		// that holds different text.
		if e := entries[a.ID]; e.present && e.text != a.Content {
			what := "model.vocab token"
			if e.added {
				what = "added token"
			}
			return nil, fmt.Errorf("tokenizer.json: added token %q has id %d, which the %s %q already holds; fix the id in added_tokens", a.Content, a.ID, what, e.text)
		}
		entries[a.ID] = hfEntry{text: a.Content, typ: typ, score: hfScoreAdded, added: true, present: true}
	}
	for id := range entries {
		if entries[id].present && entries[id].text == "" {
			return nil, fmt.Errorf("tokenizer.json: token %d is empty; GGUF tokens must be non-empty", id)
		}
	}
	return entries, nil
}

// scoreSentencePiece sets types and scores of the "llama" path (spec
// conversion.md §5.3 gemma3 rules): −rank of the first merge whose result is
// the token; 0 for single characters, <0xHH> byte tokens (BYTE) and the
// unk token (UNKNOWN); −1000 for added tokens (already set). A multi-character
// token no merge produces (none in Gemma3 or Llama-2) gets the lowest merge
// score, −len(merges).
func scoreSentencePiece(j *hfTokenizerJSON, entries []hfEntry) {
	rank := make(map[string]int, len(j.Model.Merges))
	for r, m := range j.Model.Merges {
		s := m.A + m.B
		if _, ok := rank[s]; !ok {
			rank[s] = r
		}
	}
	unk := ""
	if j.Model.UnkToken != nil {
		unk = *j.Model.UnkToken
	}
	for id := range entries {
		e := &entries[id]
		if !e.present {
			continue
		}
		switch {
		case unk != "" && e.text == unk:
			e.typ, e.score = TypeUnknown, 0
		case hfIsByteToken(e.text):
			e.typ, e.score = TypeByte, 0
		case e.added:
			// CONTROL/USER_DEFINED with −1000, set by collectEntries.
		default:
			if r, ok := rank[e.text]; ok {
				e.score = -float32(r)
			} else if utf8.RuneCountInString(e.text) <= 1 {
				e.score = 0
			} else {
				e.score = -float32(len(j.Model.Merges))
			}
		}
	}
}

// hfIsByteToken reports whether s is a SentencePiece byte token "<0xHH>"
// (upper-case hex, as SentencePiece writes them).
func hfIsByteToken(s string) bool {
	if len(s) != 6 || s[:3] != "<0x" || s[5] != '>' {
		return false
	}
	for _, c := range s[3:5] {
		if !(c >= '0' && c <= '9' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// checkMerges refuses a byte-level merge whose parts or result are not
// tokens of the vocabulary: HF tokenizers refuses to load such a file
// (BPE::from_file, "Merges text file invalid"), and llama.cpp's BPE would
// carry a rule it can never apply.
func checkMerges(merges []hfMerge, tokens []string) error {
	ids := make(map[string]bool, len(tokens))
	for _, t := range tokens {
		ids[t] = true
	}
	for r, m := range merges {
		for _, part := range []string{m.A, m.B, m.A + m.B} {
			if !ids[part] {
				return fmt.Errorf("tokenizer.json: merge %d %q: %q is not in the vocabulary; fix model.merges or model.vocab", r, m.A+" "+m.B, part)
			}
		}
	}
	return nil
}
