package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/bitnet-convert/bitnet-convert/gguf"
)

// rawTokenizerJSON decodes a real tokenizer.json generically, independently
// of the loader, so tests compare the loader against the file itself.
type rawTokenizerJSON struct {
	AddedTokens []struct {
		ID      int    `json:"id"`
		Content string `json:"content"`
		Special bool   `json:"special"`
	} `json:"added_tokens"`
	Model struct {
		Vocab  map[string]int    `json:"vocab"`
		Merges []json.RawMessage `json:"merges"`
	} `json:"model"`
}

func readRawTokenizerJSON(t *testing.T, fsys fstest.MapFS) *rawTokenizerJSON {
	t.Helper()
	var r rawTokenizerJSON
	if err := json.Unmarshal(fsys["tokenizer.json"].Data, &r); err != nil {
		t.Fatal(err)
	}
	return &r
}

// mergeParts decodes one raw merge (either spelling) into its two parts.
func mergeParts(t *testing.T, raw json.RawMessage) (string, string) {
	t.Helper()
	var s string
	if json.Unmarshal(raw, &s) == nil {
		a, b, _ := strings.Cut(s, " ")
		return a, b
	}
	var p [2]string
	if err := json.Unmarshal(raw, &p); err != nil {
		t.Fatal(err)
	}
	return p[0], p[1]
}

func TestLoadTokenizerJSONLlama3(t *testing.T) {
	v, warnings := realVocab(t, "llama3")
	raw := readRawTokenizerJSON(t, modelFS(t, "llama3", nil))
	if len(warnings) != 0 {
		t.Errorf("warnings: %q", warnings)
	}
	if v.Model != "gpt2" || v.Pre != "llama-bpe" {
		t.Errorf("model/pre = %s/%s, want gpt2/llama-bpe", v.Model, v.Pre)
	}
	if len(v.Tokens) != 128256 || len(v.Types) != 128256 || v.Scores != nil {
		t.Errorf("len(tokens)=%d len(types)=%d scores nil=%v, want 128256, 128256, true", len(v.Tokens), len(v.Types), v.Scores == nil)
	}
	for _, c := range []struct {
		name string
		got  int32
		want int32
	}{{"bos", v.BOS, 128000}, {"eos", v.EOS, 128001}, {"eot", v.EOT, 128009}, {"unk", v.UNK, NoToken}, {"pad", v.PAD, NoToken}} {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d", c.name, c.got, c.want)
		}
	}
	if v.Tokens[128000] != "<|begin_of_text|>" || v.Tokens[128009] != "<|eot_id|>" || v.Tokens[9906] != "Hello" || v.Tokens[1917] != "Ġworld" {
		t.Errorf("tokens 128000/128009/9906/1917 = %q %q %q %q", v.Tokens[128000], v.Tokens[128009], v.Tokens[9906], v.Tokens[1917])
	}
	if v.Types[128000] != TypeControl || v.Types[0] != TypeNormal || v.Types[127999] != TypeNormal {
		t.Errorf("types 128000/0/127999 = %d %d %d", v.Types[128000], v.Types[0], v.Types[127999])
	}
	if len(v.Merges) != len(raw.Model.Merges) || len(v.Merges) != 280147 {
		t.Fatalf("%d merges, the JSON has %d", len(v.Merges), len(raw.Model.Merges))
	}
	for i, m := range raw.Model.Merges {
		a, b := mergeParts(t, m)
		if v.Merges[i] != a+" "+b {
			t.Fatalf("merge %d = %q, want %q", i, v.Merges[i], a+" "+b)
		}
	}
	if !strings.Contains(v.ChatTemplate, "<|start_header_id|>") {
		t.Errorf("chat template not taken from tokenizer_config.json: %.60q", v.ChatTemplate)
	}
	if v.AddBOS != nil || v.AddEOS != nil || v.AddSpacePrefix != nil {
		t.Errorf("add flags set although tokenizer_config.json has none: %v %v %v", v.AddBOS, v.AddEOS, v.AddSpacePrefix)
	}
}

func TestLoadTokenizerJSONQwen3(t *testing.T) {
	v, warnings := realVocab(t, "qwen3")
	raw := readRawTokenizerJSON(t, modelFS(t, "qwen3", nil))
	if len(warnings) != 0 {
		t.Errorf("warnings: %q", warnings)
	}
	if v.Model != "gpt2" || v.Pre != "qwen2" {
		t.Errorf("model/pre = %s/%s, want gpt2/qwen2", v.Model, v.Pre)
	}
	if len(v.Tokens) != 151936 {
		t.Fatalf("%d tokens, want 151936", len(v.Tokens))
	}
	// 151643 vocab + 26 added = 151669 real tokens, then pads.
	for _, id := range []int{151669, 151800, 151935} {
		if want := fmt.Sprintf("[PAD%d]", id); v.Tokens[id] != want || v.Types[id] != TypeUnused {
			t.Errorf("token %d = %q type %d, want %q UNUSED", id, v.Tokens[id], v.Types[id], want)
		}
	}
	if v.Tokens[151668] != "</think>" || v.Types[151668] != TypeUserDefined || v.Types[151644] != TypeControl {
		t.Errorf("added tokens: %q type %d, <|im_start|> type %d", v.Tokens[151668], v.Types[151668], v.Types[151644])
	}
	// tokenizer_config.json: eos <|im_end|>, pad <|endoftext|>, no bos,
	// add_bos_token false.
	if v.EOS != 151645 || v.PAD != 151643 || v.BOS != NoToken || v.EOT != 151645 {
		t.Errorf("eos/pad/bos/eot = %d/%d/%d/%d, want 151645/151643/-1/151645", v.EOS, v.PAD, v.BOS, v.EOT)
	}
	if v.AddBOS == nil || *v.AddBOS {
		t.Errorf("AddBOS = %v, want false", v.AddBOS)
	}
	if len(v.Merges) != len(raw.Model.Merges) {
		t.Fatalf("%d merges, the JSON has %d", len(v.Merges), len(raw.Model.Merges))
	}
	for i, m := range raw.Model.Merges {
		a, b := mergeParts(t, m)
		if v.Merges[i] != a+" "+b {
			t.Fatalf("merge %d = %q, want %q", i, v.Merges[i], a+" "+b)
		}
	}
}

func TestLoadTokenizerJSONGemma3(t *testing.T) {
	v, warnings := realVocab(t, "gemma3")
	fsys := modelFS(t, "gemma3", nil)
	raw := readRawTokenizerJSON(t, fsys)
	if v.Model != "llama" || v.Pre != "default" {
		t.Errorf("model/pre = %s/%s, want llama/default", v.Model, v.Pre)
	}
	if len(v.Tokens) != 262144 || len(v.Scores) != 262144 || len(v.Types) != 262144 {
		t.Fatalf("len tokens/scores/types = %d/%d/%d, want 262144", len(v.Tokens), len(v.Scores), len(v.Types))
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "dropped 1 added token") || !strings.Contains(warnings[0], "<image_soft_token>") || !strings.Contains(warnings[0], "262144") {
		t.Errorf("warnings = %q, want one naming the dropped <image_soft_token> (id 262144)", warnings)
	}
	if v.AddSpacePrefix == nil || *v.AddSpacePrefix {
		t.Errorf("AddSpacePrefix = %v, want false", v.AddSpacePrefix)
	}
	if v.Merges != nil {
		t.Errorf("llama model got %d merges, want none", len(v.Merges))
	}
	if v.BOS != 2 || v.EOS != 106 || v.PAD != 0 || v.UNK != 3 || v.EOT != 106 {
		t.Errorf("bos/eos/pad/unk/eot = %d/%d/%d/%d/%d, want 2/106/0/3/106", v.BOS, v.EOS, v.PAD, v.UNK, v.EOT)
	}
	if v.AddBOS == nil || !*v.AddBOS || v.AddEOS == nil || *v.AddEOS {
		t.Errorf("AddBOS/AddEOS = %v/%v, want true/false", v.AddBOS, v.AddEOS)
	}
	// Scores, computed here from the JSON: −rank of the first merge that
	// produces the token.
	firstRank := map[string]int{}
	for r, m := range raw.Model.Merges {
		a, b := mergeParts(t, m)
		if _, ok := firstRank[a+b]; !ok {
			firstRank[a+b] = r
		}
	}
	added := map[int]bool{}
	for _, a := range raw.AddedTokens {
		added[a.ID] = true
	}
	checked := 0
	for text, id := range raw.Model.Vocab {
		if added[id] || strings.HasPrefix(text, "<0x") || text == "<unk>" {
			continue
		}
		want := float32(0)
		if r, ok := firstRank[text]; ok {
			want = -float32(r)
		}
		if v.Scores[id] != want || v.Types[id] != TypeNormal || v.Tokens[id] != text {
			t.Fatalf("token %d %q: score %v type %d, want %v NORMAL", id, v.Tokens[id], v.Scores[id], v.Types[id], want)
		}
		checked++
	}
	if checked < 250000 {
		t.Errorf("only %d normal tokens checked", checked)
	}
	for _, c := range []struct {
		id    int
		text  string
		typ   int32
		score float32
	}{
		{0, "<pad>", TypeControl, -1000},
		{2, "<bos>", TypeControl, -1000},
		{3, "<unk>", TypeUnknown, 0},
		{4, "<mask>", TypeUserDefined, -1000},
		{106, "<end_of_turn>", TypeControl, -1000},
		{238, "<0x00>", TypeByte, 0},
		{248, "<0x0A>", TypeByte, 0},
	} {
		if v.Tokens[c.id] != c.text || v.Types[c.id] != c.typ || v.Scores[c.id] != c.score {
			t.Errorf("token %d = %q type %d score %v, want %q type %d score %v", c.id, v.Tokens[c.id], v.Types[c.id], v.Scores[c.id], c.text, c.typ, c.score)
		}
	}
}

func TestLoadTokenizerJSONLlama2(t *testing.T) {
	v, warnings := realVocab(t, "llama2")
	if len(warnings) != 0 {
		t.Errorf("warnings: %q", warnings)
	}
	if v.Model != "llama" || v.Pre != "default" || len(v.Tokens) != 32000 {
		t.Fatalf("model/pre/len = %s/%s/%d, want llama/default/32000", v.Model, v.Pre, len(v.Tokens))
	}
	if v.AddSpacePrefix == nil || !*v.AddSpacePrefix {
		t.Errorf("AddSpacePrefix = %v, want true (Prepend ▁ normalizer)", v.AddSpacePrefix)
	}
	for _, c := range []struct {
		id    int
		text  string
		typ   int32
		score float32
	}{
		{0, "<unk>", TypeUnknown, 0},
		{1, "<s>", TypeControl, -1000},
		{2, "</s>", TypeControl, -1000},
		{3, "<0x00>", TypeByte, 0},
		{13, "<0x0A>", TypeByte, 0},
		{261, "▁t", TypeNormal, 0},      // merge rank 0 "▁ t"
		{263, "er", TypeNormal, -2},     // merge rank 2 "e r"
		{28708, "a", TypeNormal, 0},     // single character
		{28705, "▁", TypeNormal, 0},     // single character
		{259, "▁▁", TypeNormal, -58876}, // first merge giving it: rank 58876 "▁ ▁"
	} {
		if v.Tokens[c.id] != c.text || v.Types[c.id] != c.typ || v.Scores[c.id] != c.score {
			t.Errorf("token %d = %q type %d score %v, want %q type %d score %v", c.id, v.Tokens[c.id], v.Types[c.id], v.Scores[c.id], c.text, c.typ, c.score)
		}
	}
}

// br02Fixture writes the BR-02 model directory: a byte-level BPE
// tokenizer.json in the Llama-3 style (256 byte tokens + 44 merge tokens =
// 300, plus <|begin_of_text|> and <|eot_id|>), tokenizer_config.json and
// config.json with vocab_size 302, and no tokenizer.model. It returns the
// directory and the merges in rank order.
func br02Fixture(t testing.TB, pairMerges bool) (string, []string) {
	t.Helper()
	vocab := map[string]int{}
	for b := 0; b < 256; b++ {
		vocab[string(byteToRune[b])] = b
	}
	merges := []string{"H e", "l l", "He ll", "Hell o", "Ġ w", "o r", "Ġw or", "Ġwor l", "Ġworl d", "w o"}
	// Filler merges of lower priority up to 300 tokens.
	letters := "abcdefghijkmnpqstuvxyz"
	for i := 0; len(vocab)+len(merges) < 300; i++ {
		merges = append(merges, fmt.Sprintf("%c %c", letters[i%len(letters)], letters[(i/len(letters)+i+1)%len(letters)]))
	}
	for _, m := range merges {
		a, b, _ := strings.Cut(m, " ")
		if _, dup := vocab[a+b]; dup {
			t.Fatalf("fixture merge %q duplicates a token", m)
		}
		vocab[a+b] = len(vocab)
	}
	var jsonMerges []any
	for _, m := range merges {
		if pairMerges {
			a, b, _ := strings.Cut(m, " ")
			jsonMerges = append(jsonMerges, []string{a, b})
		} else {
			jsonMerges = append(jsonMerges, m)
		}
	}
	tj := map[string]any{
		"version": "1.0",
		"added_tokens": []map[string]any{
			{"id": 300, "content": "<|begin_of_text|>", "special": true, "normalized": false},
			{"id": 301, "content": "<|eot_id|>", "special": true, "normalized": false},
		},
		"normalizer": nil,
		"pre_tokenizer": map[string]any{"type": "Sequence", "pretokenizers": []any{
			map[string]any{"type": "Split", "pattern": map[string]string{"Regex": llama3SplitJSON}, "behavior": "Isolated", "invert": false},
			map[string]any{"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": false},
		}},
		"decoder": map[string]any{"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": true},
		"model":   map[string]any{"type": "BPE", "ignore_merges": true, "byte_fallback": false, "vocab": vocab, "merges": jsonMerges},
	}
	dir := t.TempDir()
	write := func(name string, v any) {
		data, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("tokenizer.json", tj)
	write("tokenizer_config.json", map[string]any{"bos_token": "<|begin_of_text|>", "eos_token": map[string]any{"content": "<|eot_id|>"}, "add_bos_token": true})
	write("config.json", map[string]any{"architectures": []string{"BitNetForCausalLM"}, "vocab_size": 302, "bos_token_id": 300, "eos_token_id": 301})
	return dir, merges
}

// TestBR02ByteLevelTokenizerJSONOnly: a model dir with only tokenizer.json
// (byte-level BPE, Llama-3 split) converts to a gpt2 vocabulary with a
// non-default pre, merges and the right bos/eos; the runtime tokenizes
// "Hello world" as HF does with this vocabulary.
func TestBR02ByteLevelTokenizerJSONOnly(t *testing.T) {
	for _, pairs := range []bool{false, true} {
		t.Run(fmt.Sprintf("pairMerges=%v", pairs), func(t *testing.T) {
			dir, merges := br02Fixture(t, pairs)
			v, warnings, err := LoadTokenizerJSON(dir, JSONOptions{VocabSize: 302})
			if err != nil {
				t.Fatal(err)
			}
			if len(warnings) != 0 {
				t.Errorf("warnings: %q", warnings)
			}
			if v.Model != "gpt2" || v.Pre != "llama-bpe" || len(v.Tokens) != 302 || len(v.Types) != 302 {
				t.Fatalf("model/pre/len = %s/%s/%d, want gpt2/llama-bpe/302", v.Model, v.Pre, len(v.Tokens))
			}
			if !slices.Equal(v.Merges, merges) {
				t.Errorf("merges = %q…, want %q…", v.Merges[:5], merges[:5])
			}
			if v.BOS != 300 || v.EOS != 301 || v.EOT != 301 || v.Types[300] != TypeControl || v.Types[301] != TypeControl {
				t.Errorf("bos/eos/eot = %d/%d/%d types %d/%d", v.BOS, v.EOS, v.EOT, v.Types[300], v.Types[301])
			}
			tok, err := New(v)
			if err != nil {
				t.Fatal(err)
			}
			id := func(s string) int32 { return int32(slices.Index(v.Tokens, s)) }
			for _, c := range []struct {
				in           string
				add, special bool
				want         []int32
			}{
				{"Hello world", false, false, []int32{id("Hello"), id("Ġworld")}},
				{"Hello world", true, false, []int32{300, id("Hello"), id("Ġworld")}},
				// Not a vocabulary word: merged by rank, H e → He, l l → ll,
				// o r → or (rank 5) before w o (rank 9), He ll → Hell, Hell o → Hello.
				{"Helloworld", false, false, []int32{id("Hello"), id("w"), id("or"), id("l"), id("d")}},
				{"<|eot_id|>Hello", false, true, []int32{301, id("Hello")}},
			} {
				got, err := tok.Encode(c.in, c.add, c.special)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got, c.want) {
					t.Errorf("Encode(%q, %v, %v) = %v, want %v", c.in, c.add, c.special, got, c.want)
				}
			}
			// The GGUF side: the tokenizer KVs carry model, pre, 302 tokens,
			// the merges and bos/eos, and the vocabulary read back from them
			// tokenizes "Hello world" the same way.
			kvs := v.KVs()
			for key, want := range map[string]string{"tokenizer.ggml.model": "gpt2", "tokenizer.ggml.pre": "llama-bpe"} {
				if val, ok := gguf.Lookup(kvs, key); !ok || val.V != want {
					t.Errorf("%s = %v, want %q", key, val.V, want)
				}
			}
			for key, want := range map[string]uint64{"tokenizer.ggml.bos_token_id": 300, "tokenizer.ggml.eos_token_id": 301} {
				if val, ok := gguf.Lookup(kvs, key); !ok {
					t.Errorf("%s missing", key)
				} else if got, _ := val.Uint(); got != want {
					t.Errorf("%s = %d, want %d", key, got, want)
				}
			}
			back, err := FromGGUF(kvs)
			if err != nil {
				t.Fatal(err)
			}
			if len(back.Tokens) != 302 || !slices.Equal(back.Merges, merges) {
				t.Errorf("GGUF round trip: %d tokens, merges equal %v", len(back.Tokens), slices.Equal(back.Merges, merges))
			}
			tok2, err := New(back)
			if err != nil {
				t.Fatal(err)
			}
			if ids, err := tok2.Encode("Hello world", true, false); err != nil || !slices.Equal(ids, []int32{300, id("Hello"), id("Ġworld")}) {
				t.Errorf("tokenizer from the GGUF KVs: %v, %v", ids, err)
			}
			// Without parseSpecial a control token's text is plain text.
			got, err := tok.Encode("<|eot_id|>", false, false)
			if err != nil {
				t.Fatal(err)
			}
			if slices.Contains(got, 301) || len(got) < 4 {
				t.Errorf("Encode(<|eot_id|>, parseSpecial=false) = %v, want byte-level pieces", got)
			}
			if s, err := tok.Decode(got); err != nil || s != "<|eot_id|>" {
				t.Errorf("Decode = %q, %v", s, err)
			}
		})
	}
}

// tinyByteLevel is a minimal byte-level tokenizer.json with the given
// pre_tokenizer, vocab, added tokens and model type.
func tinyByteLevel(pre, vocab, added, modelType string) string {
	return `{"added_tokens": [` + added + `], "normalizer": null, "pre_tokenizer": ` + pre +
		`, "decoder": {"type": "ByteLevel"}, "model": {"type": "` + modelType + `", "vocab": {` + vocab + `}, "merges": ["a b"]}}`
}

func TestLoadTokenizerJSONErrors(t *testing.T) {
	llama3Pre, _ := json.Marshal(map[string]any{"type": "Split", "pattern": map[string]string{"Regex": llama3SplitJSON}})
	unknownPre := `{"type": "Split", "pattern": {"Regex": "\\p{L}+|\\d+"}}`
	vocab := `"a": 0, "b": 1, "ab": 2`
	for _, c := range []struct {
		name    string
		files   map[string]string
		opts    JSONOptions
		wantErr string // substring; "" means success
		is      error
		warn    string // substring of a warning on success
	}{
		{"ok", map[string]string{"tokenizer.json": tinyByteLevel(string(llama3Pre), vocab, "", "BPE")}, JSONOptions{}, "", nil, ""},
		{"no tokenizer.json", map[string]string{"config.json": "{}"}, JSONOptions{}, "tokenizer.json not found", nil, ""},
		{"not JSON", map[string]string{"tokenizer.json": "{\"model\": "}, JSONOptions{}, "parse tokenizer.json", nil, ""},
		{"unknown pre quotes the pattern", map[string]string{"tokenizer.json": tinyByteLevel(unknownPre, vocab, "", "BPE")}, JSONOptions{}, `"\\p{L}+|\\d+"`, ErrUnknownPreTokenizer, ""},
		{"unknown pre suggests --pre", map[string]string{"tokenizer.json": tinyByteLevel(unknownPre, vocab, "", "BPE")}, JSONOptions{}, "--pre NAME", ErrUnknownPreTokenizer, ""},
		{"--pre overrides an unknown pattern", map[string]string{"tokenizer.json": tinyByteLevel(unknownPre, vocab, "", "BPE")}, JSONOptions{Pre: "qwen2"}, "", nil, ""},
		{"no split regex", map[string]string{"tokenizer.json": tinyByteLevel(`{"type": "ByteLevel", "use_regex": false}`, vocab, "", "BPE")}, JSONOptions{}, "no Split regex", ErrUnknownPreTokenizer, ""},
		{"unigram", map[string]string{"tokenizer.json": tinyByteLevel(string(llama3Pre), vocab, "", "Unigram")}, JSONOptions{}, "model type Unigram", ErrUnsupportedTokenizerJSON, ""},
		{"neither byte-level nor spm", map[string]string{"tokenizer.json": `{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}}`}, JSONOptions{}, "cannot tell gpt2 from llama", ErrUnsupportedTokenizerJSON, ""},
		{"vocab not an object", map[string]string{"tokenizer.json": `{"decoder": {"type": "ByteLevel"}, "model": {"type": "BPE", "vocab": [1, 2]}}`}, JSONOptions{}, "model.vocab must be an object", nil, ""},
		{"bad merge", map[string]string{"tokenizer.json": `{"decoder": {"type": "ByteLevel"}, "model": {"type": "BPE", "vocab": {"a": 0}, "merges": ["ab"]}}`}, JSONOptions{}, "no space between", nil, ""},
		{"bad merge pair", map[string]string{"tokenizer.json": `{"decoder": {"type": "ByteLevel"}, "model": {"type": "BPE", "vocab": {"a": 0}, "merges": [["a", "b", "c"]]}}`}, JSONOptions{}, "3 parts", nil, ""},
		{"negative id", map[string]string{"tokenizer.json": tinyByteLevel(string(llama3Pre), `"a": -1`, "", "BPE")}, JSONOptions{}, `"a" has id -1`, nil, ""},
		{"huge id", map[string]string{"tokenizer.json": tinyByteLevel(string(llama3Pre), `"a": 99999999999`, "", "BPE")}, JSONOptions{}, `"a" has id 99999999999`, nil, ""},
		{"sparse ids", map[string]string{"tokenizer.json": tinyByteLevel(string(llama3Pre), `"a": 0, "b": 100000`, "", "BPE")}, JSONOptions{}, "ids reach 100000 for only 2 tokens", nil, ""},
		{"sparse ids with vocab_size", map[string]string{"tokenizer.json": tinyByteLevel(string(llama3Pre), `"a": 0, "ab": 7, "b": 100000`, "", "BPE")}, JSONOptions{VocabSize: 100001}, "", nil, ""},
		// D1, D13: inputs HF tokenizers refuses to load, which our runtime
		// could not tokenize with either.
		{"merge names an unknown token", map[string]string{"tokenizer.json": tinyByteLevel(string(llama3Pre), `"a": 0, "b": 1`, "", "BPE")}, JSONOptions{}, `merge 0 "a b": "ab" is not in the vocabulary`, nil, ""},
		{"added token reuses a vocab id", map[string]string{"tokenizer.json": tinyByteLevel(string(llama3Pre), vocab, `{"id": 1, "content": "<x>", "special": true}`, "BPE")}, JSONOptions{}, `added token "<x>" has id 1, which the model.vocab token "b" already holds`, nil, ""},
		{"two added tokens share an id", map[string]string{"tokenizer.json": tinyByteLevel(string(llama3Pre), vocab, `{"id": 3, "content": "<x>", "special": true}, {"id": 3, "content": "<y>", "special": true}`, "BPE")}, JSONOptions{}, `added token "<y>" has id 3, which the added token "<x>" already holds`, nil, ""},
		{"added token restating its vocab entry", map[string]string{"tokenizer.json": tinyByteLevel(string(llama3Pre), vocab, `{"id": 2, "content": "ab", "special": false}`, "BPE")}, JSONOptions{}, "", nil, ""},
		{"invalid UTF-8", map[string]string{"tokenizer.json": tinyByteLevel(string(llama3Pre), vocab+", \"x\xff\": 3", "", "BPE")}, JSONOptions{}, "tokenizer.json is not valid UTF-8 (bad byte 0xff at offset", nil, ""},
		{"shared id", map[string]string{"tokenizer.json": tinyByteLevel(string(llama3Pre), `"a": 0, "b": 0`, "", "BPE")}, JSONOptions{}, `share id 0`, nil, ""},
		{"empty token", map[string]string{"tokenizer.json": tinyByteLevel(string(llama3Pre), `"": 0`, "", "BPE")}, JSONOptions{}, "token 0 is empty", nil, ""},
		{"vocab_size too large", map[string]string{"tokenizer.json": tinyByteLevel(string(llama3Pre), vocab, "", "BPE")}, JSONOptions{VocabSize: 1 << 30}, "vocab_size 1073741824 is out of range", nil, ""},
		{"normal token beyond vocab_size", map[string]string{"tokenizer.json": tinyByteLevel(string(llama3Pre), vocab, "", "BPE")}, JSONOptions{VocabSize: 2}, `token "ab" (id 2) is beyond the model's vocab_size 2`, nil, ""},
		{"added token beyond vocab_size", map[string]string{"tokenizer.json": tinyByteLevel(string(llama3Pre), vocab, `{"id": 3, "content": "<x>", "special": true}`, "BPE")}, JSONOptions{VocabSize: 3}, "", nil, `dropped 1 added token(s) with ids ≥ vocab_size 3: "<x>" (id 3)`},
		{"--pre not known to the runtime", map[string]string{"tokenizer.json": tinyByteLevel(unknownPre, vocab, "", "BPE")}, JSONOptions{Pre: "deepseek-llm"}, "", nil, `--pre "deepseek-llm" is not one the bundled runtime can tokenize`},
		{"--pre on a SentencePiece-style tokenizer", map[string]string{"tokenizer.json": `{"model": {"type": "BPE", "byte_fallback": true, "vocab": {"a": 0}, "merges": []}}`}, JSONOptions{Pre: "qwen2"}, "", nil, `--pre "qwen2" ignored`},
		{"bad tokenizer_config.json", map[string]string{"tokenizer.json": tinyByteLevel(string(llama3Pre), vocab, "", "BPE"), "tokenizer_config.json": "{"}, JSONOptions{}, "tokenizer_config.json: not a JSON object", nil, ""},
		{"bad config.json", map[string]string{"tokenizer.json": tinyByteLevel(string(llama3Pre), vocab, "", "BPE"), "config.json": "[1]"}, JSONOptions{}, "config.json: not a JSON object", nil, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			fsys := fstest.MapFS{}
			for k, v := range c.files {
				fsys[k] = &fstest.MapFile{Data: []byte(v)}
			}
			v, warnings, err := LoadTokenizerJSONFS(fsys, c.opts)
			if c.wantErr == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				if v == nil || len(v.Tokens) == 0 {
					t.Fatal("no vocabulary")
				}
				if w := strings.Join(warnings, "\n"); (c.warn == "") != (w == "") || !strings.Contains(w, c.warn) {
					t.Errorf("warnings = %q, want %q", warnings, c.warn)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("error = %v, want one containing %q", err, c.wantErr)
			}
			if c.is != nil && !errors.Is(err, c.is) {
				t.Errorf("error %v is not %v", err, c.is)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error message spans lines: %q", err)
			}
		})
	}
}

// TestLoadTokenizerJSONSpecialSources: the SpecialVocab rules through the
// tokenizer.json path: tokenizer_config.json wins over
// special_tokens_map.json, which wins over config.json; names resolve among
// the added tokens only; list chat templates take "default"; EOT comes from
// the end-of-turn table; unresolvable names and out-of-range ids are warned
// about, not errors.
func TestLoadTokenizerJSONSpecialSources(t *testing.T) {
	pre, _ := json.Marshal(map[string]any{"type": "Split", "pattern": map[string]string{"Regex": qwen2SplitJSON}})
	tj := tinyByteLevel(string(pre), `"a": 0, "b": 1, "ab": 2, "c": 3`, `{"id": 4, "content": "<s>", "special": true}, {"id": 5, "content": "<|im_end|>", "special": true}, {"id": 6, "content": "<sep>", "special": false}`, "BPE")
	fsys := fstest.MapFS{
		"tokenizer.json":          {Data: []byte(tj)},
		"tokenizer_config.json":   {Data: []byte(`{"bos_token": {"content": "<s>", "lstrip": false}, "unk_token": "c", "add_eos_token": true, "chat_template": [{"name": "tool_use", "template": "T"}, {"name": "default", "template": "D"}]}`)},
		"special_tokens_map.json": {Data: []byte(`{"bos_token": "a", "eos_token": "<|im_end|>", "sep_token": "<sep>"}`)},
		"config.json":             {Data: []byte(`{"bos_token_id": 3, "cls_token_id": 2, "mask_token_id": 99, "unk_token_id": 0}`)},
	}
	v, warnings, err := LoadTokenizerJSONFS(fsys, JSONOptions{VocabSize: 9})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int32{"bos": v.BOS, "eos": v.EOS, "unk": v.UNK, "sep": v.SEP, "pad": v.PAD, "cls": v.CLS, "mask": v.MASK, "eot": v.EOT}
	// unk: "c" is not an added token, so config.json's unk_token_id 0 is
	// taken.
	want := map[string]int32{"bos": 4, "eos": 5, "unk": 0, "sep": 6, "pad": NoToken, "cls": 2, "mask": NoToken, "eot": 5}
	for k := range want {
		if got[k] != want[k] {
			t.Errorf("%s = %d, want %d", k, got[k], want[k])
		}
	}
	if v.AddBOS != nil || v.AddEOS == nil || !*v.AddEOS {
		t.Errorf("AddBOS/AddEOS = %v/%v, want nil/true", v.AddBOS, v.AddEOS)
	}
	if v.ChatTemplate != "D" {
		t.Errorf("chat template %q, want the default entry", v.ChatTemplate)
	}
	if v.Tokens[7] != "[PAD7]" || v.Types[8] != TypeUnused || v.Types[6] != TypeUserDefined {
		t.Errorf("pads/types: %q type %d, <sep> type %d", v.Tokens[7], v.Types[8], v.Types[6])
	}
	if !strings.Contains(strings.Join(warnings, "\n"), "99") {
		t.Errorf("warnings = %q, want one about mask_token_id 99", warnings)
	}
}

// TestLoadTokenizerJSONPreFamilies: the pre_tokenizer section alone picks
// the family, whatever the vocabulary (spec: "our rule", not the hash).
func TestLoadTokenizerJSONPreFamilies(t *testing.T) {
	split := func(re string) string {
		b, _ := json.Marshal(map[string]any{"type": "Sequence", "pretokenizers": []any{
			map[string]any{"type": "Split", "pattern": map[string]string{"Regex": re}, "behavior": "Isolated"},
			map[string]any{"type": "ByteLevel", "use_regex": false},
		}})
		return string(b)
	}
	for _, c := range []struct{ pre, want string }{
		{split(llama3SplitJSON), "llama-bpe"},
		{split(qwen2SplitJSON), "qwen2"},
		{split(llama3SplitRuntime), "llama-bpe"},
		{`{"type": "ByteLevel", "add_prefix_space": false, "use_regex": true}`, "gpt-2"},
		{`{"type": "ByteLevel"}`, "gpt-2"}, // use_regex defaults to true
	} {
		fsys := fstest.MapFS{"tokenizer.json": {Data: []byte(tinyByteLevel(c.pre, `"a": 0, "b": 1, "ab": 2`, "", "BPE"))}}
		v, _, err := LoadTokenizerJSONFS(fsys, JSONOptions{})
		if err != nil {
			t.Fatalf("%s: %v", c.want, err)
		}
		if v.Model != "gpt2" || v.Pre != c.want {
			t.Errorf("pre_tokenizer %.60s… → %s/%s, want gpt2/%s", c.pre, v.Model, v.Pre, c.want)
		}
	}
}
