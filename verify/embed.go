package verify

import (
	"errors"
	"fmt"
	"math"

	"github.com/bitnet-convert/bitnet-convert/convert"
	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
	"github.com/bitnet-convert/bitnet-convert/runtime"
	"github.com/bitnet-convert/bitnet-convert/tokenizer"
)

// DefaultEmbedPrompts are the texts an embedding model is checked on when no
// prompt is given: mixed lengths, scripts and punctuation.
var DefaultEmbedPrompts = []string{
	"The quick brown fox jumps over the lazy dog.",
	"BitNet b1.58 uses ternary weights {-1, 0, 1} and 8-bit activations.",
	"Quelle est la capitale de la France ? Paris, bien sûr.",
	"日本語の文章と中文句子，以及한국어 문장。",
	"what is a sentence embedding",
}

// EmbedCheck is the comparison of one prompt's embedding.
type EmbedCheck struct {
	Prompt string  `json:"prompt,omitempty"`
	Tokens int     `json:"tokens"`
	Cosine float64 `json:"cosine"` // runtime vs reference; 0 without a reference
	Norm   float64 `json:"norm"`   // |runtime embedding| (1 after normalisation)
}

// poolNames are the pooling names of the reference, by runtime mode.
var poolNames = map[runtime.PoolMode]string{runtime.PoolMean: "mean", runtime.PoolCLS: "cls", runtime.PoolLast: "last"}

// embedInput is one prompt as text (may be empty for ids) and ids.
type embedInput struct {
	text string
	ids  []int32
}

// runEmbedding verifies an embedding-model GGUF (runtime.IsEmbeddingArch):
// structure and metadata against the checkpoint as for LMs, then per prompt
// the cosine similarity between the runtime's pooled, L2-normalised
// embedding and the float reference's (reference_embed.go). The first
// prompt under Thresholds.MinCosine is named in the first numeric failure.
// Without HF only the runtime checks run (finite, unit-length embeddings).
func runEmbedding(f *reader.File, rep *Report, opts Options) (*Report, error) {
	model, err := runtime.LoadEmbedding(runtime.File{KVs: f.KVs, Tensors: f.Tensors, Data: f.TensorData}, runtime.Options{Threads: opts.Threads})
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", opts.GGUF, err)
	}
	mode := model.Params.Pooling
	if opts.Pooling != "" {
		if mode, err = runtime.ParsePoolMode(opts.Pooling); err != nil {
			return nil, err
		}
	}
	inputs, err := embedInputs(f, opts)
	if err != nil {
		return nil, err
	}
	var ref *embedRef
	if opts.HF != "" {
		src, err := convert.OpenSource(opts.HF, convert.Options{WeightScale: opts.WeightScale, Threads: opts.Threads})
		if err != nil {
			return nil, err
		}
		defer src.Close()
		checkStructure(rep, f, src, opts)
		checkMetadata(rep, f, src)
		if ref, err = buildEmbedRef(src, opts.HF); err != nil {
			rep.fail("float reference: %v", err)
		}
	}
	for i, in := range inputs {
		rep.IDs = append(rep.IDs, in.ids...)
		emb, err := model.Embed(in.ids, mode)
		if err != nil {
			return nil, fmt.Errorf("runtime, prompt %d: %w", i+1, err)
		}
		c := EmbedCheck{Prompt: in.text, Tokens: len(in.ids), Norm: l2(emb)}
		if !finite(emb) || math.Abs(c.Norm-1) > 1e-3 {
			rep.fail("prompt %d %q: runtime embedding is not finite and unit-length (norm %.4g)", i+1, in.text, c.Norm)
		}
		if ref != nil {
			want, err := ref.embedding(in.ids, poolNames[mode])
			if err != nil {
				rep.fail("float reference, prompt %d: %v", i+1, err)
			} else {
				c.Cosine = cosine(emb, want)
				if !(c.Cosine >= rep.Thresholds.MinCosine) {
					rep.fail("prompt %d %q: cosine similarity %.7g < %.7g between the runtime and the float reference", i+1, in.text, c.Cosine, rep.Thresholds.MinCosine)
				}
			}
		}
		rep.Embeddings = append(rep.Embeddings, c)
	}
	rep.Pass = len(rep.Failures) == 0
	return rep, nil
}

// embedInputs returns the prompts to embed: IDs as one input; else Prompts,
// Prompt or DefaultEmbedPrompts tokenized with the file's vocabulary (BOS /
// EOS as its add_* flags say). A file without a vocabulary needs IDs, or
// gets two fixed id sequences.
func embedInputs(f *reader.File, opts Options) ([]embedInput, error) {
	if len(opts.IDs) > 0 {
		return []embedInput{{ids: opts.IDs}}, nil
	}
	prompts := opts.Prompts
	if len(prompts) == 0 && opts.Prompt != "" {
		prompts = []string{opts.Prompt}
	}
	if _, ok := f.Get("tokenizer.ggml.tokens"); !ok {
		if len(prompts) > 0 {
			return nil, fmt.Errorf("%s has no vocabulary: pass --ids instead of --prompt", opts.GGUF)
		}
		n, _ := f.Uint(f.Arch() + ".vocab_size")
		n = max(n, 2)
		mk := func(xs ...int64) []int32 {
			out := make([]int32, len(xs))
			for i, x := range xs {
				out[i] = int32(x % int64(n))
			}
			return out
		}
		return []embedInput{{ids: mk(1, 100, 200, 300, 400, 7, 8)}, {ids: mk(5, 17, 29)}}, nil
	}
	if len(prompts) == 0 {
		prompts = DefaultEmbedPrompts
	}
	v, err := tokenizer.FromGGUF(f.KVs)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", opts.GGUF, err)
	}
	tok, err := tokenizer.New(v)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", opts.GGUF, err)
	}
	var out []embedInput
	for _, p := range prompts {
		ids, err := tok.Encode(p, true, false)
		if err != nil {
			return nil, fmt.Errorf("prompt %q: %w", p, err)
		}
		if len(ids) == 0 {
			return nil, errors.New("prompt " + fmt.Sprintf("%q", p) + " tokenizes to no tokens")
		}
		out = append(out, embedInput{text: p, ids: ids})
	}
	return out, nil
}

func l2(v []float32) float64 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}

func finite(v []float32) bool {
	for _, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return false
		}
	}
	return true
}

// cosine is a·b/(|a||b|) in float64 (0 when either is zero).
func cosine(a []float32, b []float64) float64 {
	var ab, aa, bb float64
	for i, x := range a {
		ab += float64(x) * b[i]
		aa += float64(x) * float64(x)
		bb += b[i] * b[i]
	}
	if aa == 0 || bb == 0 {
		return 0
	}
	return ab / math.Sqrt(aa*bb)
}
