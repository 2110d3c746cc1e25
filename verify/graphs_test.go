package verify

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/convert"
	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
	"github.com/bitnet-convert/bitnet-convert/hf"
	"github.com/bitnet-convert/bitnet-convert/internal/testutil"
	"github.com/bitnet-convert/bitnet-convert/runtime"
)

// mutedWeights is a refWeights with some tensors hidden (drop) or read
// as zeros (zero): a reference that lacks one graph piece.
type mutedWeights struct {
	refWeights
	drop, zero func(name string) bool
}

func (m mutedWeights) shape(name string) ([]int, bool) {
	if m.drop != nil && m.drop(name) {
		return nil, false
	}
	return m.refWeights.shape(name)
}

func (m mutedWeights) vector(name string) ([]float64, error) {
	v, err := m.refWeights.vector(name)
	if err == nil && m.zero != nil && m.zero(name) {
		clear(v)
	}
	return v, err
}

// graphCase is one small GGUF of a new graph and the reference that lacks
// its piece.
type graphCase struct {
	name string
	spec testutil.CausalSpec
	// mute makes the reference lack the case's graph piece; the runtime
	// must then fail the thresholds.
	mute func(g *refGeometry, w refWeights) refWeights
}

var allNormIn = []string{"attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down"}

func graphCases() []graphCase {
	base := testutil.CausalSpec{Hidden: 256, Heads: 4, HeadsKV: 2, HeadDim: 64, FF: 512, Vocab: 64, Layers: 2,
		Eps: 1e-6, Theta: 1e6, Type: gguf.TypeTQ2_0, Seed: 12}
	q2 := base
	q2.Arch, q2.Biases = "qwen2", true
	q3 := base
	q3.Arch, q3.QKNorm, q3.Untied, q3.HeadDim = "qwen3", true, true, 128
	q3sub := q3
	q3sub.NormIn, q3sub.NormInEps, q3sub.Untied, q3sub.Type = []string{"attn_output", "ffn_down"}, 1e-8, false, gguf.TypeI2S
	ll := base
	ll.Arch, ll.NormIn, ll.NormInEps, ll.Untied, ll.Type = "llama", allNormIn, 1e-8, true, gguf.TypeI2S
	q3all := q3
	q3all.NormIn, q3all.NormInEps = allNormIn, 1e-6
	isNormIn := func(n string) bool { return strings.Contains(n, "_norm_in.") }
	return []graphCase{
		{"qwen2 biases", q2, func(g *refGeometry, w refWeights) refWeights {
			return mutedWeights{refWeights: w, zero: func(n string) bool { return strings.HasSuffix(n, ".bias") }}
		}},
		{"qwen3 q/k norms", q3, func(g *refGeometry, w refWeights) refWeights {
			g.qkNorm = false
			return mutedWeights{refWeights: w, drop: func(n string) bool { return strings.Contains(n, "_k_norm.") || strings.Contains(n, "_q_norm.") }}
		}},
		{"qwen3 o/down input norms", q3sub, func(g *refGeometry, w refWeights) refWeights {
			return mutedWeights{refWeights: w, drop: isNormIn}
		}},
		{"qwen3 all input norms", q3all, func(g *refGeometry, w refWeights) refWeights {
			return mutedWeights{refWeights: w, drop: isNormIn}
		}},
		{"llama all input norms", ll, func(g *refGeometry, w refWeights) refWeights {
			return mutedWeights{refWeights: w, drop: isNormIn}
		}},
	}
}

// TestGraphsAgainstFloatReference runs each new graph in the runtime
// (its default arithmetic: mainline for qwen2/qwen3, bitnet.cpp for
// llama) and holds its logits to verify's float reference within the
// error model's thresholds (as verify --ref-gguf does across kernels),
// with the greedy continuation equal to the reference's argmax. The same
// reference without the graph piece (no biases, no q/k norms, no input
// norms) must fail, so each piece is seen by the comparison.
func TestGraphsAgainstFloatReference(t *testing.T) {
	dir := t.TempDir()
	prompt := []int32{1, 5, 9, 13, 2, 40, 7, 33, 60, 21}
	const gen = 4
	for _, c := range graphCases() {
		path := testutil.CausalGGUF(t, dir, strings.NewReplacer(" ", "_", "/", "").Replace(c.name)+".gguf", c.spec)
		f, err := reader.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if runtime.IsEmbeddingFile(f.KVs, f.Tensors) {
			t.Fatalf("%s: read as an embedding model", c.name)
		}
		model, err := loadModel(f, runtime.Options{})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		rows, seq, err := runRuntime(model, prompt, gen)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		compare := func(muted bool) *Report {
			g, err := refGeometryOfGGUF(f, path)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			em := newErrorModel(tensorTypes(f), g)
			g.observe, g.observeScores = em.observe, em.observeScores
			var w refWeights = &ggufWeights{f: f}
			if muted {
				w = c.mute(&g, w)
			}
			ref, err := refLogits(w, g, seq, nil)
			if err != nil {
				t.Fatalf("%s (muted %v): reference: %v", c.name, muted, err)
			}
			rep := &Report{Ternary: true, Thresholds: DefaultThresholds(true)}
			deriveThresholds(rep, Options{}, ref, len(rows), em)
			compareNumbers(rep, ref, rows, seq)
			if !muted {
				// Every greedy token must be the reference's argmax. A
				// flip at a reference near-tie (margin below 2·max
				// |Δlogit|) would be within the error model; the seeds
				// give continuations without one.
				vocab := len(ref) / len(seq)
				for p := len(prompt) - 1; p+1 < len(seq); p++ {
					row := ref[p*vocab : (p+1)*vocab]
					if a := argmax64(row); int32(a) != seq[p+1] {
						t.Errorf("%s: greedy token %d is %d, the float reference's argmax %d (reference margin %.3g)", c.name, p+1, seq[p+1], a, topMargin(row))
					}
				}
			}
			return rep
		}
		rep := compare(false)
		if len(rep.Failures) > 0 || rep.Numbers == nil {
			t.Errorf("%s: runtime against the float reference: %v (numbers %+v, thresholds %+v)", c.name, rep.Failures, rep.Numbers, rep.Thresholds)
		} else {
			t.Logf("%s: max |Δ| %.3g (limit %.3g), top-1 %.2f, KL %.2g", c.name, rep.Numbers.MaxAbsDelta, rep.Thresholds.MaxDelta, rep.Numbers.Top1Agreement, rep.Numbers.MeanKL)
		}
		if muted := compare(true); len(muted.Failures) == 0 {
			t.Errorf("%s: the reference without the graph piece also passes (max |Δ| %.3g): the comparison does not see it", c.name, muted.Numbers.MaxAbsDelta)
		}
	}
}

// TestRefGraphOf reads the graph variant from config.json: the class
// decides biases (Qwen2) and q/k norms (Qwen3), Mistral is Llama's graph
// with its window, use_rms_norm sets the input norms' eps.
func TestRefGraphOf(t *testing.T) {
	for _, c := range []struct {
		cfg  map[string]any
		want refGraph
		err  string
	}{
		{map[string]any{"architectures": []any{"Qwen2ForCausalLM"}}, refGraph{qkvBias: true}, ""},
		{map[string]any{"model_type": "qwen3"}, refGraph{qkNorm: true}, ""},
		{map[string]any{"architectures": []any{"Qwen3ForCausalLM"}, "model_type": "qwen2"}, refGraph{qkNorm: true}, ""},
		{map[string]any{"architectures": []any{"MistralForCausalLM"}, "sliding_window": 4096.0}, refGraph{window: 4096}, ""},
		{map[string]any{"architectures": []any{"LlamaForCausalLM"}, "quantization_config": map[string]any{"quant_method": "bitnet", "use_rms_norm": true}}, refGraph{normInEps: 1e-6}, ""},
		{map[string]any{"architectures": []any{"LlamaForCausalLM"}, "quantization_config": map[string]any{"use_rms_norm": true, "rms_norm_eps": 1e-5}}, refGraph{normInEps: 1e-5}, ""},
		{map[string]any{"architectures": []any{"LlamaForCausalLM"}, "quantization_config": map[string]any{"use_rms_norm": true, "rms_norm_eps": -1.0}}, refGraph{}, "rms_norm_eps -1 must be positive"},
		{map[string]any{"architectures": []any{"LlamaForCausalLM"}, "quantization_config": map[string]any{"use_rms_norm": "yes"}}, refGraph{}, `"use_rms_norm" is`},
	} {
		got, err := refGraphOf(&hf.Config{Raw: c.cfg, Path: "config.json"})
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%v: error %v, want %q", c.cfg, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%v: %+v, %v; want %+v", c.cfg, got, err, c.want)
		}
	}
	plan := &convert.Plan{Tensors: []convert.PlannedTensor{{HFName: "model.layers.0.self_attn.o_proj.norm.weight", GGUFName: "blk.0.attn_output_norm_in.weight"}}}
	if !bitDistillNorms(plan) {
		t.Error("bitDistillNorms: o_proj.norm.weight → attn_output_norm_in not recognised")
	}
	plan.Tensors[0].HFName = "model.layers.0.self_attn.o_proj.rms_norm.weight"
	if bitDistillNorms(plan) {
		t.Error("bitDistillNorms: use_rms_norm's rms_norm.weight taken for BitDistill's")
	}
}

// TestRefQKVRefusals: a bias or head norm the class lacks, a missing one it
// needs, and a prompt past Mistral's window are errors naming them.
func TestRefQKVRefusals(t *testing.T) {
	dir := t.TempDir()
	s := testutil.CausalSpec{Arch: "qwen2", Hidden: 256, Heads: 4, HeadsKV: 2, HeadDim: 64, FF: 512, Vocab: 64, Layers: 1,
		Eps: 1e-6, Type: gguf.TypeF32, Biases: true, Seed: 3}
	path := testutil.CausalGGUF(t, dir, "q2.gguf", s)
	f, err := reader.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	g, err := refGeometryOfGGUF(f, filepath.Base(path))
	if err != nil {
		t.Fatal(err)
	}
	w := &ggufWeights{f: f}
	ids := []int32{1, 2, 3}
	for _, c := range []struct {
		name string
		edit func(g *refGeometry) refWeights
		want string
	}{
		{"bias on a class without", func(g *refGeometry) refWeights { g.qkvBias = false; return w }, "tensor blk.0.attn_q.bias: config.json's class has no q/k/v biases"},
		{"missing bias", func(g *refGeometry) refWeights {
			return mutedWeights{refWeights: w, drop: func(n string) bool { return n == "blk.0.attn_k.bias" }}
		}, "tensor blk.0.attn_k.bias is missing"},
		{"missing q norm", func(g *refGeometry) refWeights { g.qkNorm = true; return w }, "tensor blk.0.attn_q_norm.weight is missing"},
		{"past the window", func(g *refGeometry) refWeights { g.window = 2; return w }, "3 positions exceed sliding_window 2"},
	} {
		gg := g
		_, err := refLogits(c.edit(&gg), gg, ids, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

// TestRunNewGraphs runs verify's own entry point on the new graphs: a
// runtime-only check (a causal qwen3 file is not taken for an embedding
// model), and --ref-gguf across kernels (TQ2_0 against the F32 file of the
// same codes), whose float reference reads the qwen archs from the GGUF.
func TestRunNewGraphs(t *testing.T) {
	dir := t.TempDir()
	for _, c := range graphCases() {
		name := strings.NewReplacer(" ", "_", "/", "").Replace(c.name)
		s := c.spec
		s.Type = gguf.TypeTQ2_0
		tq := testutil.CausalGGUF(t, dir, name+"-tq2_0.gguf", s)
		s.Type = gguf.TypeF32
		f32 := testutil.CausalGGUF(t, dir, name+"-f32.gguf", s)
		ids := []int32{1, 5, 9, 13, 2, 40, 7, 33}
		rep, err := Run(Options{GGUF: tq, IDs: ids, Tokens: 2})
		if err != nil || !rep.Pass || rep.Arch != c.spec.Arch {
			t.Errorf("%s: runtime-only verify: %v, %+v", c.name, err, rep)
			continue
		}
		rep, err = Run(Options{GGUF: tq, RefGGUF: f32, IDs: ids, Tokens: 2})
		if err != nil || !rep.Pass || rep.Numbers == nil {
			t.Errorf("%s: verify --ref-gguf: %v, failures %v, notes %v", c.name, err, rep.Failures, rep.Notes)
		}
	}
}
