package tensormap

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/bitnet-convert/bitnet-convert/hf"
)

// Class is the role of a tensor, which decides its output type.
type Class int

// Tensor classes.
const (
	// Projection is a ternary linear weight (q/k/v/o/gate/up/down), HF shape
	// [out, in].
	Projection Class = iota + 1
	// Norm is an RMSNorm weight (1-D). Norms are always stored as F32.
	Norm
	// Embedding is the token embedding, HF shape [vocab, hidden].
	Embedding
	// Output is an untied LM head, HF shape [vocab, hidden].
	Output
	// Bias is a projection's float bias (1-D, [out]; Qwen2's q/k/v), kept
	// F32. A Bias rule matches only the HF stem's ".bias" tensor and maps
	// it to the GGUF stem's ".bias", so it must precede the projection
	// rule of the same stem.
	Bias
)

var classNames = map[Class]string{Projection: "projection", Norm: "norm", Embedding: "embedding", Output: "output", Bias: "bias"}

// String names c.
func (c Class) String() string {
	if s, ok := classNames[c]; ok {
		return s
	}
	return fmt.Sprintf("class(%d)", int(c))
}

// Dim is a size of the model geometry (hf.Geometry) that one dimension of
// a tensor has.
type Dim int

// Geometry sizes, as hf.Config.Geometry reads them from config.json.
const (
	DimHidden  Dim = iota + 1 // hidden_size
	DimQ                      // num_attention_heads × head_dim
	DimKV                     // num_key_value_heads × head_dim
	DimFF                     // intermediate_size
	DimVocab                  // vocab_size
	DimHeadDim                // head_dim (else hidden_size / num_attention_heads)
)

// Shape is a tensor's expected HF shape in geometry sizes: [out, in] for a
// matrix (GGUF ne is the reverse), [n] for a vector.
type Shape []Dim

// Size returns the size d has in g (0 for an unknown Dim).
func (d Dim) Size(g hf.Geometry) uint64 {
	switch d {
	case DimHidden:
		return uint64(g.Hidden)
	case DimQ:
		return uint64(g.Heads) * uint64(g.HeadDim)
	case DimKV:
		return uint64(g.HeadsKV) * uint64(g.HeadDim)
	case DimFF:
		return uint64(g.FF)
	case DimVocab:
		return uint64(g.Vocab)
	case DimHeadDim:
		return uint64(g.HeadDim)
	}
	return 0
}

// Sizes returns s in g: the HF shape a tensor of this rule must have.
func (s Shape) Sizes(g hf.Geometry) []uint64 {
	out := make([]uint64, len(s))
	for i, d := range s {
		out[i] = d.Size(g)
	}
	return out
}

// Why explains the first head-derived dimension of s in g, e.g.
// " (num_attention_heads 32 × head_dim 128 = 4096)", for a shape mismatch
// error ("" when s has none: hidden, FFN and vocabulary sizes are config
// keys themselves).
func (s Shape) Why(g hf.Geometry) string {
	for _, d := range s {
		switch d {
		case DimQ:
			return fmt.Sprintf(" (num_attention_heads %d × head_dim %d = %d)", g.Heads, g.HeadDim, d.Size(g))
		case DimKV:
			return fmt.Sprintf(" (num_key_value_heads %d × head_dim %d = %d)", g.HeadsKV, g.HeadDim, d.Size(g))
		case DimHeadDim:
			return fmt.Sprintf(" (head_dim %d)", g.HeadDim)
		}
	}
	return ""
}

// Rule maps one HF tensor stem to a GGUF stem. HF and GGUF may contain {bid}.
type Rule struct {
	HF    string
	GGUF  string
	Class Class
	// Shape is the HF shape the tensor must have (BR-15: q rows =
	// heads·head_dim, k/v rows = kv_heads·head_dim); the converter checks
	// every tensor against it and dummy writes it.
	Shape Shape
	// Flags are free-form markers the converters read from the table, e.g.
	// "gemma-norm" for the (1+w) fix.
	Flags []string
}

// Table is a compiled list of rules.
type Table struct {
	rules []compiled
}

type compiled struct {
	Rule
	re *regexp.Regexp
}

// Match is the result of a successful lookup.
type Match struct {
	GGUF  string // full GGUF name including the kept suffix
	Class Class
	Block int // layer index, -1 for global tensors
	Rule  Rule
}

// HasFlag reports whether the matched rule carries flag.
func (m Match) HasFlag(flag string) bool {
	for _, f := range m.Rule.Flags {
		if f == flag {
			return true
		}
	}
	return false
}

// New compiles rules. It panics on a malformed pattern: tables are program
// constants, so that is a programmer error.
func New(rules []Rule) *Table {
	t := &Table{}
	for _, r := range rules {
		suffix := `(\.weight|\.bias)$`
		if r.Class == Bias {
			suffix = `(\.bias)$`
		}
		pat := "^" + strings.ReplaceAll(regexp.QuoteMeta(r.HF), `\{bid\}`, `(\d+)`) + suffix
		t.rules = append(t.rules, compiled{Rule: r, re: regexp.MustCompile(pat)})
	}
	return t
}

// Lookup maps the HF name (with its ".weight"/".bias" suffix) to its GGUF
// name. It returns false when no rule matches.
func (t *Table) Lookup(hfName string) (Match, bool) {
	for _, r := range t.rules {
		m := r.re.FindStringSubmatch(hfName)
		if m == nil {
			continue
		}
		bid := -1
		out := r.GGUF
		suffix := m[len(m)-1]
		if strings.Contains(r.HF, "{bid}") {
			n := 0
			for _, ch := range m[1] {
				n = n*10 + int(ch-'0')
				if n > 1<<20 {
					return Match{}, false
				}
			}
			bid = n
			out = strings.ReplaceAll(out, "{bid}", m[1])
		}
		return Match{GGUF: out + suffix, Class: r.Class, Block: bid, Rule: r.Rule}, true
	}
	return Match{}, false
}

// Expected returns every GGUF name (with ".weight") the table produces for a
// model of nBlocks blocks, except the optional output head and the rules
// flagged FlagOptional: the tensors a complete checkpoint of this family
// must contain. Rules that map two HF spellings to one GGUF name count once.
func (t *Table) Expected(nBlocks int) []string {
	var out []string
	seen := map[string]bool{}
	add := func(name string) {
		if !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	for _, r := range t.rules {
		if r.Class == Output || (Match{Rule: r.Rule}).HasFlag(FlagOptional) {
			continue
		}
		suffix := ".weight"
		if r.Class == Bias {
			suffix = ".bias"
		}
		if !strings.Contains(r.GGUF, "{bid}") {
			add(r.GGUF + suffix)
			continue
		}
		for b := 0; b < nBlocks; b++ {
			add(strings.ReplaceAll(r.GGUF, "{bid}", strconv.Itoa(b)) + suffix)
		}
	}
	return out
}

// HFName returns the HF name (with ".weight", or ".bias" for a Bias rule)
// the first rule producing ggufName (a name Expected returns) maps from, so
// an error about a missing tensor can name what the user would search the
// checkpoint for.
func (t *Table) HFName(ggufName string) (string, bool) {
	suffix := ".weight"
	stem, ok := strings.CutSuffix(ggufName, suffix)
	if !ok {
		suffix = ".bias"
		if stem, ok = strings.CutSuffix(ggufName, suffix); !ok {
			return "", false
		}
	}
	for _, r := range t.rules {
		if (r.Class == Bias) != (suffix == ".bias") {
			continue
		}
		if !strings.Contains(r.GGUF, "{bid}") {
			if r.GGUF == stem {
				return r.HF + suffix, true
			}
			continue
		}
		pre, post, _ := strings.Cut(r.GGUF, "{bid}")
		mid, ok := strings.CutPrefix(stem, pre)
		if !ok {
			continue
		}
		num, ok := strings.CutSuffix(mid, post)
		if _, err := strconv.Atoi(num); !ok || err != nil {
			continue
		}
		return strings.ReplaceAll(r.HF, "{bid}", num) + suffix, true
	}
	return "", false
}
