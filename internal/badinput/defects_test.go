package badinput

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/codegen"
	"github.com/bitnet-convert/bitnet-convert/dummy"
	"github.com/bitnet-convert/bitnet-convert/format"
	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
	"github.com/bitnet-convert/bitnet-convert/gguf/writer"
	"github.com/bitnet-convert/bitnet-convert/internal/testutil"
)

// The defects of docs/reliability.md's second campaign (D1–D23 of the
// hostile-input report, listed in docs/glossary.md): each row reproduces one through the whole
// command line and checks the behaviour chosen for it.

// bpeVocab replaces the tiny model's SentencePiece vocabulary with a small
// byte-level one whose pre type is pre.
func bpeVocab(pre string) func(kvs []gguf.KV) []gguf.KV {
	return func(kvs []gguf.KV) []gguf.KV {
		kvs = testutil.Drop(kvs, "tokenizer.")
		return append(kvs,
			gguf.KV{Key: "tokenizer.ggml.model", Value: gguf.String("gpt2")},
			gguf.KV{Key: "tokenizer.ggml.pre", Value: gguf.String(pre)},
			gguf.KV{Key: "tokenizer.ggml.tokens", Value: gguf.Strings([]string{"H", "e", "l", "o", "He", "ll"})},
			gguf.KV{Key: "tokenizer.ggml.token_type", Value: gguf.Int32s([]int32{1, 1, 1, 1, 1, 1})},
			gguf.KV{Key: "tokenizer.ggml.merges", Value: gguf.Strings([]string{"H e", "l l"})},
		)
	}
}

// ggufFrom returns a setup that writes the tiny I2_S GGUF with its metadata
// edited to root/m.gguf and runs the command args builds from that path.
func ggufFrom(edit func(kvs []gguf.KV) []gguf.KV, args func(p string) []string) func(t *testing.T, root string) []string {
	return gg(func(t *testing.T) []byte { return testutil.RewriteGGUF(t, tinyI2S, edit, nil) }, args)
}

// defectCases are the rows that must fail: one line, exit code, nothing
// left behind (checked as in TestCorpus).
func defectCases() []badCase {
	return []badCase{
		// D1: a tokenizer the runtime cannot build gave a typed-nil
		// Tokenizer and a nil-pointer panic in run.
		{"D1 run -p with a pre the runtime lacks", ggufFrom(bpeVocab("deepseek-llm"), func(p string) []string {
			return []string{"run", "-m", p, "-p", "Hello", "-n", "1"}
		}), 1, []string{"bad.gguf", "no usable tokenizer", "deepseek-llm", "--ids"}},
		{"D1 hf2gguf: merge names unknown tokens", conv(bpeTokenizerJSON(`["qqqq zzzz", "H e"]`, "")), 1, []string{"tokenizer.json", `"qqqq"`}},
		// D12: vocab_size 128000 with the Llama-3 tokenizer drops BOS and
		// EOS (ids 128000, 128001); the file could not tokenize anything.
		// Only the error line is printed, not the notices before it.
		{"D12 vocab_size drops BOS", genConvTok("../../testdata/tokenizers/llama3", map[string]any{
			"vocab_size": 128000, "hidden_size": 64, "intermediate_size": 128, "num_attention_heads": 1, "num_key_value_heads": 1,
			"bos_token_id": 128000, "eos_token_id": 128001}, "--outtype", "f16"),
			1, []string{"tokenizer.json", "adds BOS but the vocabulary has no BOS token", "vocab_size 128000"}},
		// Friction 13: a missing tensor is named by its HF name too.
		{"missing tensor names the HF name", conv(func(t *testing.T, m string) {
			editST(t, m, func(st *stFile) { delete(st.hdr, "model.layers.1.self_attn.q_proj.weight") })
		}), 1, []string{"blk.1.attn_q.weight (HF model.layers.1.self_attn.q_proj.weight)"}},
		// D14: an unknown --pre is a usage error.
		{"D14 --pre bogus", conv(nil, "--pre", "bogus"), 2, []string{"--pre", `"bogus"`, "llama.cpp"}},
		// Friction 4: codegen makes no TL kernels for a model hf2gguf
		// refuses to convert to TL.
		{"codegen TL2 for an embedding model", func(t *testing.T, root string) []string {
			return []string{"codegen", "--arch", "tl2", "--model", "bitnet-embedding-0.6b", "--outdir", root}
		}, 1, []string{"bitnet-embedding-0.6b", "no tl2 kernels", "hf2gguf refuses", "qwen3"}},
		{"D1 hf2gguf: added token reuses a vocab id", conv(bpeTokenizerJSON(`["H e"]`, `{"id": 1, "content": "<x>", "special": true}`)), 1, []string{"tokenizer.json", `"<x>"`, "id 1"}},
		// D13: what HF tokenizers refuses to load is refused, naming
		// tokenizer.json.
		{"D13 two added tokens share an id", conv(bpeTokenizerJSON(`["H e"]`, `{"id": 6, "content": "<a>", "special": true}, {"id": 6, "content": "<b>", "special": true}`)), 1, []string{"tokenizer.json", `"<b>"`, "id 6", `added token "<a>"`}},
		{"D13 tokenizer.json not UTF-8", conv(func(t *testing.T, m string) {
			bpeTokenizerJSON(`["H e"]`, "")(t, m)
			p := filepath.Join(m, "tokenizer.json")
			writeFile(t, p, bytes.Replace(readFile(t, p), []byte(`"o": 3`), []byte("\"o\xff\": 3"), 1))
		}), 1, []string{"tokenizer.json is not valid UTF-8", "0xff"}},
		// D3: block_count far above the tensors must fail before the
		// per-layer structures are allocated.
		{"D3 run with block_count 2^30", ggufFrom(blockCount(1<<30), runArgs), 1, []string{"bitnet.block_count 1073741824", "2 layer(s)", "blk.2"}},
		{"D3 verify with block_count 2^31-1", ggufFrom(blockCount(1<<31-1), verifyArgs), 1, []string{"bitnet.block_count 2147483647"}},
		{"D3 verify --hf with block_count 2^30", ggufFrom(blockCount(1<<30), func(p string) []string {
			return []string{"verify", "--gguf", p, "--hf", tinyDir, "--ids", "1,2"}
		}), 1, []string{"bitnet.block_count 1073741824"}},
		{"D3 perplexity with block_count 2^30", ggufFrom(blockCount(1<<30), func(p string) []string {
			return []string{"perplexity", "-m", p, "-f", filepath.Join(tinyDir, "config.json"), "-c", "16", "--chunks", "1"}
		}), 1, []string{"bitnet.block_count 1073741824"}},
		// D4: a config without intermediate_size gave a GGUF with no
		// feed_forward_length, which llama.cpp cannot load.
		{"D4 config.json without intermediate_size", conv(func(t *testing.T, m string) {
			testutil.EditConfig(t, m, func(cfg map[string]any) { delete(cfg, "intermediate_size") })
		}), 1, []string{"config.json", `missing "intermediate_size"`}},
		// D5: finite weights near the float32 maximum overflow the
		// abs-mean; the tensor is refused by name.
		{"D5 abs-mean overflows float32", conv(func(t *testing.T, m string) {
			editST(t, m, func(st *stFile) {
				for i := 0; i < 256*256; i++ {
					setBF16(t, st, qProj, i, 0x7f7f)
				}
			})
		}), 1, []string{qProj, "overflows float32"}},
		// D15: a rope base of 0 gave PPL = NaN with exit 0; it is refused
		// at load, naming the key; +Inf names the value, not the type.
		{"D15 perplexity with rope.freq_base 0", ggufFrom(setF32("bitnet.rope.freq_base", 0), pplArgs), 1, []string{"bitnet.rope.freq_base", "value 0 must be positive"}},
		{"D15 run with rope.freq_base +Inf", ggufFrom(setF32("bitnet.rope.freq_base", float32(math.Inf(1))), runArgs), 1, []string{"bitnet.rope.freq_base", "value +Inf is not finite"}},
		// D15: a non-finite perplexity is a failure.
		{"D15 perplexity NaN", gg(func(t *testing.T) []byte {
			return testutil.RewriteGGUF(t, tinyI2S, func(kvs []gguf.KV) []gguf.KV { return kvs }, func(name string, d []byte) []byte {
				if name == "output_norm.weight" {
					for i := 0; i+4 <= len(d); i += 4 {
						binary.LittleEndian.PutUint32(d[i:], 0x7fc00000)
					}
				}
				return d
			})
		}, pplArgs), 1, []string{"bad.gguf", "perplexity is NaN"}},
		// D17: bad data is exit 1 and names the key or the index.
		{"D17 run with context_length 0", ggufFrom(func(kvs []gguf.KV) []gguf.KV {
			return testutil.Set(kvs, "bitnet.context_length", gguf.Uint32(0))
		}, runArgs), 1, []string{"bitnet.context_length", "must be positive"}},
		{"D17 index names a shard with a NUL", conv(func(t *testing.T, m string) {
			writeIndex(t, m, "model-00003\x00.txt")
		}), 1, []string{"model.safetensors.index.json", `"model-00003\x00.txt"`, "not a valid file name"}},
		// D18: out-of-range values are usage errors.
		{"D18 perplexity --chunks -1", func(t *testing.T, root string) []string {
			return []string{"perplexity", "-m", tinyI2S, "-f", filepath.Join(tinyDir, "config.json"), "--chunks", "-1"}
		}, 2, []string{"--chunks -1"}},
		{"D18 verify --min-top1 2", func(t *testing.T, root string) []string {
			return []string{"verify", "--gguf", tinyI2S, "--ids", "1,2", "--min-top1", "2"}
		}, 2, []string{"--min-top1 2", "between 0 and 1"}},
		// D20: a packed byte with the 2-bit code 3 is not ternary.
		{"D20 packed code 3", func(t *testing.T, root string) []string {
			var cfg map[string]any
			if err := json.Unmarshal(readFile(t, "../../testdata/configs/microsoft_bitnet-b1.58-2B-4T.config.json"), &cfg); err != nil {
				t.Fatal(err)
			}
			for k, v := range map[string]any{"hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 1, "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 512} {
				cfg[k] = v
			}
			m := filepath.Join(root, "m")
			if _, err := dummy.Generate(context.Background(), m, dummy.Options{Config: cfg, Packed: true, Seed: 1}); err != nil {
				t.Fatal(err)
			}
			editST(t, m, func(st *stFile) {
				b, _ := st.offsets(t, qProj)
				st.data[b+5] = 0xff
			})
			return []string{"hf2gguf", m, "--no-vocab", "--outfile", filepath.Join(root, "x.gguf")}
		}, 1, []string{qProj, "packed byte 5 (0xff)", "code 3"}},
		// Found by TestMutatedHeaders: a key length that swallows binary
		// data was printed raw (several lines of bytes).
		{"key name with binary bytes", gg(func(t *testing.T) []byte {
			g := newGGUF(0, 1).u64(200)
			g.b = append(g.b, "general.architecture\n\x00\xff"...)
			g.b = append(g.b, make([]byte, 200-23)...)
			return g.u32(77).pad(0)
		}, inspectArgs), 1, []string{"bad.gguf", `read kv 0 ("general.architecture\n\x00\xff`, "… (200 bytes)"}},
		// D16: name the target and the cause, never the temp file.
		{"D16 output directory missing", outfile("new/x.gguf"), 1, []string{"ROOT/new/x.gguf", "directory ROOT/new/ does not exist"}},
		{"D16 output with a trailing slash", outfile("new/"), 1, []string{"ROOT/new/", "does not exist"}},
	}
}

// outfile returns a setup converting the tiny checkpoint (read in place)
// to root/rel.
func outfile(rel string) func(t *testing.T, root string) []string {
	return func(t *testing.T, root string) []string {
		return []string{"hf2gguf", tinyDir, "--outfile", root + "/" + rel}
	}
}

func pplArgs(p string) []string {
	return []string{"perplexity", "-m", p, "-f", filepath.Join(tinyDir, "config.json"), "-c", "16", "--chunks", "1"}
}

// setF32 sets a float32 key.
func setF32(key string, v float32) func(kvs []gguf.KV) []gguf.KV {
	return func(kvs []gguf.KV) []gguf.KV { return testutil.Set(kvs, key, gguf.Float32(v)) }
}

const qProj = "model.layers.0.self_attn.q_proj.weight"

// blockCount sets bitnet.block_count.
func blockCount(n uint32) func(kvs []gguf.KV) []gguf.KV {
	return func(kvs []gguf.KV) []gguf.KV { return testutil.Set(kvs, "bitnet.block_count", gguf.Uint32(n)) }
}

// okCase is a row that must succeed (exit 0) and print every string of
// want on stderr (a notice), none of avoid.
type okCase struct {
	name  string
	setup func(t *testing.T, root string) []string
	want  []string
	avoid []string
}

func okCases() []okCase {
	return []okCase{
		// D1: --ids needs no tokenizer.
		{"D1 run --ids with a pre the runtime lacks", ggufFrom(bpeVocab("deepseek-llm"), func(p string) []string {
			return []string{"run", "-m", p, "--ids", "1,2", "-n", "1"}
		}), nil, nil},
		// D6: TL files whose K is not a multiple of 128 are written for
		// bitnet.cpp with no notice (the runtime runs them: see the D6
		// verify case).
		{"D6 TL1 with K=320", genConv(map[string]any{"intermediate_size": 320}, "--outtype", "tl1"),
			nil, []string{"not a multiple of 128", "cannot yet"}},
		// D14: --pre on a SentencePiece model is a notice.
		{"D14 --pre on tokenizer.model", conv(nil, "--pre", "llama-bpe"), []string{`--pre "llama-bpe" ignored: tokenizer.model is a SentencePiece model`}, nil},
		// Friction 4: the derived kernel configuration is one line, not
		// the 20-line kernel_config.ini dumped on stderr.
		{"TL conversion notice is one line", conv(nil, "--outtype", "tl2"),
			[]string{"tl2 tiling derived from the shapes", "codegen --arch tl2 --from-config"}, []string{"[Kernels_0]", "\n\n"}},
		// D19: --kernel-config that differs from the stored tiling.
		{"D19 run --kernel-config differing from the stored one", func(t *testing.T, root string) []string {
			p := filepath.Join(root, "tl1.gguf")
			if code, _, stderr := runMain("hf2gguf", tinyDir, "--outtype", "tl1", "--outfile", p); code != 0 {
				t.Fatal(stderr)
			}
			return []string{"run", "-m", p, "--ids", "1,2", "-n", "1", "--kernel-config", "../../testdata/golden/tiny-bitnet/gguf/kernel_config_tl1.ini"}
		}, []string{"--kernel-config differs from the tiling stored in the file (bitnet_convert.kernel_config)", "blk.0.ffn_down.weight (M=256 K=512: BM=256 BK=64 bm=64 given, BM=256 BK=128 bm=32 stored)"}, nil},
		{"D19 verify --kernel-config differing from the stored one", func(t *testing.T, root string) []string {
			p := filepath.Join(root, "tl1.gguf")
			if code, _, stderr := runMain("hf2gguf", tinyDir, "--outtype", "tl1", "--outfile", p); code != 0 {
				t.Fatal(stderr)
			}
			return []string{"verify", "--gguf", p, "--ids", "1,2", "--kernel-config", "../../testdata/golden/tiny-bitnet/gguf/kernel_config_tl1.ini"}
		}, []string{"--kernel-config differs from the tiling stored in the file"}, nil},
		// D18: --kernel-config on a file without TL tensors.
		{"D18 run --kernel-config on an I2_S file", func(t *testing.T, root string) []string {
			return []string{"run", "-m", tinyI2S, "--ids", "1,2", "-n", "1", "--kernel-config", "../../testdata/golden/tiny-bitnet/gguf/kernel_config_tl1.ini"}
		}, []string{"--kernel-config has no effect: the file has no TL1/TL2 tensors"}, nil},
		// D18: a flag with no effect gets a notice.
		{"D18 verify --pooling on a causal model", func(t *testing.T, root string) []string {
			return []string{"verify", "--gguf", tinyI2S, "--ids", "1,2", "--pooling", "cls"}
		}, []string{"--pooling has no effect", "causal LM (arch bitnet)"}, nil},
		// Friction 4: codegen --from-config takes the config.json file too.
		{"codegen --from-config FILE", func(t *testing.T, root string) []string {
			return []string{"codegen", "--arch", "tl2", "--from-config", filepath.Join(tinyDir, "config.json"), "--outdir", root}
		}, nil, nil},
	}
}

// genConv returns a setup that generates a one-layer checkpoint from the
// tiny config with cfg's keys changed (dummy.Generate, tiny tokenizer) and
// converts it to root/out/x.gguf with extra flags.
func genConv(cfg map[string]any, extra ...string) func(t *testing.T, root string) []string {
	return genConvTok(tinyDir, cfg, extra...)
}

// genConvTok is genConv with the tokenizer files of tok.
func genConvTok(tok string, cfg map[string]any, extra ...string) func(t *testing.T, root string) []string {
	return func(t *testing.T, root string) []string {
		c := readTinyConfig(t)
		c["num_hidden_layers"] = 1
		for k, v := range cfg {
			c[k] = v
		}
		m := filepath.Join(root, "m")
		if _, err := dummy.Generate(context.Background(), m, dummy.Options{Config: c, Tokenizer: tok, Seed: 1}); err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Join(root, "out"), 0o755)
		return append([]string{"hf2gguf", m, "--outfile", filepath.Join(root, "out", "x.gguf")}, extra...)
	}
}

// TestD6TLTailVerifies: TL1/TL2 files whose ffn_down K (320) is not a
// multiple of 128, as bitnet_b1_58-3B's 8640, pass verify --hf and run
// (the runtime pads the repacked rows with zero weights).
func TestD6TLTailVerifies(t *testing.T) {
	for _, arch := range []string{"tl1", "tl2"} {
		t.Run(arch, func(t *testing.T) {
			root := t.TempDir()
			args := genConv(map[string]any{"intermediate_size": 320}, "--outtype", arch, "--force")(t, root)
			if code, _, stderr := runMain(args...); code != 0 {
				t.Fatalf("hf2gguf: exit %d: %s", code, stderr)
			}
			p := filepath.Join(root, "out", "x.gguf")
			if code, out, stderr := runMain("verify", "--gguf", p, "--hf", filepath.Join(root, "m")); code != 0 {
				t.Fatalf("verify: exit %d: %s%s", code, out, stderr)
			}
			if code, out, stderr := runMain("run", "-m", p, "--ids", "1,2,3", "-n", "4", "--ignore-eos"); code != 0 || out == "" {
				t.Fatalf("run: exit %d: %q %s", code, out, stderr)
			}
		})
	}
}

// TestD7PresetTiling: a checkpoint with bitnet_b1_58-large's projection
// shapes gets setup_env.py's tiling (the kernel_config.ini of `codegen
// --model bitnet_b1_58-large`), byte for byte, not the derived one; `codegen
// --from-config` on its config.json (a file path) agrees.
func TestD7PresetTiling(t *testing.T) {
	for _, arch := range []string{"tl1", "tl2"} {
		t.Run(arch, func(t *testing.T) {
			root := t.TempDir()
			args := genConv(map[string]any{"hidden_size": 1536, "intermediate_size": 4096, "num_attention_heads": 16, "num_key_value_heads": 16}, "--outtype", arch, "--no-vocab", "--force")(t, root)
			code, _, stderr := runMain(args...)
			if code != 0 {
				t.Fatalf("hf2gguf: exit %d: %s", code, stderr)
			}
			if !strings.Contains(stderr, arch+" tiling of preset bitnet_b1_58-large") || !strings.Contains(stderr, "codegen --model bitnet_b1_58-large --arch "+arch) {
				t.Errorf("stderr %q does not name the preset tiling", stderr)
			}
			f, err := reader.Open(filepath.Join(root, "out", "x.gguf"))
			if err != nil {
				t.Fatal(err)
			}
			stored, _ := f.String(format.KernelConfigKey)
			f.Close()
			for _, cg := range [][]string{
				{"codegen", "--arch", arch, "--model", "bitnet_b1_58-large", "--outdir", filepath.Join(root, "model")},
				{"codegen", "--arch", arch, "--from-config", filepath.Join(root, "m", "config.json"), "--outdir", filepath.Join(root, "cfg")},
			} {
				if code, _, stderr := runMain(cg...); code != 0 {
					t.Fatalf("%v: exit %d: %s", cg, code, stderr)
				}
				ini := readFile(t, filepath.Join(cg[len(cg)-1], codegen.ConfigPath))
				if string(ini) != stored {
					t.Errorf("%v wrote\n%s\nthe GGUF stores\n%s", cg[1:5], ini, stored)
				}
			}
		})
	}
}

// bpeTokenizerJSON returns a conv edit that gives the tiny checkpoint a
// byte-level tokenizer.json (Llama-3 pre-tokenizer) with the given merges
// and added tokens, in place of its tokenizer.model.
func bpeTokenizerJSON(merges, added string) func(t *testing.T, m string) {
	return func(t *testing.T, m string) {
		os.Remove(filepath.Join(m, "tokenizer.model"))
		os.Remove(filepath.Join(m, "tokenizer_config.json"))
		writeFile(t, filepath.Join(m, "tokenizer.json"), []byte(`{"added_tokens": [`+added+`],
 "pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "ByteLevel", "add_prefix_space": false, "use_regex": true}]},
 "decoder": {"type": "ByteLevel"},
 "model": {"type": "BPE", "vocab": {"H": 0, "e": 1, "l": 2, "o": 3, "He": 4, "ll": 5}, "merges": `+merges+`}}`))
	}
}

func TestDefects(t *testing.T) {
	for _, c := range defectCases() {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			args := c.setup(t, root)
			before := snapshot(t, root)
			code, _, stderr := runMain(args...)
			if os.Getenv("BADINPUT_SHOW") != "" {
				t.Logf("exit %d: %s", code, stderr)
			}
			if code != c.code {
				t.Errorf("exit code %d, want %d; stderr: %s", code, c.code, stderr)
			}
			checkOneLine(t, strings.ReplaceAll(stderr, root, "ROOT"), c.want)
			if d := diffSnapshots(before, snapshot(t, root)); d != "" {
				t.Errorf("the run changed the tree: %s", d)
			}
		})
	}
}

func TestDefectsFixedBehaviour(t *testing.T) {
	for _, c := range okCases() {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			args := c.setup(t, root)
			code, stdout, stderr := runMain(args...)
			if os.Getenv("BADINPUT_SHOW") != "" {
				t.Logf("exit %d: %s%s", code, stdout, stderr)
			}
			if code != 0 {
				t.Fatalf("exit code %d, want 0; stderr: %s", code, stderr)
			}
			stderr = strings.ReplaceAll(stderr, root, "ROOT")
			for _, w := range c.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q does not say %q", stderr, w)
				}
			}
			for _, a := range c.avoid {
				if strings.Contains(stderr, a) {
					t.Errorf("stderr %q says %q", stderr, a)
				}
			}
		})
	}
}

// TestD8ConcurrentTarget: hf2gguf's start-up cleanup removes a dead run's
// temp file of the same target but not the temp file of a conversion that
// is still running (the pid in the name of a live process), which used to
// be deleted under the other run's feet.
func TestD8ConcurrentTarget(t *testing.T) {
	live := exec.Command("sleep", "30")
	if err := live.Start(); err != nil {
		t.Skip("no sleep command:", err)
	}
	defer func() { live.Process.Kill(); live.Wait() }()
	root := t.TempDir()
	out := filepath.Join(root, "x.gguf")
	other := filepath.Join(root, fmt.Sprintf(".x.gguf.partial-%d-1", live.Process.Pid))
	stale := filepath.Join(root, ".x.gguf.partial-3529705008")
	writeFile(t, other, []byte("a live conversion's data"))
	writeFile(t, stale, []byte("a killed conversion's data"))
	if code, _, stderr := runMain("hf2gguf", tinyDir, "--outfile", out); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("the live run's temp file was removed: %v", err)
	}
	if _, err := os.Stat(stale); err == nil {
		t.Errorf("the dead run's temp file %s was kept", stale)
	}
}

// TestD21NoHintForUnsupportedArch: dummy does not suggest an hf2gguf
// command for a checkpoint hf2gguf refuses (a LlamaForCausalLM without a
// bitnet quantization_config is not a BitNet model); it says it is not
// convertible yet. The same config with --packed (quant_method bitnet, as
// Falcon3 and Llama3-8B-1.58 ship) gets the hint (issue 13).
func TestD21NoHintForUnsupportedArch(t *testing.T) {
	root := t.TempDir()
	cfg := readTinyConfig(t)
	cfg["architectures"] = []string{"LlamaForCausalLM"}
	cfg["model_type"] = "llama"
	cfg["num_hidden_layers"] = 1
	b, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(root, "config.json"), b)
	code, stdout, stderr := runMain("dummy", "--config", filepath.Join(root, "config.json"), "--out", filepath.Join(root, "m"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if strings.Contains(stdout, "hf2gguf "+filepath.Join(root, "m")) || !strings.Contains(stdout, `not convertible yet: `) || !strings.Contains(stdout, `LlamaForCausalLM without quantization_config.quant_method "bitnet" is not a BitNet checkpoint`) {
		t.Errorf("stdout:\n%s", stdout)
	}
	code, stdout, stderr = runMain("dummy", "--config", filepath.Join(root, "config.json"), "--packed", "--out", filepath.Join(root, "p"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "hf2gguf "+filepath.Join(root, "p")) || strings.Contains(stdout, "not convertible") {
		t.Errorf("--packed stdout:\n%s", stdout)
	}
}

// replaceTensor returns the tiny I2_S GGUF with tensor name stored as type
// typ and data (its shape kept), through our writer.
func replaceTensor(t *testing.T, name string, typ gguf.Type, data []byte) []byte {
	t.Helper()
	f, err := reader.Open(tinyI2S)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	infos := append([]gguf.TensorInfo(nil), f.Tensors...)
	for i := range infos {
		if infos[i].Name == name {
			infos[i].Type = typ
		}
	}
	var buf bytes.Buffer
	w, err := writer.New(&buf, f.KVs, infos, f.Alignment)
	if err != nil {
		t.Fatal(err)
	}
	for i, ti := range infos {
		d := data
		if ti.Name != name {
			if d, err = f.TensorData(ti.Name); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.WriteTensor(i, d); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestTypeIDCollisions: id 39 is TL2 in
// bitnet.cpp and MXFP4 in mainline ggml; the reader decides per tensor from
// the arch and the room the data has, and inspect names MXFP4, NVFP4 (40)
// and Q1_0 (41) with their sizes (llama.cpp ggml/src/ggml.c type_traits:
// 32 values in 17 bytes, 64 in 36, 128 in 18) and no scale; run and verify
// refuse them with one line.
func TestTypeIDCollisions(t *testing.T) {
	type want struct {
		typ   string
		id    uint32
		bytes uint64
		scale bool
	}
	tl2Bytes, err := gguf.NBytes(gguf.TypeTL2, []uint64{256, 128})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		file []byte
		want want
	}{
		{"gpt-oss MXFP4 [2880, 256]", newGGUF(1, 1).kvString("general.architecture", "gpt-oss").
			tensor("blk.0.ffn_down_exps.weight", 39, 0, 2880, 256).pad(391680), want{"MXFP4", 39, 391680, false}},
		{"bitnet TL2 [256, 128]", newGGUF(1, 1).kvString("general.architecture", "bitnet").
			tensor("blk.0.attn_k.weight", 39, 0, 256, 128).pad(int(tl2Bytes)), want{"TL2", 39, tl2Bytes, true}},
		{"bitnet id 39 that cannot be TL2 (1-D)", newGGUF(1, 1).kvString("general.architecture", "bitnet").
			tensor("output_norm.weight", 39, 0, 64).pad(34), want{"MXFP4", 39, 34, false}},
		{"NVFP4 [128, 2]", newGGUF(1, 1).kvString("general.architecture", "llama").
			tensor("w.weight", 40, 0, 128, 2).pad(144), want{"NVFP4", 40, 144, false}},
		{"Q1_0 [256, 3]", newGGUF(1, 1).kvString("general.architecture", "llama").
			tensor("w.weight", 41, 0, 256, 3).pad(108), want{"Q1_0", 41, 108, false}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "m.gguf")
			writeFile(t, p, c.file)
			code, stdout, stderr := runMain("inspect", "--json", p)
			if code != 0 {
				t.Fatalf("inspect: exit %d: %s", code, stderr)
			}
			var r struct {
				Tensors []struct {
					Type   string           `json:"type"`
					TypeID uint32           `json:"type_id"`
					Bytes  uint64           `json:"bytes"`
					Scale  *json.RawMessage `json:"scale"`
				} `json:"tensors"`
			}
			if err := json.Unmarshal([]byte(stdout), &r); err != nil || len(r.Tensors) != 1 {
				t.Fatalf("inspect --json: %v\n%s", err, stdout)
			}
			got := r.Tensors[0]
			if got.Type != c.want.typ || got.TypeID != c.want.id || got.Bytes != c.want.bytes || (got.Scale != nil) != c.want.scale {
				t.Errorf("tensor %+v (scale %v), want %+v", got, got.Scale != nil, c.want)
			}
			code, stdout, _ = runMain("inspect", p)
			if code != 0 || !strings.Contains(stdout, fmt.Sprintf("%s(%d)", c.want.typ, c.want.id)) {
				t.Errorf("inspect text does not name %s(%d):\n%s", c.want.typ, c.want.id, stdout)
			}
		})
	}
	// run and verify refuse the mainline types with one line naming them.
	for _, c := range []struct {
		name string
		typ  gguf.Type
		data []byte
	}{
		{"Q1_0 norm", gguf.TypeQ1_0, make([]byte, 36)},
		{"NVFP4 norm", gguf.TypeNVFP4, make([]byte, 4*36)},
	} {
		t.Run("refuse "+c.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "m.gguf")
			writeFile(t, p, replaceTensor(t, "output_norm.weight", c.typ, c.data))
			for _, args := range [][]string{runArgs(p), verifyArgs(p)} {
				code, _, stderr := runMain(args...)
				if code != 1 {
					t.Errorf("%s: exit %d, want 1: %s", args[0], code, stderr)
				}
				checkOneLine(t, stderr, []string{"output_norm.weight", c.typ.String(), "mainline llama.cpp", "not a BitNet type"})
			}
		})
	}
	p := filepath.Join(t.TempDir(), "gptoss.gguf")
	writeFile(t, p, newGGUF(1, 1).kvString("general.architecture", "gpt-oss").tensor("blk.0.ffn_down_exps.weight", 39, 0, 2880, 256).pad(391680))
	for _, args := range [][]string{runArgs(p), verifyArgs(p)} {
		code, _, stderr := runMain(args...)
		if code != 1 {
			t.Errorf("%s: exit %d, want 1: %s", args[0], code, stderr)
		}
		checkOneLine(t, stderr, []string{"gpt-oss"})
	}
}

// TestD23ScaleJSONType: inspect --json gives every scale as a JSON number,
// and a non-finite one as null with a scale_note, never as a string.
func TestD23ScaleJSONType(t *testing.T) {
	p := filepath.Join(t.TempDir(), "m.gguf")
	writeFile(t, p, testutil.RewriteGGUF(t, tinyI2S, func(kvs []gguf.KV) []gguf.KV { return kvs }, func(name string, d []byte) []byte {
		if name == "blk.0.attn_q.weight" {
			binary.LittleEndian.PutUint32(d[256*256/4:], math.Float32bits(float32(math.Inf(1))))
		}
		return d
	}))
	code, stdout, stderr := runMain("inspect", "--json", p)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var r struct {
		Tensors []struct {
			Name      string `json:"name"`
			Scale     any    `json:"scale"`
			ScaleNote string `json:"scale_note"`
		} `json:"tensors"`
	}
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ti := range r.Tensors {
		switch {
		case ti.Name == "blk.0.attn_q.weight":
			if ti.Scale != nil || ti.ScaleNote != "+Inf" {
				t.Errorf("%s: scale %v, note %q; want null and +Inf", ti.Name, ti.Scale, ti.ScaleNote)
			}
		case ti.Scale != nil:
			if _, ok := ti.Scale.(float64); !ok {
				t.Errorf("%s: scale %#v is not a JSON number", ti.Name, ti.Scale)
			}
			n++
		}
	}
	if n != 13 {
		t.Errorf("%d finite scales, want 13", n)
	}
}
