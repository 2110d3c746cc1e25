package hf2gguf

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/dummy"
	"github.com/bitnet-convert/bitnet-convert/gguf/reader"

	"github.com/bitnet-convert/bitnet-convert/internal/osx"
)

const golden = "../../../../testdata/golden/tiny-bitnet/hf"

func TestNewCmdParsesFlags(t *testing.T) {
	var got *Options
	cmd := NewCmd(func(o *Options) error { got = o; return nil })
	cmd.SetArgs([]string{"some/dir", "--outtype", "f16", "--outfile", "x.gguf", "--model-name", "m", "--dry-run", "--force", "-v", "--weight-scale", "divide", "--allow-fallback", "--pre", "llama-bpe", "-t", "3"})
	cmd.SetOut(&bytes.Buffer{})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	want := Options{Dir: "some/dir", OutType: "f16", OutFile: "x.gguf", ModelName: "m", DryRun: true, Force: true, Verbose: true, WeightScale: "divide", AllowFallback: true, Pre: "llama-bpe", Threads: 3}
	if got.Dir != want.Dir || got.OutType != want.OutType || got.OutFile != want.OutFile || got.ModelName != want.ModelName || !got.DryRun || !got.Force || !got.Verbose || got.WeightScale != want.WeightScale || !got.AllowFallback || got.Pre != want.Pre || got.Threads != 3 {
		t.Errorf("options %+v", got)
	}
}

func TestNewCmdRejectsBadUsage(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"a", "b"},
		{"dir", "--outtype", "q4_0"},
		{"dir", "--weight-scale", "sometimes"},
		{"dir", "--vocab-only", "--no-vocab"},
		{"dir", "--i2s-layout", "mips"},
		{"dir", "--outtype", "tq2_0", "--i2s-layout", "arm"},
		{"dir", "--token-embedding-type", "q4_k"},
		{"dir", "--output-tensor-type", "i2_s"},
	} {
		cmd := NewCmd(func(*Options) error { t.Fatalf("%v: run called", args); return nil })
		cmd.SetArgs(args)
		cmd.SetOut(&bytes.Buffer{})
		cmd.SetErr(&bytes.Buffer{})
		if err := cmd.Execute(); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}

func run(t *testing.T, opts Options) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	opts.Stdout, opts.Stderr = &out, &errb
	opts.Context = context.Background()
	if opts.OutType == "" {
		opts.OutType = "i2_s"
	}
	err := Run(&opts)
	return out.String(), errb.String(), err
}

func TestRunSummaryAndForce(t *testing.T) {
	out := filepath.Join(t.TempDir(), "tiny.gguf")
	stdout, _, err := run(t, Options{Dir: golden, OutFile: out, ModelName: "tiny"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"wrote " + out, "I2_S 14", "F16 1", "F32 9"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("summary %q lacks %q", stdout, want)
		}
	}
	before, _ := os.ReadFile(out)
	_, _, err = run(t, Options{Dir: golden, OutFile: out, OutType: "f32"})
	if err == nil || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("existing output: err = %v, want a hint at --force", err)
	}
	after, _ := os.ReadFile(out)
	if !bytes.Equal(before, after) {
		t.Fatal("existing output changed without --force")
	}
	if _, _, err := run(t, Options{Dir: golden, OutFile: out, OutType: "f32", Force: true}); err != nil {
		t.Fatal(err)
	}
	f, err := reader.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if ft, _ := f.Uint("general.file_type"); ft != 0 {
		t.Errorf("file_type %d after --force f32", ft)
	}
}

func TestDryRunWritesNothing(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "x.gguf")
	stdout, _, err := run(t, Options{Dir: golden, OutFile: out, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("dry run wrote %v", ents)
	}
	for _, want := range []string{"model.layers.0.self_attn.q_proj.weight", "blk.0.attn_q.weight", "[256 256]", "BF16 → I2_S", "16416 bytes", "estimated peak memory"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("plan lacks %q:\n%s", want, stdout)
		}
	}
}

func TestDefaultOutfileAndModelName(t *testing.T) {
	wd, _ := os.Getwd()
	abs, _ := filepath.Abs(golden)
	tmp := t.TempDir()
	if err := os.Chdir(tmp); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	if _, _, err := run(t, Options{Dir: abs}); err != nil {
		t.Fatal(err)
	}
	f, err := reader.Open(filepath.Join(tmp, "hf-i2_s.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if n, _ := f.String("general.name"); n != "hf" {
		t.Errorf("general.name %q, want the directory name hf", n)
	}
}

func TestVocabOnlyAndMetadata(t *testing.T) {
	dir := t.TempDir()
	md := filepath.Join(dir, "meta.toml")
	os.WriteFile(md, []byte("\"general.license\" = \"MIT\"\n[general]\nname = \"renamed\"\nsize_label = \"tiny\"\n"), 0o644)
	out := filepath.Join(dir, "v.gguf")
	if _, _, err := run(t, Options{Dir: golden, OutFile: out, VocabOnly: true, MetadataFile: md}); err != nil {
		t.Fatal(err)
	}
	f, err := reader.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if len(f.Tensors) != 0 {
		t.Errorf("--vocab-only wrote %d tensors", len(f.Tensors))
	}
	for k, want := range map[string]string{"general.license": "MIT", "general.name": "renamed", "general.size_label": "tiny"} {
		if v, _ := f.String(k); v != want {
			t.Errorf("%s = %q, want %q", k, v, want)
		}
	}
	if v, ok := f.Get("tokenizer.ggml.tokens"); !ok || len(v.V.([]string)) != 512 {
		t.Error("--vocab-only lacks the 512 tokens")
	}
	os.WriteFile(md, []byte("\"general.architecture\" = \"llama\"\n"), 0o644)
	if _, _, err := run(t, Options{Dir: golden, OutFile: filepath.Join(dir, "w.gguf"), MetadataFile: md}); err == nil || !strings.Contains(err.Error(), "general.architecture") {
		t.Errorf("overriding general.architecture: err = %v", err)
	}
	os.WriteFile(md, []byte("foo = 1\n"), 0o644)
	if _, _, err := run(t, Options{Dir: golden, OutFile: filepath.Join(dir, "w.gguf"), MetadataFile: md}); err == nil || !strings.Contains(err.Error(), `"foo"`) {
		t.Errorf("non-general key: err = %v", err)
	}
}

func TestCancelledLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "c.gguf")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var o, e bytes.Buffer
	err := Run(&Options{Dir: golden, OutFile: out, OutType: "i2_s", Stdout: &o, Stderr: &e, Context: ctx})
	if err == nil || !strings.Contains(err.Error(), "interrupted") {
		t.Fatalf("err = %v", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("cancelled run left %v", ents)
	}
}

// The output may not be one of the input files, even with --force, and
// --metadata may not set a key twice; nothing is written. (A directory as
// --outfile receives the default name: outfile_test.go.)
func TestRefusedOutputsAndDuplicateMetadata(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	os.Mkdir(in, 0o755)
	for _, name := range []string{"config.json", "model.safetensors", "tokenizer.model", "tokenizer_config.json"} {
		b, _ := os.ReadFile(filepath.Join(golden, name))
		os.WriteFile(filepath.Join(in, name), b, 0o644)
	}
	before, _ := os.ReadFile(filepath.Join(in, "model.safetensors"))
	for _, tc := range []struct{ out, want string }{
		{filepath.Join(in, "model.safetensors"), "is the input file"},
	} {
		_, _, err := run(t, Options{Dir: in, OutFile: tc.out, Force: true})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("--outfile %s: err = %v, want %q", tc.out, err, tc.want)
		}
	}
	after, _ := os.ReadFile(filepath.Join(in, "model.safetensors"))
	if !bytes.Equal(before, after) {
		t.Fatal("the input file changed")
	}
	md := filepath.Join(dir, "m.toml")
	os.WriteFile(md, []byte("\"general.name\" = \"a\"\n[general]\nname = \"b\"\n"), 0o644)
	if _, _, err := run(t, Options{Dir: in, OutFile: filepath.Join(dir, "o.gguf"), MetadataFile: md}); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("duplicate --metadata key: err = %v", err)
	}
}

// Standard general.* keys keep llama.cpp's types; --kernel-config needs a TL
// outtype.
func TestMetadataTypesAndKernelConfigFlag(t *testing.T) {
	dir := t.TempDir()
	md := filepath.Join(dir, "m.toml")
	os.WriteFile(md, []byte("[general]\nname = 5\n"), 0o644)
	if _, err := ReadMetadata(md); err == nil || !strings.Contains(err.Error(), `"general.name" must be a string`) {
		t.Errorf("general.name = 5: %v", err)
	}
	os.WriteFile(md, []byte("[general]\ntags = [\"a\", \"b\"]\nmy_number = 5\n"), 0o644)
	if kvs, err := ReadMetadata(md); err != nil || len(kvs) != 2 {
		t.Errorf("tags and a custom key: %v %v", kvs, err)
	}
	cmd := NewCmd(func(*Options) error { t.Fatal("ran"); return nil })
	cmd.SetArgs([]string{"d", "--kernel-config", "k.ini"})
	cmd.SetOut(&bytes.Buffer{})
	cmd.SetErr(&bytes.Buffer{})
	if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), "--kernel-config applies to --outtype tl1 or tl2") {
		t.Errorf("--kernel-config with i2_s: %v", err)
	}
}

// A FIFO given as --metadata is refused at once instead of blocking.
func TestMetadataFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "m.toml")
	if err := osx.Mkfifo(fifo); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadMetadata(fifo); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("err = %v", err)
	}
}

func TestNewCmdNewFlags(t *testing.T) {
	var got *Options
	cmd := NewCmd(func(o *Options) error { got = o; return nil })
	cmd.SetArgs([]string{"d", "--outtype", "i2_s", "--i2s-layout", "arm", "--token-embedding-type", "Q6_K", "--output-tensor-type", "q8_0"})
	cmd.SetOut(&bytes.Buffer{})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.I2SLayout != "arm" || got.TokenEmbdType != "Q6_K" || got.OutputType != "q8_0" {
		t.Errorf("options %+v", got)
	}
}

// A relu² model written for mainline llama.cpp prints the notice.
func TestRunTQNotice(t *testing.T) {
	out := filepath.Join(t.TempDir(), "x.gguf")
	_, stderr, err := run(t, Options{Dir: "../../../../testdata/golden/b158-h512/hf", OutType: "tq2_0", OutFile: out, I2SLayout: "x86"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr, "relu²") || !strings.Contains(stderr, "hidden_activation") {
		t.Errorf("stderr %q lacks the relu² notice", stderr)
	}
}

// TestGroupScaledOuttypes: a group-scaled dense checkpoint (dummy
// --group-scaled) converts with --outtype q2_0; the default I2_S and TQ2_0
// are refused with one line naming the tensor and --outtype q2_0; the
// --ternarize flag reaches the converter and makes TQ2_0 the lossy
// conversion with a warning.
func TestGroupScaledOuttypes(t *testing.T) {
	cfg := map[string]any{
		"architectures": []any{"LlamaForCausalLM"}, "model_type": "llama", "hidden_act": "silu",
		"hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 1, "num_attention_heads": 4,
		"num_key_value_heads": 2, "vocab_size": 300, "rms_norm_eps": 1e-5, "max_position_embeddings": 512,
	}
	dir := filepath.Join(t.TempDir(), "hf")
	if _, err := dummy.Generate(context.Background(), dir, dummy.Options{Config: cfg, GroupScaled: true, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	for _, ot := range []string{"i2_s", "tq2_0"} {
		_, _, err := run(t, Options{Dir: dir, OutType: ot, OutFile: filepath.Join(t.TempDir(), "x.gguf"), NoVocab: true, I2SLayout: "x86"})
		if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "tensor blk.0.") || !strings.Contains(err.Error(), "use --outtype q2_0") {
			t.Errorf("%s: %v", ot, err)
		}
	}
	if _, _, err := run(t, Options{Dir: dir, OutType: "q2_0", OutFile: filepath.Join(t.TempDir(), "q.gguf"), NoVocab: true, I2SLayout: "x86"}); err != nil {
		t.Fatalf("q2_0: %v", err)
	}
	var got *Options
	cmd := NewCmd(func(o *Options) error { got = o; return nil })
	cmd.SetArgs([]string{dir, "--outtype", "tq2_0", "--ternarize", "--no-vocab"})
	cmd.SetOut(&bytes.Buffer{})
	if err := cmd.Execute(); err != nil || !got.Ternarize {
		t.Fatalf("--ternarize: %v %+v", err, got)
	}
	got.OutFile = filepath.Join(t.TempDir(), "t.gguf")
	_, stderr, err := run(t, *got)
	if err != nil || !strings.Contains(stderr, "--ternarize: 7 group-scaled projection(s) re-ternarized") {
		t.Errorf("--ternarize tq2_0: %v, stderr %q", err, stderr)
	}
}
