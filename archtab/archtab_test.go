package archtab

import (
	"slices"
	"strings"
	"testing"
)

// TestTargets pins the GGUF arch each runtime loads per row: mainline
// llama.cpp knows only "bitnet" for the BitNet graphs (ggml-org/llama.cpp
// src/llama-arch.cpp), bitnet.cpp and ik_llama.cpp keep their names.
func TestTargets(t *testing.T) {
	cases := []struct {
		arch string
		rt   Runtime
		want string
	}{
		{"bitnet", Mainline, "bitnet"},
		{"bitnet-b1.58", Mainline, "bitnet"},
		{"bitnet-25", Mainline, "bitnet"},
		{"bitnet-b1.58", BitnetCpp, "bitnet-b1.58"},
		{"bitnet-25", IK, "bitnet-25"},
		{"llama", Mainline, "llama"},
		{"llama", BitnetCpp, "llama"},
		{"qwen3", BitnetCpp, "qwen3"},
		{"gemma3", Mainline, "gemma3"}, // no mainline graph: unchanged
		{"unknown", Mainline, "unknown"},
		{"bitnet", "", "bitnet"},
	}
	for _, c := range cases {
		if got := TargetArch(c.arch, c.rt); got != c.want {
			t.Errorf("TargetArch(%q, %q) = %q, want %q", c.arch, c.rt, got, c.want)
		}
	}
}

// TestSets pins the arch sets the consumers used to list by hand.
func TestSets(t *testing.T) {
	var tl2, bitnetCpp, bitnet []string
	for _, a := range All() {
		if TL2(a.GGUF) && !slices.Contains(tl2, a.GGUF) {
			tl2 = append(tl2, a.GGUF)
		}
		if a.BitnetCpp() {
			bitnetCpp = append(bitnetCpp, a.GGUF)
		}
		if a.BitNet() {
			bitnet = append(bitnet, a.GGUF)
		}
	}
	for _, c := range []struct {
		name      string
		got, want []string
	}{
		{"TL2", tl2, []string{"bitnet", "bitnet-b1.58", "bitnet-25", "llama"}},
		{"bitnet.cpp causal graphs", bitnetCpp, []string{"bitnet", "bitnet-b1.58", "bitnet-25", "llama"}},
		{"BitNet (sub-LN) graphs", bitnet, []string{"bitnet", "bitnet-b1.58", "bitnet-25"}},
	} {
		if !slices.Equal(c.got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, c.got, c.want)
		}
	}
	if Canonical("bitnet-25") != "bitnet-b1.58" || Canonical("bitnet") != "bitnet" {
		t.Errorf("Canonical: bitnet-25 → %q, bitnet → %q", Canonical("bitnet-25"), Canonical("bitnet"))
	}
	if Causal("qwen3") != nil && Causal("qwen3").Embedding {
		t.Errorf("Causal(qwen3) returned the embedding row")
	}
	if Embedding("qwen3") != Qwen3Embedding || Embedding("llama") != nil {
		t.Errorf("Embedding lookups wrong")
	}
}

// TestRowsConsistent checks every row against the rules the consumers rely
// on: a table and a key set where needed, HF classes shared only by rows
// that hidden_act tells apart, aliases naming a real row, every target
// runtime named.
func TestRowsConsistent(t *testing.T) {
	seenAct := map[string]string{}
	for _, a := range All() {
		if a.Table == nil {
			t.Errorf("%s: no tensormap table", a.GGUF)
		}
		if !a.Embedding && a.HParams == nil {
			t.Errorf("%s: causal row without a hyper-parameter key set", a.GGUF)
		}
		if a.Rope != RopeNeox && a.Rope != RopeNorm {
			t.Errorf("%s: rope pairing unset", a.GGUF)
		}
		if a.AliasOf != "" && Causal(a.AliasOf) == nil {
			t.Errorf("%s: alias of unknown arch %q", a.GGUF, a.AliasOf)
		}
		if len(a.HF) == 0 && a.AliasOf == "" {
			t.Errorf("%s: neither an HF class nor an alias", a.GGUF)
		}
		for rt := range a.Targets {
			if rt != BitnetCpp && rt != Mainline && rt != IK {
				t.Errorf("%s: unknown runtime %q", a.GGUF, rt)
			}
		}
		for _, class := range a.HF {
			rows := ByHF(class)
			if len(rows) == 1 {
				continue
			}
			for _, act := range a.HiddenAct {
				key := class + "/" + act
				if prev, dup := seenAct[key]; dup && prev != a.GGUF {
					t.Errorf("%s and %s both claim %s hidden_act %q", prev, a.GGUF, class, act)
				}
				seenAct[key] = a.GGUF
			}
			if len(a.HiddenAct) == 0 {
				t.Errorf("%s: class %s has %d rows but this one names no hidden_act", a.GGUF, class, len(rows))
			}
		}
		if m, ok := a.Table.Lookup(a.StripPrefix + prefixOf(a) + "embed_tokens.weight"); !ok || m.GGUF != "token_embd.weight" {
			t.Errorf("%s: table does not map the token embedding (%v)", a.GGUF, m)
		}
	}
}

// prefixOf is the HF module prefix of a row's tensors ("model." for the
// causal LMs, none for the embedding models, whose converter strips it).
func prefixOf(a *Arch) string {
	if a.Embedding || strings.HasPrefix(a.StripPrefix, "model.") {
		return ""
	}
	return "model."
}
