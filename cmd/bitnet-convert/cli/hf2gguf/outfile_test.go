package hf2gguf

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/convert"
	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
)

// generalName reads general.name of a written GGUF.
func generalName(t *testing.T, path string) string {
	t.Helper()
	f, err := reader.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	kv, ok := f.Get("general.name")
	if !ok {
		t.Fatalf("%s: no general.name", path)
	}
	return kv.V.(string)
}

// copyTiny copies the tiny golden checkpoint into dir.
func copyTiny(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"config.json", "model.safetensors", "tokenizer.model", "tokenizer_config.json"} {
		b, err := os.ReadFile(filepath.Join(golden, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// --outfile follows convert_hf_to_gguf.py: a directory gets the default
// name, {ftype}/{outtype} in the file name become the outtype; a repo id as
// --model-name stays verbatim in general.name but gives a safe file name; a
// hub-cache snapshot is named after the repository, not the revision.
func TestOutfileDirectoryTemplateAndNames(t *testing.T) {
	dir := t.TempDir()
	wd, _ := os.Getwd()
	abs := func(p string) string {
		if filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(wd, p)
	}
	snap := filepath.Join(dir, "hub", "models--microsoft--bitnet-tiny", "snapshots", "3f1e2d4c5b6a79880716253443526170d8e9fa0b")
	copyTiny(t, snap)
	for _, tc := range []struct {
		name     string
		opts     Options
		wantFile string
		wantName string
	}{
		{"directory", Options{Dir: golden, OutFile: dir, ModelName: "tiny"}, filepath.Join(dir, "tiny-i2_s.gguf"), "tiny"},
		{"directory with slash and tl2", Options{Dir: golden, OutFile: dir + "/", OutType: "tl2", ModelName: "tiny"}, filepath.Join(dir, "tiny-tl2.gguf"), "tiny"},
		{"template", Options{Dir: golden, OutFile: filepath.Join(dir, "m-{ftype}.gguf"), OutType: "f16"}, filepath.Join(dir, "m-f16.gguf"), "hf"},
		{"upper template", Options{Dir: golden, OutFile: filepath.Join(dir, "m.{OUTTYPE}.gguf")}, filepath.Join(dir, "m.I2_S.gguf"), "hf"},
		{"repo id as model name", Options{Dir: golden, OutFile: dir, ModelName: "microsoft/BitNet-b1.58-2B-4T"}, filepath.Join(dir, "microsoft-BitNet-b1.58-2B-4T-i2_s.gguf"), "microsoft/BitNet-b1.58-2B-4T"},
		{"path escape in model name", Options{Dir: golden, OutFile: dir, ModelName: "../../x\ny"}, filepath.Join(dir, "x-y-i2_s.gguf"), "../../x\ny"},
		{"hub cache snapshot", Options{Dir: snap, OutFile: dir}, filepath.Join(dir, "bitnet-tiny-i2_s.gguf"), "bitnet-tiny"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, _, err := run(t, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(out, "wrote "+tc.wantFile+":") {
				t.Errorf("summary %q, want it to name %s", out, tc.wantFile)
			}
			if got := generalName(t, abs(tc.wantFile)); got != tc.wantName {
				t.Errorf("general.name %q, want %q", got, tc.wantName)
			}
			os.Remove(tc.wantFile)
		})
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 { // only hub/
		t.Errorf("stray files: %v", ents)
	}
	if _, _, err := run(t, Options{Dir: golden, OutFile: "x-{nope}.gguf"}); err == nil || !strings.Contains(err.Error(), "{nope}") {
		t.Errorf("unknown template field: %v", err)
	}
}

// --dry-run names the output and fails (after the plan) exactly when the
// real run would: an existing output without --force, a missing directory.
func TestDryRunPredictsTheRun(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "x.gguf")
	stdout, _, err := run(t, Options{Dir: golden, OutFile: out, DryRun: true})
	if err != nil || !strings.HasPrefix(stdout, "output "+out+"\n") {
		t.Fatalf("dry run: %v\n%s", err, stdout)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatal("dry run wrote the output")
	}
	os.WriteFile(out, []byte("old"), 0o644)
	stdout, _, err = run(t, Options{Dir: golden, OutFile: out, DryRun: true})
	if err == nil || !strings.Contains(err.Error(), "real run would fail") || !strings.Contains(err.Error(), "--force") || !strings.Contains(stdout, "token_embd.weight") {
		t.Errorf("existing output: %v\n%s", err, stdout)
	}
	if _, _, err := run(t, Options{Dir: golden, OutFile: out, DryRun: true, Force: true}); err != nil {
		t.Errorf("existing output with --force: %v", err)
	}
	if _, _, err := run(t, Options{Dir: golden, OutFile: filepath.Join(dir, "nodir", "x.gguf"), DryRun: true}); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("missing directory: %v", err)
	}
	if _, _, err := run(t, Options{Dir: golden, OutFile: filepath.Join(dir, "new") + "/"}); err == nil || !strings.Contains(err.Error(), "directory "+filepath.Join(dir, "new")+" does not exist") {
		t.Errorf("missing directory with a slash: %v", err)
	}
	if b, _ := os.ReadFile(out); string(b) != "old" {
		t.Error("the existing output changed")
	}
}

// --json: the dry-run plan and the summary as one object each.
func TestJSONPlanAndSummary(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "x.gguf")
	stdout, _, err := run(t, Options{Dir: golden, OutFile: out, DryRun: true, JSON: true})
	if err != nil {
		t.Fatal(err)
	}
	var plan Report
	if err := json.Unmarshal([]byte(stdout), &plan); err != nil {
		t.Fatalf("%v in %s", err, stdout)
	}
	if !plan.DryRun || plan.Output != out || plan.Arch != "bitnet" || plan.OutType != "i2_s" || len(plan.Tensors) != plan.TensorCount || plan.TensorCount == 0 || plan.PeakMemory == 0 {
		t.Fatalf("plan %+v", plan)
	}
	var sum uint64
	for _, tt := range plan.Tensors {
		sum += tt.Bytes
	}
	if sum != plan.DataBytes || plan.Tensors[0].GGUF == "" || len(plan.Tensors[0].Ne) == 0 {
		t.Errorf("tensor bytes %d, data %d; first %+v", sum, plan.DataBytes, plan.Tensors[0])
	}
	stdout, _, err = run(t, Options{Dir: golden, OutFile: out, JSON: true})
	if err != nil {
		t.Fatal(err)
	}
	var rep Report
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("%v in %s", err, stdout)
	}
	fi, _ := os.Stat(out)
	if rep.DryRun || rep.Output != out || rep.TensorCount != plan.TensorCount || rep.DataBytes != plan.DataBytes || len(rep.Tensors) != 0 || fi == nil || uint64(fi.Size()) < rep.DataBytes {
		t.Errorf("summary %+v", rep)
	}
	stdout, _, err = run(t, Options{Dir: golden, OutFile: out, DryRun: true, JSON: true})
	if err == nil || !strings.Contains(stdout, `"output_error"`) {
		t.Errorf("dry run over an existing file: %v\n%s", err, stdout)
	}
}

// --list-archs comes from the converter registry.
func TestListArchs(t *testing.T) {
	cmd := NewCmd(nil)
	var out bytes.Buffer
	cmd.SetArgs([]string{"--list-archs"})
	cmd.SetOut(&out)
	cmd.SetErr(&bytes.Buffer{})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"BitNetForCausalLM", "bitnet-b1.58 (hidden_act relu2)", convert.OutTypeList(","), "i2_s,tl1,tl2,tq1_0,tq2_0,", "Qwen3Model", "qwen3", "f32,f16,bf16,i2_s", "Gemma3TextModel", "LlamaForCausalLM", "llama"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("--list-archs output lacks %q:\n%s", want, out.String())
		}
	}
	cmd = NewCmd(nil)
	cmd.SetArgs([]string{"--list-archs", "--json"})
	out.Reset()
	cmd.SetOut(&out)
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	var archs []map[string]any
	if err := json.Unmarshal(out.Bytes(), &archs); err != nil || len(archs) < 5 {
		t.Errorf("--json: %v %s", err, out.String())
	}
}

// A user's own link to a shard kept in another directory converts (the
// HF-cache ../../blobs layout always did).
func TestSymlinkedShardOutsideTheDirectory(t *testing.T) {
	root := t.TempDir()
	in := filepath.Join(root, "model")
	copyTiny(t, in)
	elsewhere := filepath.Join(root, "other-disk", "model.safetensors")
	os.MkdirAll(filepath.Dir(elsewhere), 0o755)
	if err := os.Rename(filepath.Join(in, "model.safetensors"), elsewhere); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, filepath.Join(in, "model.safetensors")); err != nil {
		t.Skip(err)
	}
	out := filepath.Join(root, "x.gguf")
	if _, _, err := run(t, Options{Dir: in, OutFile: out}); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(out)
	if _, _, err := run(t, Options{Dir: golden, OutFile: filepath.Join(root, "y.gguf"), ModelName: "model"}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(root, "y.gguf"))
	if !bytes.Equal(a, b) {
		t.Error("the linked checkpoint converts to different bytes")
	}
}

// --outfile naming the input directory is refused: the input is only read.
func TestOutfileInputDirectoryRefused(t *testing.T) {
	in := filepath.Join(t.TempDir(), "m")
	copyTiny(t, in)
	_, _, err := run(t, Options{Dir: in, OutFile: in, Force: true})
	if err == nil || !strings.Contains(err.Error(), "is the input directory") {
		t.Fatalf("err %v", err)
	}
	if ents, _ := os.ReadDir(in); len(ents) != 4 {
		t.Errorf("the input directory changed: %v", ents)
	}
}
