package runtime

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/convert"
	"github.com/bitnet-convert/bitnet-convert/dummy"
	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
	"github.com/bitnet-convert/bitnet-convert/internal/testutil"
)

// mainlineHomeDir holds what mainline llama.cpp computed on our files
// (testdata/golden/mainline-home/README.md).
const mainlineHomeDir = "../testdata/golden/mainline-home"

// llamaSmallConfig is the Llama-class dummy of mainline-home: the layout of
// Llama3-8B-1.58-100B-tokens (presets/Llama3-8B-1.58-100B-tokens.toml:
// untied head, GQA, head_dim 128, rope θ 500000, SiLU, packed U8 +
// weight_scale with BitLinear's divide) at reduced size.
func llamaSmallConfig() map[string]any {
	return map[string]any{
		"architectures": []any{"LlamaForCausalLM"}, "attention_bias": false, "attention_dropout": 0.0,
		"bos_token_id": 1, "eos_token_id": 2, "hidden_act": "silu", "hidden_size": 512, "initializer_range": 0.02,
		"intermediate_size": 1792, "max_position_embeddings": 8192, "model_type": "llama", "num_attention_heads": 4,
		"num_hidden_layers": 2, "num_key_value_heads": 1, "pretraining_tp": 1, "rms_norm_eps": 1e-05,
		"rope_theta": 500000.0, "tie_word_embeddings": false, "torch_dtype": "bfloat16", "use_cache": true,
		"vocab_size": 512, "quantization_config": map[string]any{"quant_method": "bitnet"},
	}
}

// bitnet384Config is the golden tiny model's config.json with projection
// rows of 384 (hidden 384, FFN 768, 6 heads / 2 KV heads): a length Q2_0's
// 64-blocks hold and TQ's 256-blocks do not.
func bitnet384Config() map[string]any {
	return map[string]any{
		"architectures": []any{"BitnetForCausalLM"}, "model_type": "bitnet", "hidden_size": 384, "intermediate_size": 768,
		"num_hidden_layers": 2, "num_attention_heads": 6, "num_key_value_heads": 2, "vocab_size": 512,
		"max_position_embeddings": 2048, "rms_norm_eps": 1e-05, "rope_theta": 10000.0, "hidden_act": "silu",
		"attention_bias": false, "tie_word_embeddings": true, "bos_token_id": 1, "eos_token_id": 2, "input_bits": 8,
		"weight_bits": 1, "torch_dtype": "bfloat16",
	}
}

// reducedConfig reads testdata/configs/file (a published model's
// config.json, testdata/configs/README.md) and replaces the keys of set:
// the reduced-size variant the mainline-home files are made from.
func reducedConfig(t *testing.T, file string, set map[string]any) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("../testdata/configs", file))
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := json.Unmarshal(data, &cfg); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	for k, v := range set {
		cfg[k] = v
	}
	return cfg
}

// falconeSmallConfig is Falcon-E-1B-Base's config
// (testdata/configs/tiiuae_Falcon-E-1B-Base.config.json: Llama with packed
// projections, onebitllms' quantization_config without linear_class or
// use_rms_norm, so BitLinear's divide; untied head; head_dim 256) at
// reduced size: hidden 512, FFN 1024, 2 heads / 1 KV head, 2 layers,
// vocab 512.
func falconeSmallConfig(t *testing.T) map[string]any {
	return reducedConfig(t, "tiiuae_Falcon-E-1B-Base.config.json", map[string]any{
		"hidden_size": 512, "intermediate_size": 1024, "num_attention_heads": 2, "num_key_value_heads": 1,
		"head_dim": 256, "num_hidden_layers": 2, "vocab_size": 512,
	})
}

// mistralSmallConfig is Mistral-7B-v0.1's config
// (testdata/configs/mistralai_Mistral-7B-v0.1.config.json: untied head,
// GQA, head_dim 128, rope θ 10000, sliding window 4096, which prompts of
// 43 tokens never reach) at reduced size: hidden 512, FFN 1792, 4 heads /
// 1 KV head, 2 layers, vocab 512; an HF BitNet checkpoint (packed,
// BitLinear's divide).
func mistralSmallConfig(t *testing.T) map[string]any {
	return reducedConfig(t, "mistralai_Mistral-7B-v0.1.config.json", map[string]any{
		"hidden_size": 512, "intermediate_size": 1792, "num_attention_heads": 4, "num_key_value_heads": 1,
		"num_hidden_layers": 2, "vocab_size": 512,
	})
}

// qwen2SmallConfig is Qwen2.5-0.5B's config
// (testdata/configs/Qwen_Qwen2.5-0.5B.config.json: q/k/v biases, tied head,
// rope θ 1e6, eps 1e-6) at reduced size: hidden 512, FFN 1024, 8 heads / 2
// KV heads (head_dim 64, as the model's 896/14), 2 layers, vocab 512; an HF
// BitNet checkpoint (packed, BitLinear's divide; the biases stay float).
func qwen2SmallConfig(t *testing.T) map[string]any {
	return reducedConfig(t, "Qwen_Qwen2.5-0.5B.config.json", map[string]any{
		"hidden_size": 512, "intermediate_size": 1024, "num_attention_heads": 8, "num_key_value_heads": 2,
		"num_hidden_layers": 2, "vocab_size": 512,
	})
}

// qwen3SmallConfig is Qwen3-0.6B's config
// (testdata/configs/Qwen_Qwen3-0.6B.config.json: per-head q/k RMS norms,
// explicit head_dim 128 larger than hidden/heads, tied head, rope θ 1e6) at
// reduced size: hidden 512, FFN 1024, 8 heads / 4 KV heads of 128 (q rows
// 1024), 2 layers, vocab 512; an HF BitNet checkpoint with AutoBitLinear
// (packed, the multiply scale rule).
func qwen3SmallConfig(t *testing.T) map[string]any {
	return reducedConfig(t, "Qwen_Qwen3-0.6B.config.json", map[string]any{
		"hidden_size": 512, "intermediate_size": 1024, "num_attention_heads": 8, "num_key_value_heads": 4,
		"head_dim": 128, "num_hidden_layers": 2, "vocab_size": 512,
	})
}

// bonsaiSmallConfig is Ternary-Bonsai-8B-unpacked's config
// (testdata/configs/prism-ml_Ternary-Bonsai-8B-unpacked.config.json: Qwen3,
// dense F16, no quantization_config, untied head) at reduced size: hidden
// 512, FFN 1024, 8 heads / 4 KV heads of 128, 2 layers, vocab 512. With
// dummy's GroupScaled its projections are group-scaled ternary (one scale
// per 128 inputs), which only Q2_0 holds exactly.
func bonsaiSmallConfig(t *testing.T) map[string]any {
	return reducedConfig(t, "prism-ml_Ternary-Bonsai-8B-unpacked.config.json", map[string]any{
		"hidden_size": 512, "intermediate_size": 1024, "num_attention_heads": 8, "num_key_value_heads": 4,
		"head_dim": 128, "num_hidden_layers": 2, "vocab_size": 512,
	})
}

// mainlineHomeModels are the models of mainline-home in the order
// TestWriteMainlineHomeFiles writes them.
var mainlineHomeModels = []string{"tiny", "llama-small", "bitnet384", "falcone-small", "mistral-small", "qwen2-small", "qwen3-small", "bonsai-small"}

// writeMainlineHomeFiles writes the files mainline-home's runs used into
// dir: our hf2gguf TQ1_0/TQ2_0 (and the F32 mainline's llama-quantize made
// its Q2_0 files from) of the golden tiny model ("tiny-*") and of the
// Llama-class dummy ("llama-small-*", its checkpoint in dir/llama-small)
// and of the Falcon-E-class one ("falcone-small-*"), and the F32 of the
// 384-row dummy ("bitnet384-f32", dir/bitnet384); only those of the named
// models (mainlineHomeModels).
// It returns the paths by name (file name without .gguf).
func writeMainlineHomeFiles(t *testing.T, dir string, models ...string) map[string]string {
	t.Helper()
	ctx := context.Background()
	paths := map[string]string{}
	for _, model := range models {
		src := filepath.Join(tinyDir, "hf")
		types := []convert.OutType{convert.OutF32, convert.OutTQ1_0, convert.OutTQ2_0}
		switch model {
		case "llama-small":
			src = filepath.Join(dir, model)
			if _, err := dummy.Generate(ctx, src, dummy.Options{Config: llamaSmallConfig(), Packed: true, LinearClass: "bitlinear",
				Tokenizer: filepath.Join(tinyDir, "hf"), Seed: 1, Force: true}); err != nil {
				t.Fatal(err)
			}
		case "mistral-small", "qwen2-small", "qwen3-small":
			src = filepath.Join(dir, model)
			opts := dummy.Options{Packed: true, LinearClass: "bitlinear", Tokenizer: filepath.Join(tinyDir, "hf"), Seed: 1, Force: true}
			switch model {
			case "mistral-small":
				opts.Config = mistralSmallConfig(t)
			case "qwen2-small":
				opts.Config = qwen2SmallConfig(t)
			default:
				opts.Config, opts.LinearClass = qwen3SmallConfig(t), "autobitlinear"
			}
			if _, err := dummy.Generate(ctx, src, opts); err != nil {
				t.Fatal(err)
			}
		case "bonsai-small":
			src = filepath.Join(dir, model)
			if _, err := dummy.Generate(ctx, src, dummy.Options{Config: bonsaiSmallConfig(t), GroupScaled: true,
				Tokenizer: filepath.Join(tinyDir, "hf"), Seed: 1, Force: true}); err != nil {
				t.Fatal(err)
			}
			q2, err := convert.ParseOutType("q2_0")
			if err != nil {
				t.Fatal(err)
			}
			types = []convert.OutType{q2} // exact only in Q2_0: our file is the one mainline runs
		case "falcone-small":
			src = filepath.Join(dir, model)
			if _, err := dummy.Generate(ctx, src, dummy.Options{Config: falconeSmallConfig(t), Packed: true,
				Tokenizer: filepath.Join(tinyDir, "hf"), Seed: 1, Force: true}); err != nil {
				t.Fatal(err)
			}
		case "bitnet384":
			src = filepath.Join(dir, model)
			if _, err := dummy.Generate(ctx, src, dummy.Options{Config: bitnet384Config(), Tokenizer: filepath.Join(tinyDir, "hf"), Seed: 1, Force: true}); err != nil {
				t.Fatal(err)
			}
			types = types[:1] // rows of 384 do not fit TQ's 256-blocks
		}
		for _, typ := range types {
			name := model + "-" + string(typ)
			out := filepath.Join(dir, name+".gguf")
			if _, err := convert.ConvertDir(ctx, src, out, true, false, convert.Options{OutType: typ}); err != nil {
				t.Fatal(err)
			}
			paths[name] = out
		}
	}
	return paths
}

// TestWriteMainlineHomeFiles writes the mainline-home inputs into
// $BITNET_MAINLINE_HOME_OUT, of the models named in
// $BITNET_MAINLINE_HOME_MODELS (space-separated; default all), plus the g128
// files (a tool for regenerating the golden files with
// scripts/mainline-home.sh, not a check; skipped without the variable).
func TestWriteMainlineHomeFiles(t *testing.T) {
	dir := os.Getenv("BITNET_MAINLINE_HOME_OUT")
	if dir == "" {
		t.Skip("BITNET_MAINLINE_HOME_OUT not set")
	}
	models := mainlineHomeModels
	if m := strings.Fields(os.Getenv("BITNET_MAINLINE_HOME_MODELS")); len(m) > 0 {
		models = m
	}
	for name, p := range writeMainlineHomeFiles(t, dir, models...) {
		t.Log(name, p)
	}
	for name, p := range writeG128Files(t, dir) {
		t.Log(name, p)
	}
}

// writeG128Files writes into dir our hf2gguf Q2_0 of the golden tiny model
// ("tiny-q2_0"), PrismML's legacy g128 Q2_0 made from it
// (testutil.G128FromQ2_0: "tiny-g128") and our requant of that back to
// Q2_0 ("tiny-g128-q2_0", the file mainline ran). It returns the paths by
// name.
func writeG128Files(t *testing.T, dir string) map[string]string {
	t.Helper()
	q2, err := convert.ParseOutType("q2_0")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	paths := map[string]string{}
	for _, name := range []string{"tiny-q2_0", "tiny-g128", "tiny-g128-q2_0"} {
		paths[name] = filepath.Join(dir, name+".gguf")
	}
	if _, err := convert.ConvertDir(ctx, filepath.Join(tinyDir, "hf"), paths["tiny-q2_0"], true, false, convert.Options{OutType: q2}); err != nil {
		t.Fatal(err)
	}
	testutil.G128FromQ2_0(t, paths["tiny-q2_0"], paths["tiny-g128"])
	if _, err := convert.RequantFile(ctx, paths["tiny-g128"], paths["tiny-g128-q2_0"], true, false, convert.RequantOptions{OutType: q2}); err != nil {
		t.Fatal(err)
	}
	return paths
}

// mainlineHome is testdata/golden/mainline-home/mainline-home.json.
type mainlineHome struct {
	// Files by name: the sha256 of the GGUF mainline ran, and for its own
	// Q2_0 files the sha256 of every tensor's data.
	Files map[string]struct {
		SHA256  string            `json:"sha256"`
		Tensors map[string]string `json:"tensors,omitempty"`
		// LoadError is the line mainline printed when it refused the
		// file (PrismML's legacy g128 Q2_0).
		LoadError string `json:"load_error,omitempty"`
	} `json:"files"`
	Runs []mainlineRun `json:"runs"`
}

// mainlineRun is one oracle-dump run of mainline on a file: the prompt,
// whether it was fed in one llama_decode ("batch") or one token per call
// ("seq"), the 16 greedy ids and the sha256 of every row of logits (prompt
// rows, then generated rows, float32 little-endian).
type mainlineRun struct {
	File   string  `json:"file"`
	Prompt string  `json:"prompt"`
	Mode   string  `json:"mode"`
	Gen    []int32 `json:"gen"`
	Logits string  `json:"logits_sha256"`
}

// mainlinePrompts are the golden tiny model's two prompts.
var mainlinePrompts = map[string][]int32{
	"hello": {1, 413, 480, 414, 271, 417, 313, 269, 421, 427, 457, 360, 314, 411, 280, 262, 261, 437, 413, 461, 268, 469, 316, 262, 414, 284, 432},
	"ids":   {1, 100, 200, 300, 400, 500, 7, 8},
}

// runOracleDump computes what oracle-dump writes for prompt and n greedy
// tokens: the prompt one token per call, or (batch) in one EvalBatch,
// then each generated token on its own. It returns the ids and the raw
// rows.
func runOracleDump(t *testing.T, m *Model, prompt []int32, n int, batch bool) ([]int32, []byte) {
	t.Helper()
	s := m.NewSession(len(prompt) + n + 8)
	var rows [][]float32
	if batch {
		out, err := s.EvalBatch(prompt, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range out {
			rows = append(rows, append([]float32(nil), r...))
		}
	} else {
		for _, id := range prompt {
			l, err := s.Eval(id)
			if err != nil {
				t.Fatal(err)
			}
			rows = append(rows, append([]float32(nil), l...))
		}
	}
	last := rows[len(rows)-1]
	var gen []int32
	for i := 0; i < n; i++ {
		rows = append(rows, last)
		tok := Argmax(last)
		gen = append(gen, tok)
		if i == n-1 {
			break
		}
		l, err := s.Eval(tok)
		if err != nil {
			t.Fatal(err)
		}
		last = append([]float32(nil), l...)
	}
	buf := make([]byte, 0, 4*len(rows)*len(last))
	for _, r := range rows {
		for _, v := range r {
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
		}
	}
	return gen, buf
}

// TestMainlineHome: mainline llama.cpp 3f545bec (AVX2, flash attention on,
// F16 KV cache) ran our TQ1_0/TQ2_0 files and its own Q2_0 files of the
// golden tiny model and of the Llama-class dummy, and our requant to Q2_0
// of PrismML's legacy g128 Q2_0 of the tiny model (rebuilt here:
// writeG128Files) (testdata/golden/mainline-home);
// our files still have the bytes it ran, and with --arith mainline the
// runtime gives its greedy ids and its logits bit for bit, one token per
// call and batched. The Q2_0 runs need our q2_0 writer and kernel: they
// are skipped, saying so, in a build whose format table lacks q2_0; the
// llama-small runs need BITNET_HEAVY=1.
func TestMainlineHome(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(mainlineHomeDir, "mainline-home.json"))
	if err != nil {
		t.Fatal(err)
	}
	var home mainlineHome
	if err := json.Unmarshal(data, &home); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	models := []string{"tiny"}
	if os.Getenv("BITNET_HEAVY") != "" {
		models = mainlineHomeModels
	}
	paths := writeMainlineHomeFiles(t, dir, models...)
	q2, q2err := convert.ParseOutType("q2_0")
	for _, model := range mainlineHomeModels {
		if q2err != nil {
			break
		}
		name := model + "-q2_0"
		if _, ok := home.Files[name]; !ok || home.Files[name].Tensors == nil {
			continue // not recorded, or our own file (its sha256 is checked with its runs)
		}
		src := filepath.Join(dir, model)
		if model == "tiny" {
			src = filepath.Join(tinyDir, "hf")
		} else if !slices.Contains(models, model) {
			continue
		}
		out := filepath.Join(dir, name+".gguf")
		if _, err := convert.ConvertDir(context.Background(), src, out, true, false, convert.Options{OutType: q2}); err != nil {
			t.Fatal(err)
		}
		checkHomeTensors(t, out, home.Files[name].Tensors)
		paths[name] = out
	}
	if q2err == nil {
		// PrismML's legacy g128 Q2_0 built from our Q2_0 (mainline refused
		// it) and our requant of it to Q2_0 (mainline ran it).
		g := writeG128Files(t, dir)
		for _, name := range []string{"tiny-g128", "tiny-g128-q2_0"} {
			checkHomeFile(t, g[name], map[string]string{name: home.Files[name].SHA256}, "mainline llama.cpp")
		}
		paths["tiny-g128-q2_0"] = g["tiny-g128-q2_0"]
	}
	for _, r := range home.Runs {
		t.Run(r.File+"/"+r.Prompt+"/"+r.Mode, func(t *testing.T) {
			if !strings.HasPrefix(r.File, "tiny-") && os.Getenv("BITNET_HEAVY") == "" {
				t.Skip("the dummies take a few seconds a run: set BITNET_HEAVY=1")
			}
			path, ok := paths[r.File]
			if !ok {
				t.Skipf("%s: this build cannot write q2_0 (%v)", r.File, q2err)
			}
			if want := home.Files[r.File].SHA256; home.Files[r.File].Tensors == nil && !strings.HasPrefix(r.File, "tiny-g128") {
				// our files (mainline's own Q2_0 files list their
				// tensors; the g128 files were checked above)
				checkHomeFile(t, path, map[string]string{r.File: want}, "mainline llama.cpp")
			}
			m := openModelOpts(t, path, Options{Threads: 2, Arith: ArithMainline, Batched: r.Mode == "batch"})
			gen, rows := runOracleDump(t, m, mainlinePrompts[r.Prompt], len(r.Gen), r.Mode == "batch")
			if !slices.Equal(gen, r.Gen) {
				t.Errorf("greedy ids %v, mainline %v", gen, r.Gen)
			}
			if got := fmt.Sprintf("%x", sha256.Sum256(rows)); got != r.Logits {
				t.Errorf("logits are not mainline's bit for bit (sha256 %s, mainline %s)", got, r.Logits)
			}
		})
	}
}

// checkHomeTensors checks that every tensor of the GGUF at path has the type
// and data mainline's own file had: want maps a tensor name to "TYPE
// sha256-of-its-data" (mainline-home.json's tensors), and the file has no
// other tensor.
func checkHomeTensors(t *testing.T, path string, want map[string]string) {
	t.Helper()
	f, err := reader.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if len(f.Tensors) != len(want) {
		t.Errorf("%s: %d tensors, mainline's file had %d", path, len(f.Tensors), len(want))
	}
	for _, ti := range f.Tensors {
		data, err := f.TensorData(ti.Name)
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprintf("%s %x", ti.Type, sha256.Sum256(data)); got != want[ti.Name] {
			t.Errorf("%s: tensor %s is %q, mainline's llama-quantize wrote %q", path, ti.Name, got, want[ti.Name])
		}
	}
}

// TestMainlineKLDBase: mainline's llama-perplexity 3f545bec wrote
// tiny-tq2_0.ub32.kld-base (`-f ppl_text.txt -c 128 --chunks 2 -t 1 -fa on
// -b 32 -ub 32 --kl-divergence-base`, on our tiny-tq2_0); our
// PerplexityBase with the mainline arithmetic writes the same bytes, and
// KLDivergence reads it back (the tokens and every row; the KLD left is the
// base's 16-bit rounding of the log-probabilities).
func TestMainlineKLDBase(t *testing.T) {
	basePath := filepath.Join(mainlineHomeDir, "tiny-tq2_0.ub32.kld-base")
	want, err := os.ReadFile(basePath)
	if err != nil {
		t.Fatal(err)
	}
	base, err := ReadKLBaseHeader(bytes.NewReader(want), int64(len(want)))
	if err != nil {
		t.Fatal(err)
	}
	if base.NCtx != 128 || base.NChunk != 2 || base.NVocab != 512 {
		t.Fatalf("base header %d × %d chunks, vocab %d", base.NCtx, base.NChunk, base.NVocab)
	}
	paths := writeMainlineHomeFiles(t, t.TempDir(), "tiny")
	m := openModelOpts(t, paths["tiny-tq2_0"], Options{Threads: 2, Arith: ArithMainline})
	var got bytes.Buffer
	if _, err := PerplexityBase(m, base.Tokens, base.NCtx, base.NChunk, 1, &got, nil); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("our base file (%d bytes) differs from mainline's (%d bytes)", got.Len(), len(want))
	}
	r := bytes.NewReader(want)
	if _, err := ReadKLBaseHeader(r, int64(len(want))); err != nil {
		t.Fatal(err)
	}
	st, err := KLDivergence(m, base, r, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.Count != 2*63 || st.SameTop != st.Count {
		t.Errorf("scored %d positions, same top %d", st.Count, st.SameTop)
	}
	if mean := st.SumKLD / float64(st.Count); !(mean >= 0 && mean < 1e-5) {
		t.Errorf("mean KLD %g against mainline's base of the same logits, want < 1e-5 (its 16-bit rounding)", mean)
	}
}
