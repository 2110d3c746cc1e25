package tokenizer

import (
	"encoding/json"
	"reflect"
	"testing"
)

// falconPreJSON is the pre_tokenizer section of a Falcon3-style
// tokenizer.json, built for this test from llama.cpp's facts (no real
// Falcon3 or Falcon-E tokenizer file is available here): Punctuation,
// ByteLevel with its regex, Digits with individual_digits.
const falconPreJSON = `{"model":{"type":"BPE"},"pre_tokenizer":{"type":"Sequence","pretokenizers":[
 {"type":"Punctuation","behavior":"contiguous"},
 {"type":"ByteLevel","add_prefix_space":false,"trim_offsets":true,"use_regex":true},
 {"type":"Digits","individual_digits":true}]}}`

// TestNC17FalconPre (NC-17): the Falcon pre_tokenizer layout is detected as
// falcon3; falcon_e (bitnet.cpp's name for Falcon-E) is a --pre value we
// accept and tokenize; both split as llama.cpp's three regexes do
// (punctuation runs, then the GPT-2 words, then single digits, each applied
// to the pieces of the one before).
func TestNC17FalconPre(t *testing.T) {
	var j hfTokenizerJSON
	if err := json.Unmarshal([]byte(falconPreJSON), &j); err != nil {
		t.Fatal(err)
	}
	if pre, err := j.detectPre(); err != nil || pre != "falcon3" {
		t.Fatalf("detectPre = %q, %v; want falcon3", pre, err)
	}
	if !KnownPre("falcon_e") || !KnownPre("falcon3") {
		t.Fatal("falcon_e / falcon3 not accepted as --pre")
	}
	// The apostrophe and "$" are punctuation (\p{P} and the class), so the
	// first regex cuts them out before the GPT-2 contractions could match.
	want := []string{"Hello", ",", " world", " ", "2", "0", "2", "4", "!!", " it", "'", "s", " ", "$", "5", ".", "\n\n", " ok"}
	for _, name := range []string{"falcon3", "falcon_e"} {
		p, ok := lookupPre(name)
		if !ok {
			t.Fatalf("%s: no runtime pre-tokenizer", name)
		}
		re, err := p.compiledRegex()
		if err != nil {
			t.Fatal(err)
		}
		then, err := p.compiledThen()
		if err != nil {
			t.Fatal(err)
		}
		got, err := splitText(re, "Hello, world 2024!! it's $5.\n\n ok")
		for _, r := range then {
			if err == nil {
				got, err = resplit(r, got)
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: pieces %q\nwant %q", name, got, want)
		}
	}
}
