package convert

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
	"github.com/bitnet-convert/bitnet-convert/hf"
	"github.com/bitnet-convert/bitnet-convert/internal/embedfixture"
	"github.com/bitnet-convert/bitnet-convert/internal/testutil"
	"github.com/bitnet-convert/bitnet-convert/tokenizer"
)

const tokenizersDir = "../testdata/tokenizers"

// embedLayerNames are the GGUF tensor names of one layer of each embedding
// arch, written out by hand from spec §5.5 (not from the tensormap table).
var embedLayerNames = map[string][]string{
	"qwen3": {"attn_norm", "attn_q", "attn_k", "attn_v", "attn_output", "attn_q_norm", "attn_k_norm",
		"attn_q_norm_in", "attn_k_norm_in", "attn_v_norm_in", "attn_output_norm_in",
		"ffn_norm", "ffn_gate", "ffn_up", "ffn_down", "ffn_gate_norm_in", "ffn_up_norm_in", "ffn_down_norm_in"},
	"gemma3": {"attn_norm", "attn_q", "attn_k", "attn_v", "attn_output", "attn_q_norm", "attn_k_norm",
		"attn_q_norm_in", "attn_k_norm_in", "attn_v_norm_in", "attn_output_norm_in", "post_attention_norm",
		"ffn_norm", "post_ffw_norm", "ffn_gate", "ffn_up", "ffn_down", "ffn_gate_norm_in", "ffn_up_norm_in", "ffn_down_norm_in"},
}

// gemmaFixed lists, per GGUF stem, the HF name (after layers.N.) of each
// norm and whether the Gemma (1 + w) fix applies to it in gemma3.
var embedNormSources = []struct {
	gguf, hf string
	gemmaFix bool
}{
	{"attn_norm", "input_layernorm", true},
	{"attn_q_norm", "self_attn.q_norm", true},
	{"attn_k_norm", "self_attn.k_norm", true},
	{"attn_q_norm_in", "self_attn.q_proj.norm", false},
	{"attn_k_norm_in", "self_attn.k_proj.norm", false},
	{"attn_v_norm_in", "self_attn.v_proj.norm", false},
	{"attn_output_norm_in", "self_attn.o_proj.norm", false},
	{"ffn_gate_norm_in", "mlp.gate_proj.norm", false},
	{"ffn_up_norm_in", "mlp.up_proj.norm", false},
	{"ffn_down_norm_in", "mlp.down_proj.norm", false},
}

func writeEmbedFixture(t *testing.T, s embedfixture.Shape, opts embedfixture.Options) string {
	t.Helper()
	dir := t.TempDir()
	opts.TokenizersDir = tokenizersDir
	if err := embedfixture.Write(dir, s, opts); err != nil {
		t.Fatal(err)
	}
	return dir
}

// hfValues reads one tensor of the checkpoint in dir as float32.
func hfValues(t *testing.T, ck *hf.Checkpoint, name string) []float32 {
	t.Helper()
	ref, ok := ck.Lookup(name)
	if !ok {
		t.Fatalf("fixture has no %s", name)
	}
	d, err := ck.Read(ref)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Release()
	v, err := d.Float32s(nil)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func f32Tensor(t *testing.T, f *reader.File, name string) []float32 {
	t.Helper()
	ti, ok := f.Tensor(name)
	if !ok {
		t.Fatalf("no tensor %s", name)
	}
	if ti.Type != gguf.TypeF32 {
		t.Fatalf("%s is %s, want F32", name, ti.Type)
	}
	b, err := f.TensorData(name)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(uint32(b[4*i]) | uint32(b[4*i+1])<<8 | uint32(b[4*i+2])<<16 | uint32(b[4*i+3])<<24)
	}
	return out
}

// Acceptance a and c (issue 6): both embedding shapes convert with the real
// tokenizers; the head_dim keys, the tensor names, the Gemma norms (w + 1)
// and the *_norm_in weights (unchanged) are checked value by value; the
// tokenizer exports vocab_size entries with its special tokens and round-trips
// mixed-script text and passes the qwen2 / gemma3 ggml vocab vectors; i2_s
// and f16 give the type policy; tl1/tl2 are refused.
func TestEmbeddingConversion(t *testing.T) {
	for _, tc := range []struct {
		shape   embedfixture.Shape
		pooling string
		wantPT  uint32
		warn    string
	}{
		{embedfixture.Qwen3, "lasttoken", 3, ""},
		{embedfixture.Gemma3, "", 1, "no modules.json"},
	} {
		s := tc.shape
		t.Run(s.Arch, func(t *testing.T) {
			dir := writeEmbedFixture(t, s, embedfixture.Options{Tokenizer: true, Pooling: tc.pooling})
			if s.Arch == "qwen3" {
				// A stray SentencePiece model must not win over tokenizer.json
				// (P5 reads tokenizer.json): checkEmbedTokenizer wants gpt2.
				b, err := os.ReadFile(filepath.Join(tokenizersDir, "llama2", "tokenizer.model"))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, "tokenizer.model"), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			out, plan, err := convertDir(t, dir, Options{OutType: OutF32})
			if err != nil {
				t.Fatal(err)
			}
			f := openGGUF(t, out)
			if f.Arch() != s.Arch {
				t.Fatalf("arch %q, want %q", f.Arch(), s.Arch)
			}
			// KVs (spec §1.4): head_dim to three keys, context default.
			wantU := map[string]uint64{
				"rope.dimension_count": uint64(s.HeadDim), "attention.key_length": uint64(s.HeadDim), "attention.value_length": uint64(s.HeadDim),
				"context_length": 32768, "block_count": uint64(s.Layers), "embedding_length": uint64(s.Hidden),
				"feed_forward_length": uint64(s.FF), "attention.head_count": uint64(s.Heads), "attention.head_count_kv": uint64(s.HeadsKV),
				"pooling_type": uint64(tc.wantPT),
			}
			for k, want := range wantU {
				if v, ok := f.Uint(s.Arch + "." + k); !ok || v != want {
					t.Errorf("%s.%s = %d, %v; want %d", s.Arch, k, v, ok, want)
				}
			}
			if s.HeadDim*s.Heads == s.Hidden {
				t.Fatal("fixture must have head_dim ≠ hidden/heads")
			}
			sc, hasScale := f.Get(s.Arch + ".attention.scale")
			if s.Arch == "gemma3" {
				if !hasScale || sc.V.(float32) != float32(1/math.Sqrt(64)) {
					t.Errorf("gemma3.attention.scale = %v, want 1/√64 (query_pre_attn_scalar 64 ≠ head_dim)", sc.V)
				}
			} else if hasScale {
				t.Error("qwen3 has attention.scale")
			}
			// No window declared: qwen3 has none; gemma3 gets
			// transformers' Gemma3TextConfig defaults (4096, every 6th
			// layer global).
			win, hasWin := f.Uint(s.Arch + ".attention.sliding_window")
			if s.Arch == "gemma3" {
				if !hasWin || win != 4096 {
					t.Errorf("gemma3.attention.sliding_window = %d, %v; want the transformers default 4096", win, hasWin)
				}
			} else if hasWin {
				t.Error("qwen3: sliding_window written although the config declares none")
			}
			if tc.warn != "" && !strings.Contains(strings.Join(plan.Warnings, "\n"), tc.warn) {
				t.Errorf("warnings %q lack %q", plan.Warnings, tc.warn)
			}
			// Names: exactly the mapped names, no output head.
			var want []string
			want = append(want, "token_embd.weight", "output_norm.weight")
			for b := 0; b < s.Layers; b++ {
				for _, n := range embedLayerNames[s.Arch] {
					want = append(want, fmt.Sprintf("blk.%d.%s.weight", b, n))
				}
			}
			var got []string
			for _, ti := range f.Tensors {
				got = append(got, ti.Name)
			}
			sort.Strings(want)
			sort.Strings(got)
			if !slices.Equal(got, want) {
				t.Errorf("tensor names:\n got %v\nwant %v", got, want)
			}
			// Norm values, element by element.
			ck, err := hf.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer ck.Close()
			gemma := s.Arch == "gemma3"
			type src struct {
				gguf, hf string
				fix      bool
			}
			var norms []src
			for b := 0; b < s.Layers; b++ {
				for _, n := range embedNormSources {
					norms = append(norms, src{fmt.Sprintf("blk.%d.%s.weight", b, n.gguf), fmt.Sprintf("layers.%d.%s.weight", b, n.hf), n.gemmaFix && gemma})
				}
				if gemma {
					norms = append(norms,
						src{fmt.Sprintf("blk.%d.post_attention_norm.weight", b), fmt.Sprintf("layers.%d.post_attention_layernorm.weight", b), true},
						src{fmt.Sprintf("blk.%d.ffn_norm.weight", b), fmt.Sprintf("layers.%d.pre_feedforward_layernorm.weight", b), true},
						src{fmt.Sprintf("blk.%d.post_ffw_norm.weight", b), fmt.Sprintf("layers.%d.post_feedforward_layernorm.weight", b), true})
				} else {
					norms = append(norms, src{fmt.Sprintf("blk.%d.ffn_norm.weight", b), fmt.Sprintf("layers.%d.post_attention_layernorm.weight", b), false})
				}
			}
			norms = append(norms, src{"output_norm.weight", "norm.weight", gemma})
			fixed := 0
			for _, n := range norms {
				w := hfValues(t, ck, n.hf)
				g := f32Tensor(t, f, n.gguf)
				for i := range w {
					exp := w[i]
					if n.fix {
						exp = w[i] + 1
					}
					if g[i] != exp {
						t.Fatalf("%s[%d] = %v, want %v (HF %s = %v, gemma fix %v)", n.gguf, i, g[i], exp, n.hf, w[i], n.fix)
					}
				}
				if n.fix {
					fixed++
				}
			}
			if gemma && fixed != 6*s.Layers+1 {
				t.Errorf("%d Gemma norms checked, want %d", fixed, 6*s.Layers+1)
			}
			checkEmbedTokenizer(t, f, s)

			// i2_s and f16: the type policy (norms F32 in every outtype).
			for _, ot := range []OutType{OutI2S, OutF16} {
				out, _, err := convertDir(t, dir, Options{OutType: ot, NoVocab: true})
				if err != nil {
					t.Fatalf("%s: %v", ot, err)
				}
				g := openGGUF(t, out)
				for _, ti := range g.Tensors {
					want := gguf.TypeF32
					switch {
					case ti.Name == "token_embd.weight":
						want = gguf.TypeF16
					case len(ti.Ne) == 2 && ot == OutI2S:
						want = gguf.TypeI2S
					case len(ti.Ne) == 2:
						want = gguf.TypeF16
					}
					if ti.Type != want {
						t.Errorf("%s: %s is %s, want %s", ot, ti.Name, ti.Type, want)
					}
					// Norms carry the same values as in the F32 file (the
					// Gemma fix applied once in every outtype).
					if len(ti.Ne) == 1 && !slices.Equal(f32Tensor(t, g, ti.Name), f32Tensor(t, f, ti.Name)) {
						t.Errorf("%s: %s differs from the F32 file", ot, ti.Name)
					}
				}
			}
			for _, ot := range []OutType{OutTL1, OutTL2} {
				_, _, err := convertDir(t, dir, Options{OutType: ot, NoVocab: true})
				if err == nil || !strings.Contains(err.Error(), "not supported for arch "+s.Arch) || !strings.Contains(err.Error(), "i2_s") {
					t.Errorf("%s: err = %v, want a refusal naming the arch and the supported outtypes", ot, err)
				}
			}
		})
	}
}

// mixedTexts are round-tripped through the exported vocabularies.
var mixedTexts = []string{
	"Hello, world! Sentence embeddings for search.",
	"日本語のテキストと中文混合，还有한국어도 있어요。",
	"العربية: مرحبا بالعالم — Ελληνικά, русский текст, हिन्दी, ไทย",
	"emoji 👩‍👩‍👧‍👦 👍🏽 🇫🇷 and combining e\u0301 n\u0303",
	"numbers 1234567890 3.14159",
	"  tabs\tand\nnew lines  ",
	"runs of   spaces    and\t\ttabs",
}

// checkEmbedTokenizer: acceptance c. vocab_size entries, the special tokens
// of each tokenizer, and encode → decode = identity on mixed scripts.
func checkEmbedTokenizer(t *testing.T, f *reader.File, s embedfixture.Shape) {
	t.Helper()
	v, err := tokenizer.FromGGUF(f.KVs)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Tokens) != s.Vocab {
		t.Errorf("%d tokens, want vocab_size %d", len(v.Tokens), s.Vocab)
	}
	switch s.Arch {
	case "qwen3":
		// P5: eos forced to <|endoftext|> 151643 with add_eos_token.
		if v.Model != "gpt2" || v.Pre != "qwen2" || v.EOS != 151643 || v.Tokens[151643] != "<|endoftext|>" || v.AddEOS == nil || !*v.AddEOS {
			t.Errorf("qwen3 vocab: model %s pre %s eos %d add_eos %v", v.Model, v.Pre, v.EOS, v.AddEOS)
		}
		if v.Tokens[151644] != "<|im_start|>" || v.Types[151644] != tokenizer.TypeControl {
			t.Errorf("<|im_start|> = %q type %d", v.Tokens[151644], v.Types[151644])
		}
	case "gemma3":
		if v.Model != "llama" || v.BOS != 2 || v.Tokens[2] != "<bos>" || v.EOS != 106 || v.AddBOS == nil || !*v.AddBOS || v.AddSpacePrefix == nil || *v.AddSpacePrefix {
			t.Errorf("gemma3 vocab: model %s bos %d eos %d add_bos %v add_space_prefix %v", v.Model, v.BOS, v.EOS, v.AddBOS, v.AddSpacePrefix)
		}
	}
	tok, err := tokenizer.New(v)
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range mixedTexts {
		ids, err := tok.Encode(text, false, false)
		if err != nil {
			t.Fatalf("Encode(%q): %v", text, err)
		}
		back, err := tok.Decode(ids)
		if err != nil || back != text {
			t.Errorf("%s: Decode(Encode(%q)) = %q, %v", s.Arch, text, back, err)
		}
	}
	// The ggml vocab vectors pass through the exported vocabulary.
	vec := map[string]string{"qwen3": "ggml-vocab-qwen2.gguf", "gemma3": "gemma3"}[s.Arch]
	inp, err := os.ReadFile(filepath.Join(tokenizersDir, "vectors", vec+".inp"))
	if err != nil {
		t.Fatal(err)
	}
	outb, err := os.ReadFile(filepath.Join(tokenizersDir, "vectors", vec+".out"))
	if err != nil {
		t.Fatal(err)
	}
	const sep = "\n__ggml_vocab_test__\n"
	ins := strings.Split(strings.TrimSuffix(string(inp), sep), sep)
	lines := strings.Split(strings.TrimSuffix(string(outb), "\n"), "\n")
	if len(ins) != len(lines) || len(ins) < 20 {
		t.Fatalf("%s: %d inputs, %d outputs", vec, len(ins), len(lines))
	}
	for i, in := range ins {
		got, err := tok.Encode(in, false, false)
		if err != nil {
			t.Fatalf("vector %d: %v", i, err)
		}
		if g := strings.Trim(fmt.Sprint(got), "[]"); g != strings.TrimSpace(lines[i]) {
			t.Errorf("%s vector %d %q: got %s, want %s", vec, i, in, g, lines[i])
		}
	}
	ids, err := tok.Encode("hi", true, false)
	if err != nil {
		t.Fatal(err)
	}
	if s.Arch == "qwen3" && ids[len(ids)-1] != 151643 {
		t.Errorf("qwen3 with add_special: %v, want <|endoftext|> last", ids)
	}
	if s.Arch == "gemma3" && ids[0] != 2 {
		t.Errorf("gemma3 with add_special: %v, want <bos> first", ids)
	}
}

// small returns s with a small vocabulary (no tokenizer needed).
func small(s embedfixture.Shape) embedfixture.Shape {
	s.Vocab = 256
	return s
}

// BR-18: an unknown tensor name stops the run listing every unmapped name
// (nothing is written); an lm_head is dropped with a warning and no
// output.weight is written.
func TestBR18EmbeddingUnmappedAndHead(t *testing.T) {
	for _, s := range []embedfixture.Shape{small(embedfixture.Qwen3), small(embedfixture.Gemma3)} {
		t.Run(s.Arch, func(t *testing.T) {
			extra := []hf.WriteTensor{
				embedfixture.Random("layers.0.self_attn.rel_bias.weight", 1, 0, 1, 4),
				embedfixture.Random("layers.1.mlp.extra_proj.norm.weight", 2, 0, 1, 4),
			}
			dir := writeEmbedFixture(t, s, embedfixture.Options{Extra: extra})
			_, _, err := convertDir(t, dir, Options{NoVocab: true})
			if err == nil {
				t.Fatal("unmapped tensors converted")
			}
			for _, n := range []string{"layers.0.self_attn.rel_bias.weight", "layers.1.mlp.extra_proj.norm.weight", "2 tensor(s)"} {
				if !strings.Contains(err.Error(), n) {
					t.Errorf("error %q does not name %s", err, n)
				}
			}
			head := []hf.WriteTensor{embedfixture.Random("lm_head.weight", 3, 0, 0.02, uint64(s.Vocab), uint64(s.Hidden))}
			dir = writeEmbedFixture(t, s, embedfixture.Options{Extra: head})
			out, plan, err := convertDir(t, dir, Options{NoVocab: true})
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := openGGUF(t, out).Tensor("output.weight"); ok {
				t.Error("output.weight written for an embedding model")
			}
			if !strings.Contains(strings.Join(plan.Warnings, "\n"), "lm_head.weight: embedding models have no output head") {
				t.Errorf("warnings %q lack the dropped lm_head", plan.Warnings)
			}
		})
	}
}

// BR-15 for the embedding converter: q_proj rows that disagree with
// heads × head_dim fail naming both numbers; "model."-prefixed names map too.
func TestBR15EmbeddingHeadDim(t *testing.T) {
	s := small(embedfixture.Qwen3)
	dir := writeEmbedFixture(t, s, embedfixture.Options{})
	testutil.EditConfig(t, dir, func(c map[string]any) { c["head_dim"] = 32 })
	_, _, err := convertDir(t, dir, Options{NoVocab: true})
	if err == nil || !strings.Contains(err.Error(), "[256 128]") || !strings.Contains(err.Error(), "4 × head_dim 32 = 128") {
		t.Fatalf("err = %v, want q_proj [256 128] against 4 × 32 = 128", err)
	}
}

// The real configs: P5's KVs from testdata/configs (head_dim 128 and 256 to
// the three keys; the 270M has query_pre_attn_scalar = head_dim, so no
// attention.scale; it declares no sliding window, so it gets transformers'
// Gemma3TextConfig defaults: 4096 tokens, full attention on layers 5, 11
// and 17 of 18); head_dim null falls back to hidden/heads.
func TestEmbeddingHParamsRealConfigs(t *testing.T) {
	for _, c := range []struct {
		file, arch string
		headDim    uint32
	}{
		{"microsoft_bitnet-embedding-0.6b.config.json", "qwen3", 128},
		{"microsoft_bitnet-embedding-270m.config.json", "gemma3", 256},
	} {
		cfg, err := hf.ReadConfig(filepath.Join("../testdata/configs", c.file))
		if err != nil {
			t.Fatal(err)
		}
		conv, err := converterFor(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if conv.Arch() != c.arch || !conv.Embedding() {
			t.Fatalf("%s: arch %s embedding %v", c.file, conv.Arch(), conv.Embedding())
		}
		kvs, err := conv.HParams(cfg)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"rope.dimension_count", "attention.key_length", "attention.value_length"} {
			if v, ok := gguf.Lookup(kvs, c.arch+"."+k); !ok || v.V != c.headDim {
				t.Errorf("%s: %s = %v, want %d", c.file, k, v.V, c.headDim)
			}
		}
		for _, k := range []string{"attention.scale", "attention.causal"} {
			if _, ok := gguf.Lookup(kvs, c.arch+"."+k); ok {
				t.Errorf("%s: %s written", c.file, k)
			}
		}
		win, hasWin := gguf.Lookup(kvs, c.arch+".attention.sliding_window")
		pat, _ := gguf.Lookup(kvs, c.arch+".attention.sliding_window_pattern")
		if c.arch == "gemma3" {
			want := make([]bool, 18)
			for i := range want {
				want[i] = i != 5 && i != 11 && i != 17
			}
			if !hasWin || win.V != uint32(4096) || fmt.Sprint(pat.V) != fmt.Sprint(want) {
				t.Errorf("%s: sliding_window %v pattern %v, want 4096 and %v", c.file, win.V, pat.V, want)
			}
		} else if hasWin {
			t.Errorf("%s: attention.sliding_window written", c.file)
		}
		delete(cfg.Raw, "max_position_embeddings")
		cfg.Raw["head_dim"] = nil
		kvs, err = conv.HParams(cfg)
		if err != nil {
			t.Fatal(err)
		}
		hidden, _, _ := cfg.Int("hidden_size")
		heads, _, _ := cfg.Int("num_attention_heads")
		if v, _ := gguf.Lookup(kvs, c.arch+".attention.key_length"); v.V != uint32(hidden/heads) {
			t.Errorf("%s with head_dim null: key_length %v, want %d", c.file, v.V, hidden/heads)
		}
		if v, _ := gguf.Lookup(kvs, c.arch+".context_length"); v.V != uint32(32768) {
			t.Errorf("%s without max_position_embeddings: context_length %v, want 32768", c.file, v.V)
		}
	}
}

// Config rules of the embedding converter: sliding windows only with their
// layers, unsupported options refused with the key named.
func TestEmbeddingConfigRules(t *testing.T) {
	base := func() map[string]any {
		return map[string]any{"architectures": []any{"Gemma3TextModel"}, "model_type": "gemma3_text", "hidden_size": 128,
			"intermediate_size": 256, "num_hidden_layers": 4, "num_attention_heads": 2, "num_key_value_heads": 1,
			"head_dim": 128, "rms_norm_eps": 1e-6, "vocab_size": 256, "hidden_activation": "gelu_pytorch_tanh"}
	}
	for _, c := range []struct {
		name string
		edit func(map[string]any)
		want string // error substring; "" = ok
		kvs  map[string]any
	}{
		{"plain: transformers defaults", func(map[string]any) {}, "",
			map[string]any{"gemma3.attention.sliding_window": uint32(4096), "gemma3.attention.sliding_window_pattern": []bool{true, true, true, true}, "gemma3.rope.freq_base_swa": float32(10000)}},
		{"window off", func(m map[string]any) { m["sliding_window"] = nil }, "", nil},
		{"pattern 2 without window", func(m map[string]any) { m["sliding_window_pattern"] = 2 }, "",
			map[string]any{"gemma3.attention.sliding_window": uint32(4096), "gemma3.attention.sliding_window_pattern": []bool{true, false, true, false}}},
		{"all full", func(m map[string]any) { m["sliding_window_pattern"] = 1 }, "", nil},
		{"window and pattern", func(m map[string]any) { m["sliding_window"] = 512; m["sliding_window_pattern"] = 2 }, "",
			map[string]any{"gemma3.attention.sliding_window": uint32(512), "gemma3.attention.sliding_window_pattern": []bool{true, false, true, false}, "gemma3.rope.freq_base_swa": float32(10000)}},
		{"layer_types", func(m map[string]any) {
			m["sliding_window"] = 64
			m["rope_local_base_freq"] = 5000.0
			m["layer_types"] = []any{"full_attention", "sliding_attention", "sliding_attention", "full_attention"}
		}, "", map[string]any{"gemma3.attention.sliding_window_pattern": []bool{false, true, true, false}, "gemma3.rope.freq_base_swa": float32(5000)}},
		{"window without layers", func(m map[string]any) { m["sliding_window"] = 512; m["num_hidden_layers"] = 6; m["layer_types"] = nil }, "",
			map[string]any{"gemma3.attention.sliding_window": uint32(512), "gemma3.attention.sliding_window_pattern": []bool{true, true, true, true, true, false}}},
		{"layer_types wrong length", func(m map[string]any) { m["sliding_window"] = 8; m["layer_types"] = []any{"full_attention"} }, "layer_types has 1 entries", nil},
		{"softcap", func(m map[string]any) { m["attn_logit_softcapping"] = 50.0 }, "attn_logit_softcapping", nil},
		{"bidirectional", func(m map[string]any) { m["use_bidirectional_attention"] = true }, "", map[string]any{"gemma3.attention.causal": false, "gemma3.attention.sliding_window": uint32(4096)}},
		{"rope_scaling", func(m map[string]any) { m["rope_scaling"] = map[string]any{"type": "linear", "factor": 8.0} }, "rope_scaling", nil},
		{"activation", func(m map[string]any) { m["hidden_activation"] = "relu" }, `hidden_activation "relu"`, nil},
		{"causal LM", func(m map[string]any) { m["architectures"] = []any{"Gemma3ForCausalLM"} }, "only the BitNet embedding models (Gemma3TextModel)", nil},
		{"qwen sliding", func(m map[string]any) {
			m["architectures"] = []any{"Qwen3Model"}
			m["model_type"] = "qwen3"
			m["hidden_act"] = "silu"
			m["use_sliding_window"] = true
		}, "use_sliding_window", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			raw := base()
			c.edit(raw)
			dir := t.TempDir()
			testutil.WriteJSON(t, filepath.Join(dir, "config.json"), raw)
			cfg, err := hf.ReadConfig(filepath.Join(dir, "config.json"))
			if err != nil {
				t.Fatal(err)
			}
			var kvs []gguf.KV
			conv, err := converterFor(cfg)
			if err == nil {
				kvs, err = conv.HParams(cfg)
			}
			if c.want != "" {
				if err == nil || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("err = %v, want %q", err, c.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for k, want := range c.kvs {
				v, ok := gguf.Lookup(kvs, k)
				if !ok || fmt.Sprint(v.V) != fmt.Sprint(want) {
					t.Errorf("%s = %v, want %v", k, v.V, want)
				}
			}
			if c.kvs == nil {
				for _, k := range []string{"gemma3.attention.sliding_window", "gemma3.attention.causal"} {
					if _, ok := gguf.Lookup(kvs, k); ok {
						t.Errorf("%s written", k)
					}
				}
			}
		})
	}
}

// ReadPooling: sentence-transformers files → pooling type, warnings and
// errors.
func TestReadPooling(t *testing.T) {
	mods := func(path, typ string, after ...string) string {
		s := `[{"idx":0,"name":"0","path":"","type":"sentence_transformers.models.Transformer"},{"idx":1,"name":"1","path":"` + path + `","type":"` + typ + `"}`
		for i, a := range after {
			s += fmt.Sprintf(`,{"idx":%d,"name":"%d","path":"%d_x","type":"%s"}`, i+2, i+2, i+2, a)
		}
		return s + "]"
	}
	pool := func(mode string) string {
		return `{"word_embedding_dimension": 8, "pooling_mode_cls_token": ` + fmt.Sprint(mode == "cls") +
			`, "pooling_mode_mean_tokens": ` + fmt.Sprint(mode == "mean") + `, "pooling_mode_max_tokens": ` + fmt.Sprint(mode == "max") +
			`, "pooling_mode_lasttoken": ` + fmt.Sprint(mode == "last") + `}`
	}
	for _, c := range []struct {
		name    string
		files   map[string]string
		want    PoolingType
		warn    string
		wantErr string
	}{
		{"no modules.json", nil, PoolingMean, "no modules.json", ""},
		{"mean", map[string]string{"modules.json": mods("1_Pooling", "sentence_transformers.models.Pooling"), "1_Pooling/config.json": pool("mean")}, PoolingMean, "", ""},
		{"cls", map[string]string{"modules.json": mods("1_Pooling", "sentence_transformers.models.Pooling"), "1_Pooling/config.json": pool("cls")}, PoolingCLS, "", ""},
		{"last", map[string]string{"modules.json": mods("pool", "sentence_transformers.models.Pooling", "sentence_transformers.models.Normalize"), "pool/config.json": pool("last")}, PoolingLast, "", ""},
		{"dense after", map[string]string{"modules.json": mods("1_Pooling", "sentence_transformers.models.Pooling", "sentence_transformers.models.Dense"), "1_Pooling/config.json": pool("mean")}, PoolingMean, "is not converted", ""},
		{"no pooling module", map[string]string{"modules.json": `[{"idx":0,"name":"0","path":"","type":"sentence_transformers.models.Transformer"}]`}, PoolingMean, "no Pooling module", ""},
		{"missing config", map[string]string{"modules.json": mods("1_Pooling", "sentence_transformers.models.Pooling")}, PoolingMean, "1_Pooling", ""},
		{"no mode", map[string]string{"modules.json": mods("1_Pooling", "sentence_transformers.models.Pooling"), "1_Pooling/config.json": pool("none")}, PoolingMean, "enables no pooling mode", ""},
		{"max", map[string]string{"modules.json": mods("1_Pooling", "sentence_transformers.models.Pooling"), "1_Pooling/config.json": pool("max")}, 0, "", "pooling_mode_max_tokens"},
		{"escape", map[string]string{"modules.json": mods("../x", "sentence_transformers.models.Pooling")}, 0, "", "leaves the model directory"},
		{"bad json", map[string]string{"modules.json": `{"not": "a list"}`}, 0, "", "modules.json is not a JSON list"},
		{"bad pool json", map[string]string{"modules.json": mods("p", "sentence_transformers.models.Pooling"), "p/config.json": `[1,`}, 0, "", "is not a JSON object"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, body := range c.files {
				p := filepath.Join(dir, filepath.FromSlash(name))
				os.MkdirAll(filepath.Dir(p), 0o755)
				if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, warns, err := ReadPooling(dir)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("pooling %d, want %d", got, c.want)
			}
			joined := strings.Join(warns, "\n")
			if (c.warn == "") != (joined == "") || !strings.Contains(joined, c.warn) {
				t.Errorf("warnings %q, want %q", warns, c.warn)
			}
		})
	}
}

// FuzzReadPooling: arbitrary modules.json and pooling config never panic.
func FuzzReadPooling(f *testing.F) {
	f.Add(`[{"path":"1_Pooling","type":"sentence_transformers.models.Pooling"}]`, `{"pooling_mode_lasttoken":true}`)
	f.Add(`[{"path":"","type":"x.Pooling"}]`, `{"pooling_mode_mean_tokens":true}`)
	f.Add(`[{"path":"../../etc","type":"Pooling"}]`, `{}`)
	f.Add(`[]`, `null`)
	f.Add(`[{"path":1}]`, `{"pooling_mode_cls_token":"yes"}`)
	f.Fuzz(func(t *testing.T, modules, pool string) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "modules.json"), []byte(modules), 0o644)
		os.MkdirAll(filepath.Join(dir, "1_Pooling"), 0o755)
		os.WriteFile(filepath.Join(dir, "1_Pooling", "config.json"), []byte(pool), 0o644)
		pt, _, err := ReadPooling(dir)
		if err == nil && (pt < PoolingMean || pt > PoolingLast) {
			t.Fatalf("pooling %d without error", pt)
		}
	})
}
