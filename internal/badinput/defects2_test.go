package badinput

import (
	"bufio"
	"bytes"
	"errors"
	"github.com/bitnet-convert/bitnet-convert/internal/testutil"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli"
	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
	"github.com/bitnet-convert/bitnet-convert/gguf/writer"
	"github.com/bitnet-convert/bitnet-convert/internal/embedfixture"
)

// The defects of the second hostile run (H1–H29 of the 2026-12 report,
// docs/reliability.md): one row or test per defect, through the whole
// command line.

// defects2Cases are the H rows that must fail with one line and leave the
// tree as it was (TestDefects2, the harness of TestDefects).
func defects2Cases() []badCase {
	return []badCase{
		// H2: --force onto one of the command's own secondary inputs.
		{"H2 perplexity --kl-divergence-base is the -f text", func(t *testing.T, root string) []string {
			p := filepath.Join(root, "t.txt")
			copyFile(t, pplText, p)
			return []string{"perplexity", "-m", tinyI2S, "-f", p, "-c", "64", "--chunks", "1", "--kl-divergence-base", p, "--force"}
		}, 1, []string{"--kl-divergence-base ROOT/t.txt is the -f/--file text", "give another path"}},
		{"H2 perplexity --kl-divergence-base is a link to the -f text", func(t *testing.T, root string) []string {
			p := filepath.Join(root, "t.txt")
			copyFile(t, pplText, p)
			if err := os.Symlink(p, filepath.Join(root, "base.kld")); err != nil {
				t.Fatal(err)
			}
			return []string{"perplexity", "-m", tinyI2S, "-f", p, "-c", "64", "--chunks", "1", "--kl-divergence-base", filepath.Join(root, "base.kld"), "--force"}
		}, 1, []string{"is the -f/--file text"}},
		{"H2 hf2gguf --outfile is the --metadata file", func(t *testing.T, root string) []string {
			p := filepath.Join(root, "m.toml")
			writeFile(t, p, []byte(`"general.license" = "MIT"`+"\n"))
			return []string{"hf2gguf", tinyDir, "--metadata", p, "--outfile", p, "--force"}
		}, 1, []string{"output ROOT/m.toml is the --metadata file", "give another path"}},
		{"H2 hf2gguf --outfile is the --kernel-config file", func(t *testing.T, root string) []string {
			p := filepath.Join(root, "k.ini")
			copyFile(t, tl1Config, p)
			return []string{"hf2gguf", tinyDir, "--outtype", "tl1", "--kernel-config", p, "--outfile", p, "--force"}
		}, 1, []string{"output ROOT/k.ini is the --kernel-config file"}},
		{"H2 requant --outfile is the --kernel-config file", func(t *testing.T, root string) []string {
			p := filepath.Join(root, "k.ini")
			copyFile(t, tl1Config, p)
			return []string{"requant", tinyF32, "--outtype", "tl1", "--kernel-config", p, "--outfile", p, "--force"}
		}, 1, []string{"output ROOT/k.ini is the --kernel-config file"}},
		{"H2 run --dump-logits is the --kernel-config file", func(t *testing.T, root string) []string {
			p := filepath.Join(root, "k.ini")
			copyFile(t, tl1Config, p)
			return []string{"run", "-m", tinyTL1, "--ids", "1,2", "-n", "1", "--kernel-config", p, "--dump-logits", p, "--force"}
		}, 1, []string{"--dump-logits ROOT/k.ini is the --kernel-config file"}},
		// H22: one exit code per kind of error: an id outside the
		// vocabulary and a prompt longer than the context are usage errors
		// (exit 2) in every command.
		{"H22 verify --ids outside the vocabulary", func(t *testing.T, root string) []string {
			return []string{"verify", "--gguf", tinyI2S, "--ids", "1,999"}
		}, 2, []string{"token id 999 is outside the vocabulary", "512 tokens"}},
		{"H22 embed beyond the context", func(t *testing.T, root string) []string {
			dir := filepath.Join(root, "e")
			s := embedfixture.Gemma3
			s.Vocab = 300
			if err := embedfixture.Write(dir, s, embedfixture.Options{TokenizersDir: "../../testdata/tokenizers"}); err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(root, "e.gguf")
			if code, _, stderr := runMain("hf2gguf", dir, "--no-vocab", "--outtype", "f16", "--outfile", p); code != 0 {
				t.Fatal(stderr)
			}
			writeFile(t, p, testutil.RewriteGGUF(t, p, func(kvs []gguf.KV) []gguf.KV {
				for i := range kvs {
					if strings.HasSuffix(kvs[i].Key, ".context_length") {
						kvs[i].Value = gguf.Uint32(4)
					}
				}
				return kvs
			}, nil))
			return []string{"embed", "-m", p, "--ids", "1,2,3,4,5"}
		}, 2, []string{"5 tokens exceed the context length 4"}},
		// H17: vocab-only files are refused by requant and verify
		// --ref-gguf as by the runtime commands.
		{"H17 requant a vocab-only file", vocabOnly(func(v, root string) []string {
			return []string{"requant", v, "--outtype", "tq2_0", "--outfile", filepath.Join(root, "v-tq2.gguf")}
		}), 1, []string{"is a vocab-only GGUF", "requant needs a converted model"}},
		{"H17 verify --ref-gguf a vocab-only file", vocabOnly(func(v, root string) []string {
			return []string{"verify", "--ref-gguf", v, "--gguf", tinyI2S}
		}), 1, []string{"is a vocab-only GGUF"}},
		// H5: transformers keeps the modules of
		// quantization_config.modules_to_not_convert in full precision;
		// they were ternarized silently. They are written as float now
		// (convert's TestModulesNotConverted); a TL file, which holds only
		// ternary projections, cannot take one.
		{"H5 modules_to_not_convert lists a projection", conv(func(t *testing.T, m string) {
			testutil.EditConfig(t, m, func(cfg map[string]any) {
				cfg["quantization_config"] = map[string]any{"quant_method": "bitnet", "modules_to_not_convert": []any{"lm_head", "model.layers.0.mlp.down_proj"}}
			})
		}, "--outtype", "tl1", "--kernel-config", tl1Config), 1, []string{"modules_to_not_convert", "model.layers.0.mlp.down_proj", "stays float", "tl1"}},
		// H15: projection biases were reported as wrong-shaped weights, or
		// (2-D) ternarized.
		{"H15 q_proj.bias [256]", conv(addBias("model.layers.0.self_attn.q_proj.bias", 256)), 1, []string{"model.layers.0.self_attn.q_proj.bias", "projection biases are not supported", "attention_bias"}},
		{"H15 2-D q_proj.bias [256 256]", conv(addBias("model.layers.0.self_attn.q_proj.bias", 256, 256)), 1, []string{"model.layers.0.self_attn.q_proj.bias", "projection biases are not supported"}},
		// H14: name the key and the type it has; quote names.
		{"H14 general.alignment as a string", gg(func(t *testing.T) []byte {
			return newGGUF(0, 2).kvString("general.architecture", "bitnet").kvString("general.alignment", "32").pad(0)
		}, runArgs), 1, []string{"general.alignment", "has type string", "unsigned integer"}},
		{"H14 I2_S layout key as a u32", ggufFrom(func(kvs []gguf.KV) []gguf.KV {
			return testutil.Set(kvs, "bitnet_convert.i2s_layout", gguf.Uint32(1))
		}, runArgs), 1, []string{"bitnet_convert.i2s_layout has type uint32", "want a string"}},
		{"H14 key_length 32 against rope 64", ggufFrom(func(kvs []gguf.KV) []gguf.KV {
			return testutil.Set(testutil.Set(kvs, "bitnet.attention.key_length", gguf.Uint32(32)), "bitnet.rope.dimension_count", gguf.Uint32(64))
		}, runArgs), 1, []string{"bitnet.attention.key_length 32", "bitnet.rope.dimension_count 64", "differ"}},
		{"H14 requant quotes a tensor name with a NUL", gg(func(t *testing.T) []byte {
			return renameTensor(t, "blk.0.attn_q.weight", "blk.0.attn_q.weight\x00")
		}, func(p string) []string {
			return []string{"requant", p, "--outtype", "tq2_0", "--outfile", filepath.Join(filepath.Dir(p), "o.gguf")}
		}), 1, []string{`"blk.0.attn_q.weight\x00"`}},
		// H21: "-" is stdin only where a flag says so; elsewhere a usage
		// error, not a file named "-".
		{"H21 run --dump-logits -", func(t *testing.T, root string) []string {
			return []string{"run", "-m", tinyI2S, "--ids", "1,2", "-n", "1", "--dump-logits", "-"}
		}, 2, []string{"--dump-logits -", "give a file path"}},
		{"H21 hf2gguf --outfile -", func(t *testing.T, root string) []string {
			return []string{"hf2gguf", tinyDir, "--outfile", "-"}
		}, 2, []string{"--outfile -"}},
		{"H21 perplexity --kl-divergence-base - (writing)", func(t *testing.T, root string) []string {
			return []string{"perplexity", "-m", tinyI2S, "-f", pplText, "-c", "64", "--kl-divergence-base", "-"}
		}, 2, []string{"--kl-divergence-base -"}},
		{"H21 run -m -", func(t *testing.T, root string) []string {
			return []string{"run", "-m", "-", "--ids", "1,2"}
		}, 2, []string{"--model -"}},
		{"H21 hf2gguf --metadata -", func(t *testing.T, root string) []string {
			return []string{"hf2gguf", tinyDir, "--metadata", "-", "--outfile", filepath.Join(root, "x.gguf")}
		}, 2, []string{"--metadata -"}},
		// H23: TOML errors named Go types.
		{"H23 --metadata date-time", metadataCase(`"general.x" = 1979-05-27T07:32:00Z`), 1, []string{"m.toml", `"general.x"`, "a date-time", "string"}},
		{"H23 --metadata array of tables", metadataCase("[[general.arr]]\nx = 1\n"), 1, []string{"m.toml", "an array of tables"}},
	}
}

// renameTensor returns the tiny I2_S GGUF with tensor from renamed to.
func renameTensor(t *testing.T, from, to string) []byte {
	t.Helper()
	return editInfos(t, func(ti *gguf.TensorInfo) {
		if ti.Name == from {
			ti.Name = to
		}
	})
}

// editInfos returns the tiny I2_S GGUF with every tensor info passed
// through edit (the data unchanged).
func editInfos(t *testing.T, edit func(ti *gguf.TensorInfo)) []byte {
	t.Helper()
	f, err := reader.Open(tinyI2S)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	infos := append([]gguf.TensorInfo(nil), f.Tensors...)
	var buf bytes.Buffer
	for i := range infos {
		infos[i].Ne = append([]uint64(nil), infos[i].Ne...)
		edit(&infos[i])
	}
	w, err := writer.New(&buf, f.KVs, infos, f.Alignment)
	if err != nil {
		t.Fatal(err)
	}
	for i, ti := range f.Tensors {
		d, err := f.TensorData(ti.Name)
		if err != nil {
			t.Fatal(err)
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

// addBias returns a conv edit that adds a BF16 tensor of zeros with the
// given name and shape to model.safetensors.
func addBias(name string, shape ...int) func(t *testing.T, m string) {
	return func(t *testing.T, m string) {
		editST(t, m, func(st *stFile) {
			n := 2
			dims := make([]any, len(shape))
			for i, d := range shape {
				n *= d
				dims[i] = d
			}
			start := len(st.data)
			st.data = append(st.data, make([]byte, n)...)
			st.hdr[name] = map[string]any{"dtype": "BF16", "shape": dims, "data_offsets": []any{start, start + n}}
		})
	}
}

// vocabOnly writes the tiny model's vocab-only GGUF to root/v.gguf and
// runs the command args builds.
func vocabOnly(args func(v, root string) []string) func(t *testing.T, root string) []string {
	return func(t *testing.T, root string) []string {
		v := filepath.Join(root, "v.gguf")
		if code, _, stderr := runMain("hf2gguf", tinyDir, "--vocab-only", "--outfile", v); code != 0 {
			t.Fatal(stderr)
		}
		return args(v, root)
	}
}

// defects2OK are the H rows that must succeed with a notice.
func defects2OK() []okCase {
	return []okCase{
		// H20: trailing 1-dims (llama.cpp pads every shape to 4 dims).
		{"H20 run with ne [256 512 1 1] and [256 1 1]", gg(func(t *testing.T) []byte {
			return editInfos(t, func(ti *gguf.TensorInfo) {
				switch ti.Name {
				case "token_embd.weight":
					ti.Ne = append(ti.Ne, 1, 1)
				case "output_norm.weight":
					ti.Ne = append(ti.Ne, 1, 1)
				}
			})
		}, runArgs), nil, nil},
		// H18: flags silently ignored get the "has no effect" notice.
		{"H18 hf2gguf --output-tensor-type on a tied model", func(t *testing.T, root string) []string {
			return []string{"hf2gguf", tinyDir, "--output-tensor-type", "q8_0", "--outfile", filepath.Join(root, "x.gguf")}
		}, []string{"--output-tensor-type has no effect", "tied"}, nil},
		{"H18 requant --output-tensor-type on a tied model", func(t *testing.T, root string) []string {
			return []string{"requant", tinyI2S, "--outtype", "tq2_0", "--output-tensor-type", "q8_0", "--outfile", filepath.Join(root, "x.gguf")}
		}, []string{"--output-tensor-type has no effect", "output.weight"}, nil},
		{"H18 requant --kernel-config without TL", func(t *testing.T, root string) []string {
			return []string{"requant", tinyI2S, "--outtype", "tq2_0", "--kernel-config", tl1Config, "--outfile", filepath.Join(root, "x.gguf")}
		}, []string{"--kernel-config has no effect", "TL1/TL2"}, nil},
		{"H18 verify --weight-scale without --hf", func(t *testing.T, root string) []string {
			return []string{"verify", "--gguf", tinyI2S, "--ids", "1,2", "--weight-scale", "divide"}
		}, []string{"--weight-scale has no effect", "--hf"}, nil},
	}
}

// TestH21RequantTemplate: requant wrote a file literally named
// x-{ftype}.gguf where hf2gguf expands the template.
func TestH21RequantTemplate(t *testing.T) {
	root := t.TempDir()
	if code, _, stderr := runMain("requant", tinyI2S, "--outtype", "tq2_0", "--outfile", filepath.Join(root, "x-{ftype}.gguf")); code != 0 {
		t.Fatal(stderr)
	}
	if _, err := os.Stat(filepath.Join(root, "x-tq2_0.gguf")); err != nil {
		t.Error(err)
	}
}

func TestDefects2FixedBehaviour(t *testing.T) {
	for _, c := range defects2OK() {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			code, _, stderr := runMain(c.setup(t, root)...)
			if code != 0 {
				t.Fatalf("exit %d, want 0; stderr %s", code, stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q does not say %q", stderr, w)
				}
			}
		})
	}
}

// metadataCase converts the tiny checkpoint with the TOML body as
// --metadata.
func metadataCase(body string) func(t *testing.T, root string) []string {
	return func(t *testing.T, root string) []string {
		p := filepath.Join(root, "m.toml")
		writeFile(t, p, []byte(body+"\n"))
		return []string{"hf2gguf", tinyDir, "--metadata", p, "--outfile", filepath.Join(root, "x.gguf")}
	}
}

const (
	pplText   = "../../testdata/golden/tiny-bitnet/outputs/ppl_text.txt"
	tl1Config = "../../testdata/golden/tiny-bitnet/gguf/kernel_config_tl1.ini"
	tinyTL1   = "../../testdata/golden/tiny-bitnet/gguf/ggml-model-tl1.gguf"
	tinyF32   = "../../testdata/golden/tiny-bitnet/gguf/ggml-model-f32.gguf"
)

func TestDefects2(t *testing.T) {
	for _, c := range defects2Cases() {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			args := c.setup(t, root)
			before := snapshot(t, root)
			code, _, stderr := runMain(args...)
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

// TestH1MappedModelShrinks: a GGUF that is truncated while run has it
// mapped gave SIGBUS, a 179-line trace and exit 2; it is the one-line
// "was the file changed?" error and exit 1.
func TestH1MappedModelShrinks(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildBinary(t)
	g := filepath.Join(t.TempDir(), "g.gguf")
	copyFile(t, tinyI2S, g)
	cmd := exec.Command(bin, "run", "-m", g, "--ids", "1", "-n", "2000", "--ignore-eos")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Generation has started (the weights are mapped and in use) once the
	// text header is out.
	r := bufio.NewReader(out)
	for {
		line, err := r.ReadString(':')
		if err != nil {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("run ended before generating: %v; stderr %s", err, stderr.String())
		}
		if strings.HasSuffix(line, "generated text:") {
			break
		}
	}
	if err := os.Truncate(g, 100000); err != nil {
		t.Fatal(err)
	}
	go func() { _, _ = r.WriteTo(discard{}) }()
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("exit %v, want 1; stderr %.600s", err, stderr.String())
	}
	checkOneLine(t, stderr.String(), []string{g, "was the file changed?"})
}

// TestH1MappedCheckpointShrinks: a safetensors file truncated while
// hf2gguf converts it fails on the "was the file changed?" line (exit 1,
// no trace, no temp file), whether the read that meets the end is a pread
// or a touch of the mapping.
func TestH1MappedCheckpointShrinks(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and a 70 MB checkpoint")
	}
	bin := buildBinary(t)
	m := filepath.Join(t.TempDir(), "m")
	if err := os.MkdirAll(m, 0o755); err != nil {
		t.Fatal(err)
	}
	src := largeCheckpoint(t)
	for _, n := range []string{"config.json", "model.safetensors"} {
		copyFile(t, filepath.Join(src, n), filepath.Join(m, n))
	}
	outDir := t.TempDir()
	cmd := exec.Command(bin, "hf2gguf", m, "--no-vocab", "--outtype", "f32", "--outfile", filepath.Join(outDir, "x.gguf"), "--threads", "1", "-v")
	cmd.Env = append(os.Environ(), "GOMAXPROCS=1")
	errp, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(errp)
	var all strings.Builder
	first, err := r.ReadString('\n')
	all.WriteString(first)
	if err != nil {
		cmd.Wait()
		t.Fatalf("no tensor line: %v %s", err, all.String())
	}
	if err := os.Truncate(filepath.Join(m, "model.safetensors"), 2000000); err != nil {
		t.Fatal(err)
	}
	rest, _ := r.ReadString(0)
	all.WriteString(rest)
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("exit %v, want 1; stderr %.600s", err, all.String())
	}
	lines := strings.Split(strings.TrimSpace(all.String()), "\n")
	last := lines[len(lines)-1]
	if !strings.Contains(last, "was the file changed?") || strings.Contains(all.String(), "goroutine ") {
		t.Errorf("stderr ends %q", last)
	}
	if ents, _ := os.ReadDir(outDir); len(ents) != 0 {
		t.Errorf("left in the output directory: %v", ents)
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// failWriter fails every write, as stdout on /dev/full or a closed pipe.
type failWriter struct{}

func (failWriter) Write(p []byte) (int, error) { return 0, errors.New("no space left on device") }

// TestH11StdoutWriteFails: a report that cannot be written to stdout is a
// failure (exit 1 naming stdout), not exit 0 with the result lost.
func TestH11StdoutWriteFails(t *testing.T) {
	root := t.TempDir()
	for _, args := range [][]string{
		{"perplexity", "-m", tinyI2S, "-f", pplText, "-c", "64", "--chunks", "1"},
		{"run", "-m", tinyI2S, "--ids", "1,2", "-n", "2"},
		{"verify", "--gguf", tinyI2S, "--ids", "1,2"},
		{"bench", "-m", tinyI2S, "-p", "4", "-n", "2", "-r", "1"},
		{"hf2gguf", tinyDir, "--dry-run", "--outfile", filepath.Join(root, "x.gguf")},
		{"requant", tinyF32, "--outtype", "f16", "--dry-run", "--outfile", filepath.Join(root, "y.gguf")},
	} {
		t.Run(args[0], func(t *testing.T) {
			var stderr strings.Builder
			code := cli.Main(args, failWriter{}, &stderr)
			if code != 1 {
				t.Errorf("exit %d, want 1; stderr %s", code, stderr.String())
			}
			// run prints its timings to stderr first, as llama-cli does
			lines := strings.SplitAfter(stderr.String(), "\n")
			last := stderr.String()
			if len(lines) > 1 {
				last = lines[len(lines)-2] + lines[len(lines)-1]
			}
			checkOneLine(t, last, []string{"write stdout", "no space left on device"})
		})
	}
}

// TestH16InspectEscapesNames: a key or tensor name with ESC bytes cleared
// and coloured the terminal; names are quoted as values already are.
func TestH16InspectEscapesNames(t *testing.T) {
	p := filepath.Join(t.TempDir(), "ansi.gguf")
	writeFile(t, p, newGGUF(1, 2).kvString("general.architecture", "llama").kvString("\x1b[2J\x1b[31mevil", "x").
		tensor("w\x1b[31m.weight", 0, 0, 8).pad(32))
	code, stdout, stderr := runMain("inspect", p)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if strings.ContainsRune(stdout, 0x1b) {
		t.Errorf("raw ESC in the report:\n%q", stdout)
	}
	for _, w := range []string{`"\x1b[2J\x1b[31mevil"`, `"w\x1b[31m.weight"`, "  general.architecture "} {
		if !strings.Contains(stdout, w) {
			t.Errorf("report does not show %s:\n%s", w, stdout)
		}
	}
}
