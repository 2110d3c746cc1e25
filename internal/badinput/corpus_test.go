package badinput

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/bitnet-convert/bitnet-convert/dummy"

	"github.com/bitnet-convert/bitnet-convert/internal/osx"
	"github.com/bitnet-convert/bitnet-convert/internal/testutil"
)

// badCase is one row of the corpus: setup builds the inputs under root and
// returns the command line; the run must exit with code, print one stderr
// line containing every string of want, and leave root exactly as setup
// left it (no output, no temp file, inputs unchanged).
type badCase struct {
	name  string
	setup func(t *testing.T, root string) []string
	code  int
	want  []string
}

// conv returns a setup that copies the tiny checkpoint to root/m, applies
// edit (may be nil) and converts it to root/out/x.gguf with extra flags.
func conv(edit func(t *testing.T, m string), extra ...string) func(t *testing.T, root string) []string {
	return func(t *testing.T, root string) []string {
		m := copyTiny(t, filepath.Join(root, "m"))
		if err := os.MkdirAll(filepath.Join(root, "out"), 0o755); err != nil {
			t.Fatal(err)
		}
		if edit != nil {
			edit(t, m)
		}
		return append([]string{"hf2gguf", m, "--outfile", filepath.Join(root, "out", "x.gguf")}, extra...)
	}
}

// gg returns a setup that writes data as root/bad.gguf and runs the command
// built by args from that path.
func gg(data func(t *testing.T) []byte, args func(p string) []string) func(t *testing.T, root string) []string {
	return func(t *testing.T, root string) []string {
		p := filepath.Join(root, "bad.gguf")
		writeFile(t, p, data(t))
		return args(p)
	}
}

func inspectArgs(p string) []string  { return []string{"inspect", p} }
func verifyArgs(p string) []string   { return []string{"verify", "--gguf", p, "--ids", "1,2"} }
func tokenizeArgs(p string) []string { return []string{"tokenize", "-m", p, "-p", "hello"} }
func runArgs(p string) []string      { return []string{"run", "-m", p, "--ids", "1,2", "-n", "1"} }

// setBF16 sets element i of a bf16 tensor in the data section.
func setBF16(t *testing.T, st *stFile, name string, i int, bits uint16) {
	b, _ := st.offsets(t, name)
	binary.LittleEndian.PutUint16(st.data[int(b)+2*i:], bits)
}

const (
	embd = "model.embed_tokens.weight"
	down = "model.layers.0.mlp.down_proj.weight"
	norm = "model.layers.1.input_layernorm.weight"
)

// tinyI2SBytes returns the reference I2_S GGUF, the base of the cut and
// patched GGUF cases.
func tinyI2SBytes(t *testing.T) []byte { return readFile(t, tinyI2S) }

// mkfifo makes a FIFO at path (replacing a file there).
func mkfifo(t *testing.T, path string) {
	t.Helper()
	os.Remove(path)
	if err := osx.Mkfifo(path); err != nil {
		t.Fatalf("mkfifo %s: %v", path, err)
	}
}

// fifoIn returns a conv edit that puts a FIFO at name in the checkpoint.
func fifoIn(name string) func(t *testing.T, m string) {
	return func(t *testing.T, m string) { mkfifo(t, filepath.Join(m, name)) }
}

// fifoArgs returns a setup that makes root/fifo and runs the command built
// by args from its path.
func fifoArgs(args func(p string) []string) func(t *testing.T, root string) []string {
	return func(t *testing.T, root string) []string {
		p := filepath.Join(root, "fifo")
		mkfifo(t, p)
		return args(p)
	}
}

// corpus returns the table of TestCorpus.
func corpus() []badCase {
	return []badCase{
		// --- safetensors: truncation and header lengths
		{"truncated data", conv(func(t *testing.T, m string) {
			p := filepath.Join(m, "model.safetensors")
			b := readFile(t, p)
			writeFile(t, p, b[:len(b)/2])
		}), 1, []string{"model.safetensors"}},
		{"truncated inside header", conv(func(t *testing.T, m string) {
			p := filepath.Join(m, "model.safetensors")
			writeFile(t, p, readFile(t, p)[:100])
		}), 1, []string{"model.safetensors"}},
		{"shorter than the length prefix", conv(func(t *testing.T, m string) {
			writeFile(t, filepath.Join(m, "model.safetensors"), []byte{1, 2, 3, 4, 5})
		}), 1, []string{"model.safetensors"}},
		{"empty safetensors", conv(func(t *testing.T, m string) {
			writeFile(t, filepath.Join(m, "model.safetensors"), nil)
		}), 1, []string{"model.safetensors"}},
		{"header length 2^40, beyond the file", conv(func(t *testing.T, m string) {
			p := filepath.Join(m, "model.safetensors")
			b := readFile(t, p)
			binary.LittleEndian.PutUint64(b, 1<<40)
			writeFile(t, p, b)
		}), 1, []string{"model.safetensors"}},
		{"header length 2^64-1", conv(func(t *testing.T, m string) {
			p := filepath.Join(m, "model.safetensors")
			b := readFile(t, p)
			binary.LittleEndian.PutUint64(b, math.MaxUint64)
			writeFile(t, p, b)
		}), 1, []string{"model.safetensors"}},
		{"header not JSON", conv(func(t *testing.T, m string) {
			writeFile(t, filepath.Join(m, "model.safetensors"), rawST(8, []byte("{{{{{{{{"), nil))
		}), 1, []string{"model.safetensors"}},
		{"header nested 20000 deep", conv(func(t *testing.T, m string) {
			h := []byte(strings.Repeat(`{"a":`, 20000))
			writeFile(t, filepath.Join(m, "model.safetensors"), rawST(uint64(len(h)), h, nil))
		}), 1, []string{"model.safetensors"}},
		// --- safetensors: offsets, dtypes, shapes
		{"data offset beyond the file", conv(func(t *testing.T, m string) {
			editST(t, m, func(st *stFile) {
				b, e := st.offsets(t, down)
				st.tensor(t, down)["data_offsets"] = []uint64{b + uint64(len(st.data)), e + uint64(len(st.data))}
			})
		}), 1, []string{"model.safetensors", down}},
		{"data offsets overlapping", conv(func(t *testing.T, m string) {
			editST(t, m, func(st *stFile) {
				b, e := st.offsets(t, embd)
				// norm (bf16 [256], 512 bytes) moved into the embedding's bytes.
				_ = e
				st.tensor(t, norm)["data_offsets"] = []uint64{b + 512, b + 1024}
			})
		}), 1, []string{"model.safetensors", norm}},
		{"data offsets reversed", conv(func(t *testing.T, m string) {
			editST(t, m, func(st *stFile) {
				b, e := st.offsets(t, down)
				st.tensor(t, down)["data_offsets"] = []uint64{e, b}
			})
		}), 1, []string{"model.safetensors", down}},
		{"dtype and shape disagree with the offsets", conv(func(t *testing.T, m string) {
			editST(t, m, func(st *stFile) { st.tensor(t, down)["dtype"] = "F32" })
		}), 1, []string{"model.safetensors", down}},
		{"shape disagrees with the offsets", conv(func(t *testing.T, m string) {
			editST(t, m, func(st *stFile) { st.tensor(t, down)["shape"] = []uint64{256, 256} })
		}), 1, []string{"model.safetensors", down}},
		{"unknown dtype", conv(func(t *testing.T, m string) {
			editST(t, m, func(st *stFile) { st.tensor(t, down)["dtype"] = "Q4_K" })
		}), 1, []string{"model.safetensors", down}},
		{"header claims 2^60 elements", conv(func(t *testing.T, m string) {
			editST(t, m, func(st *stFile) { st.tensor(t, down)["shape"] = []uint64{1 << 30, 1 << 30} })
		}), 1, []string{"model.safetensors", down}},
		{"shape of 2^64 elements, byte size overflows uint64", conv(func(t *testing.T, m string) {
			editST(t, m, func(st *stFile) { st.tensor(t, down)["shape"] = []uint64{1 << 32, 1 << 32} })
		}), 1, []string{"model.safetensors", down}},
		{"HF shape disagrees with config.json", conv(func(t *testing.T, m string) {
			testutil.EditConfig(t, m, func(cfg map[string]any) { cfg["intermediate_size"] = 1024 })
		}), 1, []string{"down_proj"}},
		// --- weights
		{"NaN in a projection", conv(func(t *testing.T, m string) {
			editST(t, m, func(st *stFile) { setBF16(t, st, down, 77, 0x7fc0) })
		}), 1, []string{down}},
		{"+Inf in a norm", conv(func(t *testing.T, m string) {
			editST(t, m, func(st *stFile) { setBF16(t, st, norm, 3, 0x7f80) })
		}, "--outtype", "f32"), 1, []string{norm}},
		{"-Inf in the embedding", conv(func(t *testing.T, m string) {
			editST(t, m, func(st *stFile) { setBF16(t, st, embd, 1000, 0xff80) })
		}), 1, []string{embd}},
		{"rows that do not fit the I2_S block (K % 128)", func(t *testing.T, root string) []string {
			cfg := readTinyConfig(t)
			cfg["intermediate_size"] = 320 // down_proj K = 320 = 2.5 blocks of 128
			m := filepath.Join(root, "m")
			if _, err := dummy.Generate(context.Background(), m, dummy.Options{Config: cfg, Tokenizer: tinyDir, Seed: 1}); err != nil {
				t.Fatal(err)
			}
			os.MkdirAll(filepath.Join(root, "out"), 0o755)
			return []string{"hf2gguf", m, "--outfile", filepath.Join(root, "out", "x.gguf")}
		}, 1, []string{"ffn_down", "320"}},
		// --- tokenizer and config
		{"missing tokenizer", conv(func(t *testing.T, m string) {
			os.Remove(filepath.Join(m, "tokenizer.model"))
		}), 1, []string{"--no-vocab"}},
		{"tokenizer.model is a directory", conv(func(t *testing.T, m string) {
			os.Remove(filepath.Join(m, "tokenizer.model"))
			os.Mkdir(filepath.Join(m, "tokenizer.model"), 0o755)
		}), 1, []string{"tokenizer.model"}},
		{"tokenizer.model is garbage", conv(func(t *testing.T, m string) {
			writeFile(t, filepath.Join(m, "tokenizer.model"), []byte("\x0a\xff\xff\xff\xff\x0fnot a model"))
		}), 1, []string{"tokenizer.model"}},
		{"tokenizer.json is not JSON", conv(func(t *testing.T, m string) {
			writeFile(t, filepath.Join(m, "tokenizer.json"), []byte(`{"model": {"type": "BPE", "vocab": {`))
		}), 1, []string{"tokenizer.json"}},
		{"unknown architecture", conv(func(t *testing.T, m string) {
			testutil.EditConfig(t, m, func(cfg map[string]any) { cfg["architectures"] = []string{"MambaForCausalLM"} })
		}), 1, []string{"MambaForCausalLM"}},
		{"config.json missing", conv(func(t *testing.T, m string) {
			os.Remove(filepath.Join(m, "config.json"))
		}), 1, []string{"config.json"}},
		{"config.json not JSON", conv(func(t *testing.T, m string) {
			writeFile(t, filepath.Join(m, "config.json"), []byte(`{"hidden_size": 256,`))
		}), 1, []string{"config.json"}},
		{"config.json nested 20000 deep", conv(func(t *testing.T, m string) {
			writeFile(t, filepath.Join(m, "config.json"), []byte(`{"hidden_size": `+strings.Repeat("[", 20000)))
		}), 1, []string{"config.json"}},
		{"tokenizer.json nested 20000 deep", conv(func(t *testing.T, m string) {
			writeFile(t, filepath.Join(m, "tokenizer.json"), []byte(`{"model": `+strings.Repeat(`{"a": `, 20000)))
		}), 1, []string{"tokenizer.json"}},
		{"config.json hidden_size is a string", conv(func(t *testing.T, m string) {
			testutil.EditConfig(t, m, func(cfg map[string]any) { cfg["hidden_size"] = "256" })
		}), 1, []string{"hidden_size"}},
		{"config.json num_hidden_layers 2^40", conv(func(t *testing.T, m string) {
			testutil.EditConfig(t, m, func(cfg map[string]any) { cfg["num_hidden_layers"] = int64(1 << 40) })
		}), 1, []string{"config.json", "1099511627776"}},
		// --- directory layout
		{"empty directory", func(t *testing.T, root string) []string {
			m := filepath.Join(root, "m")
			os.MkdirAll(m, 0o755)
			return []string{"hf2gguf", m, "--outfile", filepath.Join(root, "x.gguf")}
		}, 1, []string{"config.json"}},
		{"directory does not exist", func(t *testing.T, root string) []string {
			return []string{"hf2gguf", filepath.Join(root, "nope"), "--outfile", filepath.Join(root, "x.gguf")}
		}, 1, []string{"nope"}},
		{"directory is a file", func(t *testing.T, root string) []string {
			p := filepath.Join(root, "m")
			writeFile(t, p, []byte("x"))
			return []string{"hf2gguf", p, "--outfile", filepath.Join(root, "x.gguf")}
		}, 1, []string{"not a directory"}},
		{"config but no safetensors", conv(func(t *testing.T, m string) {
			os.Remove(filepath.Join(m, "model.safetensors"))
		}), 1, []string{"model.safetensors"}},
		{"index names a shard outside the directory", conv(func(t *testing.T, m string) {
			os.Rename(filepath.Join(m, "model.safetensors"), filepath.Join(m, "..", "outside.safetensors"))
			writeIndex(t, m, "../outside.safetensors")
		}), 1, []string{"../outside.safetensors"}},
		{"index names an absolute shard", conv(func(t *testing.T, m string) {
			writeIndex(t, m, filepath.Join(m, "model.safetensors"))
		}), 1, []string{"model.safetensors"}},
		{"shard is a dangling link", conv(func(t *testing.T, m string) {
			os.Remove(filepath.Join(m, "model.safetensors"))
			os.Symlink("gone.safetensors", filepath.Join(m, "model-00001-of-00001.safetensors"))
			writeIndex(t, m, "model-00001-of-00001.safetensors")
		}), 1, []string{"model-00001-of-00001.safetensors", "dangling"}},
		{"shard links to a directory outside", conv(func(t *testing.T, m string) {
			os.Remove(filepath.Join(m, "model.safetensors"))
			os.Symlink("..", filepath.Join(m, "model.safetensors"))
		}), 1, []string{"model.safetensors", "regular file"}},
		{"index names a missing shard", conv(func(t *testing.T, m string) {
			writeIndex(t, m, "model-00002-of-00002.safetensors")
		}), 1, []string{"model-00002-of-00002.safetensors"}},
		{"index not JSON", conv(func(t *testing.T, m string) {
			writeFile(t, filepath.Join(m, "model.safetensors.index.json"), []byte(`{"weight_map": [`))
		}), 1, []string{"model.safetensors.index.json"}},
		// --- output path and flags
		{"output under a regular file", func(t *testing.T, root string) []string {
			m := copyTiny(t, filepath.Join(root, "m"))
			writeFile(t, filepath.Join(root, "file"), []byte("x"))
			return []string{"hf2gguf", m, "--outfile", filepath.Join(root, "file", "x.gguf")}
		}, 1, []string{"file/x.gguf"}},
		{"output in a missing directory", func(t *testing.T, root string) []string {
			m := copyTiny(t, filepath.Join(root, "m"))
			return []string{"hf2gguf", m, "--outfile", filepath.Join(root, "no", "such", "x.gguf")}
		}, 1, []string{"no/such/x.gguf"}},
		{"output exists without --force", conv(func(t *testing.T, m string) {
			writeFile(t, filepath.Join(m, "..", "out", "x.gguf"), []byte("the previous file"))
		}), 1, []string{"x.gguf", "--force"}},
		{"output is the input directory", func(t *testing.T, root string) []string {
			m := copyTiny(t, filepath.Join(root, "m"))
			return []string{"hf2gguf", m, "--outfile", m, "--force"}
		}, 1, []string{"m"}},
		{"--outtype unknown", conv(nil, "--outtype", "q4_k"), 2, []string{"--outtype", "q4_k"}},
		{"--weight-scale unknown", conv(nil, "--weight-scale", "halve"), 2, []string{"--weight-scale"}},
		{"--threads negative", conv(nil, "--threads", "-3"), 2, []string{"--threads"}},
		{"unknown flag", conv(nil, "--bogus"), 2, []string{"--bogus"}},
		{"no directory argument", func(t *testing.T, root string) []string { return []string{"hf2gguf"} }, 2, []string{"directory"}},
		{"--kernel-config missing", conv(nil, "--outtype", "tl2", "--kernel-config", "/nonexistent/kernel_config.ini"), 1, []string{"--kernel-config"}},
		{"--kernel-config garbage", func(t *testing.T, root string) []string {
			args := conv(nil, "--outtype", "tl2", "--kernel-config")(t, root)
			p := filepath.Join(root, "kernel_config.ini")
			writeFile(t, p, []byte("[Kernels_0]\nM = x\n"))
			return append(args, p)
		}, 1, []string{"kernel"}},
		{"--metadata not TOML", func(t *testing.T, root string) []string {
			args := conv(nil, "--metadata")(t, root)
			p := filepath.Join(root, "meta.toml")
			writeFile(t, p, []byte("general.name = \n"))
			return append(args, p)
		}, 1, []string{"meta.toml"}},

		// --- inspect: GGUF files
		{"inspect: missing file", func(t *testing.T, root string) []string {
			return []string{"inspect", filepath.Join(root, "nope.gguf")}
		}, 1, []string{"nope.gguf"}},
		{"inspect: truncated GGUF (header)", gg(func(t *testing.T) []byte { return tinyI2SBytes(t)[:1000] }, inspectArgs), 1, []string{"bad.gguf"}},
		{"inspect: truncated GGUF (data)", gg(func(t *testing.T) []byte { b := tinyI2SBytes(t); return b[:len(b)-4096] }, inspectArgs), 1, []string{"bad.gguf"}},
		{"inspect: empty file", gg(func(t *testing.T) []byte { return nil }, inspectArgs), 1, []string{"bad.gguf"}},
		{"inspect: not GGUF", gg(func(t *testing.T) []byte { return []byte("PK\x03\x04 a zip file, not a GGUF file at all") }, inspectArgs), 1, []string{"bad.gguf"}},
		{"inspect: 2^60 KVs", gg(func(t *testing.T) []byte {
			return newGGUF(0, 1<<60).kvString("general.architecture", "bitnet").pad(0)
		}, inspectArgs), 1, []string{"bad.gguf"}},
		{"inspect: 2^60 tensors", gg(func(t *testing.T) []byte {
			return newGGUF(1<<60, 0).tensor("w", 0, 0, 8).pad(32)
		}, inspectArgs), 1, []string{"bad.gguf"}},
		{"inspect: 2^60-byte string", gg(func(t *testing.T) []byte {
			g := newGGUF(0, 1).str("general.architecture").u32(8).u64(1 << 60)
			g.b = append(g.b, "bitnet"...)
			return g.pad(0)
		}, inspectArgs), 1, []string{"bad.gguf"}},
		{"inspect: 2^60-element string array", gg(func(t *testing.T) []byte {
			return newGGUF(0, 1).str("tokenizer.ggml.tokens").u32(9).u32(8).u64(1 << 60).str("a").pad(0)
		}, inspectArgs), 1, []string{"bad.gguf"}},
		{"inspect: tensor of 2^60 elements", gg(func(t *testing.T) []byte {
			return newGGUF(1, 1).kvString("general.architecture", "bitnet").tensor("blk.0.ffn_down.weight", 0, 0, 1<<30, 1<<30).pad(64)
		}, inspectArgs), 1, []string{"bad.gguf", "blk.0.ffn_down.weight"}},
		{"inspect: BR-28c tensor size 2^64-16 wraps after padding", gg(func(t *testing.T) []byte {
			return newGGUF(1, 1).kvString("general.architecture", "bitnet").tensor("blk.0.attn_q.weight", 0, 0, 4, 1073741823, 1073741825, 1).pad(64)
		}, inspectArgs), 1, []string{"bad.gguf", "blk.0.attn_q.weight"}},
		{"inspect: BR-28d offset 2^32+32 beyond the file", gg(func(t *testing.T) []byte {
			return newGGUF(1, 1).kvString("general.architecture", "bitnet").tensor("output_norm.weight", 0, 1<<32+32, 8).pad(32)
		}, inspectArgs), 1, []string{"bad.gguf", "output_norm.weight"}},
		{"inspect: unknown tensor type", gg(func(t *testing.T) []byte {
			return newGGUF(1, 1).kvString("general.architecture", "bitnet").tensor("token_embd.weight", 250, 0, 32).pad(128)
		}, inspectArgs), 1, []string{"bad.gguf", "token_embd.weight"}},
		{"inspect: overlapping tensors", gg(func(t *testing.T) []byte {
			return newGGUF(2, 1).kvString("general.architecture", "bitnet").tensor("a.weight", 0, 0, 8).tensor("b.weight", 0, 0, 8).pad(32)
		}, inspectArgs), 1, []string{"bad.gguf", ".weight"}},
		{"inspect: unknown value type", gg(func(t *testing.T) []byte {
			return newGGUF(0, 1).str("general.architecture").u32(77).u32(0).pad(0)
		}, inspectArgs), 1, []string{"bad.gguf", "general.architecture"}},
		{"inspect: version 1", gg(func(t *testing.T) []byte {
			b := tinyI2SBytes(t)
			binary.LittleEndian.PutUint32(b[4:], 1)
			return b
		}, inspectArgs), 1, []string{"bad.gguf", "version"}},
		{"inspect: a directory", func(t *testing.T, root string) []string { return []string{"inspect", root} }, 1, []string{"ROOT", "not a regular file"}},
		{"inspect: no argument", func(t *testing.T, root string) []string { return []string{"inspect"} }, 2, nil},

		// --- verify
		{"verify: --gguf missing", func(t *testing.T, root string) []string { return []string{"verify"} }, 2, []string{"--gguf"}},
		{"verify: --ids not numbers", func(t *testing.T, root string) []string {
			return []string{"verify", "--gguf", tinyI2S, "--ids", "1,x"}
		}, 2, []string{"--ids", "x"}},
		{"verify: --prompt and --ids", func(t *testing.T, root string) []string {
			return []string{"verify", "--gguf", tinyI2S, "--ids", "1", "--prompt", "hi"}
		}, 2, []string{"--prompt", "--ids"}},
		{"verify: truncated GGUF", gg(func(t *testing.T) []byte { b := tinyI2SBytes(t); return b[:len(b)/2] }, verifyArgs), 1, []string{"bad.gguf"}},
		{"verify: not GGUF", gg(func(t *testing.T) []byte { return []byte("GGUX0000") }, verifyArgs), 1, []string{"bad.gguf"}},
		{"verify: --hf empty directory", func(t *testing.T, root string) []string {
			os.MkdirAll(filepath.Join(root, "hf"), 0o755)
			return []string{"verify", "--gguf", tinyI2S, "--hf", filepath.Join(root, "hf"), "--ids", "1,2"}
		}, 1, []string{"config.json"}},

		// --- tokenize
		{"tokenize: missing model", func(t *testing.T, root string) []string {
			return []string{"tokenize", "-m", filepath.Join(root, "nope.gguf"), "-p", "hi"}
		}, 1, []string{"nope.gguf"}},
		{"tokenize: truncated GGUF", gg(func(t *testing.T) []byte { return tinyI2SBytes(t)[:3000] }, tokenizeArgs), 1, []string{"bad.gguf"}},
		{"tokenize: GGUF without a vocabulary", gg(func(t *testing.T) []byte {
			return newGGUF(0, 1).kvString("general.architecture", "bitnet").pad(0)
		}, tokenizeArgs), 1, []string{"bad.gguf", "tokenizer"}},
		{"tokenize: no -m", func(t *testing.T, root string) []string { return []string{"tokenize", "-p", "hi"} }, 2, []string{"-m"}},
		{"tokenize: -f missing", func(t *testing.T, root string) []string {
			return []string{"tokenize", "-m", tinyI2S, "-f", filepath.Join(root, "nope.txt")}
		}, 1, []string{"nope.txt"}},

		// --- run
		{"run: --ids not numbers", func(t *testing.T, root string) []string {
			return []string{"run", "-m", tinyI2S, "--ids", "1,-2"}
		}, 2, []string{"--ids"}},
		{"run: truncated GGUF", gg(func(t *testing.T) []byte { b := tinyI2SBytes(t); return b[:len(b)-100] }, runArgs), 1, []string{"bad.gguf"}},

		// --- codegen
		{"codegen: --BM not a list of integers", func(t *testing.T, root string) []string {
			return []string{"codegen", "--arch", "tl2", "--model", "bitnet_b1_58-large", "--BM", "256,x,256", "--BK", "96,192,96", "--bm", "32,32,32", "--outdir", root}
		}, 2, []string{"--BM"}},
		{"codegen: --BK empty item", func(t *testing.T, root string) []string {
			return []string{"codegen", "--arch", "tl2", "--model", "bitnet_b1_58-large", "--BM", "256,128,256", "--BK", "96,,96", "--bm", "32,32,32", "--outdir", root}
		}, 2, []string{"--BK"}},
		{"codegen: unknown model", func(t *testing.T, root string) []string {
			return []string{"codegen", "--model", "gpt-5", "--outdir", root}
		}, 2, []string{"gpt-5"}},
		{"codegen: unknown arch", func(t *testing.T, root string) []string {
			return []string{"codegen", "--arch", "tl3", "--model", "bitnet_b1_58-large", "--outdir", root}
		}, 2, []string{"--arch"}},
		{"codegen: --outdir under a regular file", func(t *testing.T, root string) []string {
			writeFile(t, filepath.Join(root, "file"), []byte("x"))
			return []string{"codegen", "--arch", "tl2", "--model", "bitnet_b1_58-large", "--outdir", filepath.Join(root, "file", "sub")}
		}, 1, []string{"file/sub"}},
		{"codegen: --from-config empty directory", func(t *testing.T, root string) []string {
			os.MkdirAll(filepath.Join(root, "m"), 0o755)
			return []string{"codegen", "--arch", "tl2", "--from-config", filepath.Join(root, "m"), "--outdir", filepath.Join(root, "m")}
		}, 1, []string{"config.json"}},
		// --- tester's report: negative header numbers, sizes from flags,
		// outputs that would destroy an input, NaN flags
		{"negative shape", conv(func(t *testing.T, m string) {
			editST(t, m, func(st *stFile) { st.tensor(t, down)["shape"] = []int{-256, 256} })
		}), 1, []string{"model.safetensors", down, "shape must be a list of non-negative integers (have number -256)"}},
		{"negative data_offsets", conv(func(t *testing.T, m string) {
			editST(t, m, func(st *stFile) { st.tensor(t, down)["data_offsets"] = []int{-8, 0} })
		}), 1, []string{"model.safetensors", down, "data_offsets must be a list of non-negative integers (have number -8)"}},
		{"run -n 10^8", func(t *testing.T, root string) []string {
			return []string{"run", "-m", tinyI2S, "--ids", "1,2", "-n", "100000000"}
		}, 2, []string{"-n 100000000", "context length 2048"}},
		{"verify --tokens 10^8", func(t *testing.T, root string) []string {
			return []string{"verify", "--gguf", tinyI2S, "--ids", "1,2", "--tokens", "100000000"}
		}, 2, []string{"--tokens 100000000", "context length 2048"}},
		{"run --dump-logits is the model", func(t *testing.T, root string) []string {
			p := filepath.Join(root, "m.gguf")
			copyFile(t, tinyI2S, p)
			return []string{"run", "-m", p, "--ids", "1", "-n", "1", "--dump-logits", p}
		}, 1, []string{"--dump-logits", "is the model file"}},
		{"run --dump-logits is a link to the model", func(t *testing.T, root string) []string {
			p := filepath.Join(root, "m.gguf")
			copyFile(t, tinyI2S, p)
			if err := os.Symlink("m.gguf", filepath.Join(root, "dump")); err != nil {
				t.Fatal(err)
			}
			return []string{"run", "-m", p, "--ids", "1", "-n", "1", "--dump-logits", filepath.Join(root, "dump")}
		}, 1, []string{"--dump-logits", "is the model file"}},
		{"run --dump-logits is a FIFO", fifoArgs(func(p string) []string {
			return []string{"run", "-m", tinyI2S, "--ids", "1", "-n", "1", "--dump-logits", p}
		}), 1, []string{"--dump-logits", "not a regular file"}},
		{"verify --min-top1 NaN", func(t *testing.T, root string) []string {
			return []string{"verify", "--gguf", tinyI2S, "--min-top1", "NaN"}
		}, 2, []string{"--min-top1 NaN"}},
		{"verify --max-kl -3", func(t *testing.T, root string) []string {
			return []string{"verify", "--gguf", tinyI2S, "--max-kl", "-3"}
		}, 2, []string{"--max-kl -3"}},
		// --- FIFOs in place of input files: opening one blocks in open(2)
		// (Ctrl-C does not help), so every input is checked to be a regular
		// file first.
		{"FIFO config.json", conv(fifoIn("config.json")), 1, []string{"config.json", "not a regular file"}},
		{"FIFO model.safetensors", conv(fifoIn("model.safetensors")), 1, []string{"model.safetensors", "not a regular file"}},
		{"FIFO tokenizer.model", conv(fifoIn("tokenizer.model")), 1, []string{"tokenizer.model", "not a regular file"}},
		{"FIFO tokenizer.json", conv(fifoIn("tokenizer.json")), 1, []string{"tokenizer.json", "not a regular file"}},
		{"FIFO tokenizer_config.json", conv(fifoIn("tokenizer_config.json")), 1, []string{"tokenizer_config.json", "not a regular file"}},
		{"FIFO special_tokens_map.json", conv(fifoIn("special_tokens_map.json")), 1, []string{"special_tokens_map.json", "not a regular file"}},
		{"FIFO added_tokens.json", conv(fifoIn("added_tokens.json")), 1, []string{"added_tokens.json", "not a regular file"}},
		{"FIFO run -m", fifoArgs(func(p string) []string { return []string{"run", "-m", p, "--ids", "1", "-n", "1"} }), 1, []string{"-m/--model", "not a regular file"}},
		{"FIFO run --kernel-config", fifoArgs(func(p string) []string {
			return []string{"run", "-m", tinyI2S, "--ids", "1", "-n", "1", "--kernel-config", p}
		}), 1, []string{"--kernel-config", "not a regular file"}},
		{"FIFO inspect", fifoArgs(func(p string) []string { return []string{"inspect", p} }), 1, []string{"fifo", "not a regular file"}},
		{"FIFO perplexity -f", fifoArgs(func(p string) []string { return []string{"perplexity", "-m", tinyI2S, "-f", p} }), 1, []string{"-f/--file", "nothing to read"}},
		{"FIFO perplexity -m", fifoArgs(func(p string) []string { return []string{"perplexity", "-m", p, "-f", tinyI2S} }), 1, []string{"-m/--model", "not a regular file"}},
		{"FIFO tokenize -f", fifoArgs(func(p string) []string { return []string{"tokenize", "-m", tinyI2S, "-f", p} }), 1, []string{"-f/--file", "nothing to read"}},
		{"FIFO tokenize -m", fifoArgs(func(p string) []string { return []string{"tokenize", "-m", p, "-p", "hi"} }), 1, []string{"-m/--model", "not a regular file"}},
		{"FIFO verify --gguf", fifoArgs(func(p string) []string { return []string{"verify", "--gguf", p, "--ids", "1,2"} }), 1, []string{"--gguf", "not a regular file"}},
		{"FIFO verify --kernel-config", fifoArgs(func(p string) []string {
			return []string{"verify", "--gguf", tinyI2S, "--ids", "1,2", "--kernel-config", p}
		}), 1, []string{"--kernel-config", "not a regular file"}},
		{"FIFO embed -m", fifoArgs(func(p string) []string { return []string{"embed", "-m", p, "--ids", "1,2"} }), 1, []string{"-m/--model", "not a regular file"}},
		{"FIFO codegen --from-config config.json", func(t *testing.T, root string) []string {
			m := filepath.Join(root, "m")
			os.MkdirAll(m, 0o755)
			mkfifo(t, filepath.Join(m, "config.json"))
			return []string{"codegen", "--arch", "tl2", "--from-config", m, "--outdir", filepath.Join(root, "out")}
		}, 1, []string{"config.json", "not a regular file"}},
	}
}

func TestCorpus(t *testing.T) {
	cases := corpus()
	if len(cases) < 30 {
		t.Fatalf("only %d cases", len(cases))
	}
	for _, c := range cases {
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
			// The temp dir's name contains the test name: take it out so
			// want matches only what the program itself says.
			checkOneLine(t, strings.ReplaceAll(stderr, root, "ROOT"), c.want)
			if d := diffSnapshots(before, snapshot(t, root)); d != "" {
				t.Errorf("the run changed the tree: %s", d)
			}
		})
	}
}

// readTinyConfig returns the tiny checkpoint's config.json as a map.
func readTinyConfig(t *testing.T) map[string]any {
	t.Helper()
	var cfg map[string]any
	if err := json.Unmarshal(readFile(t, filepath.Join(tinyDir, "config.json")), &cfg); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// writeIndex writes a model.safetensors.index.json in m that puts every
// tensor of the tiny checkpoint into shard.
func writeIndex(t *testing.T, m, shard string) {
	t.Helper()
	st := readST(t, filepath.Join(tinyDir, "model.safetensors"))
	wm := map[string]string{}
	for name := range st.hdr {
		if name != "__metadata__" {
			wm[name] = shard
		}
	}
	b, err := json.Marshal(map[string]any{"metadata": map[string]any{"total_size": len(st.data)}, "weight_map": wm})
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(m, "model.safetensors.index.json"), b)
}

// TestHeaderClaimsAllocateLittle re-runs the corpus rows whose header claims
// an absurd size (2^40 … 2^64 bytes, elements, keys or tensors) and checks
// they fail fast without allocating it: under 32 MiB allocated in total by
// the whole command (cobra, reading the small inputs) and under a second.
func TestHeaderClaimsAllocateLittle(t *testing.T) {
	n := 0
	for _, c := range corpus() {
		if !strings.Contains(c.name, "2^") {
			continue
		}
		n++
		t.Run(c.name, func(t *testing.T) {
			args := c.setup(t, t.TempDir())
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			start := time.Now()
			code, _, stderr := runMain(args...)
			took := time.Since(start)
			runtime.ReadMemStats(&after)
			if code != c.code {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 32<<20 {
				t.Errorf("allocated %d MiB for a header claim", alloc>>20)
			}
			if took > time.Second {
				t.Errorf("took %v", took)
			}
		})
	}
	if n < 10 {
		t.Fatalf("only %d header-claim rows", n)
	}
}
