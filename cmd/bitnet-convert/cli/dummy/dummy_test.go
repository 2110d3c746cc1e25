package dummy

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/usage"
	"github.com/bitnet-convert/bitnet-convert/hf"
	"github.com/bitnet-convert/bitnet-convert/internal/osx"
	"github.com/bitnet-convert/bitnet-convert/presets"
)

// parse runs the command's flag parsing only and returns the options.
func parse(t *testing.T, args ...string) (*DummyOptions, error) {
	t.Helper()
	var got *DummyOptions
	cmd := NewCmdDummy(func(o *DummyOptions) error { got = o; return nil })
	cmd.SetArgs(args)
	cmd.SetOut(&bytes.Buffer{})
	cmd.SetErr(&bytes.Buffer{})
	err := cmd.Execute()
	return got, err
}

func TestFlags(t *testing.T) {
	cases := []struct {
		args      []string
		preset    string
		packed    bool
		packedSet bool
	}{
		{[]string{"--preset", "bitnet_b1_58-large", "--out", "x"}, "bitnet_b1_58-large", false, false},
		{[]string{"--preset=BitNet-b1.58-2B-4T", "--out", "x", "--packed=false"}, "BitNet-b1.58-2B-4T", false, true},
		{[]string{"--out", "x", "--preset", "bitnet_b1_58-3B", "--packed"}, "bitnet_b1_58-3B", true, true},
		{[]string{"--preset"}, listPresets, false, false},
	}
	for _, tc := range cases {
		o, err := parse(t, tc.args...)
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if o.Preset != tc.preset || o.Packed != tc.packed || o.PackedSet != tc.packedSet {
			t.Errorf("%v: preset %q packed %v set %v", tc.args, o.Preset, o.Packed, o.PackedSet)
		}
	}
	o, err := parse(t, "--config", "c.json", "--out", "d", "--layers", "3", "--seed", "9", "--tokenizer", "tok", "--linear-class", "bitlinear", "--max-shard-size", "2GB", "--force")
	if err != nil {
		t.Fatal(err)
	}
	if o.ConfigFile != "c.json" || o.Out != "d" || o.Layers != 3 || o.Seed != 9 || o.Tokenizer != "tok" || o.LinearClass != "bitlinear" || o.MaxShardSize != "2GB" || !o.Force {
		t.Errorf("parsed %+v", o)
	}
	if _, err := parse(t, "--out", "x", "stray"); err == nil {
		t.Error("a positional argument without --preset was accepted")
	}
}

func TestList(t *testing.T) {
	var out bytes.Buffer
	if err := dummyRun(&DummyOptions{Preset: listPresets, Stdout: &out}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 1+len(presets.All()) {
		t.Fatalf("%d lines, want a header and %d presets:\n%s", len(lines), len(presets.All()), out.String())
	}
	for _, want := range []string{"BitNet-b1.58-2B-4T  ", "BitNetForCausalLM", "2560", "128256", "packed U8", "llama3", "microsoft/BitNet-b1.58-2B-4T"} {
		if !strings.Contains(lines[1], want) {
			t.Errorf("first preset line %q lacks %q", lines[1], want)
		}
	}
}

// TestUsageErrors: every bad invocation is a usage.Error (exit 2) and writes
// nothing.
func TestUsageErrors(t *testing.T) {
	out := filepath.Join(t.TempDir(), "o")
	cases := []struct {
		opts DummyOptions
		want string
	}{
		{DummyOptions{Out: out}, "exactly one of --preset NAME or --config FILE"},
		{DummyOptions{Preset: "bitnet_b1_58-large", ConfigFile: "c.json", Out: out}, "exactly one of"},
		{DummyOptions{Preset: "bitnet_b1_58-large"}, "--out DIR is required"},
		{DummyOptions{Preset: "nope", Out: out, MaxShardSize: "5GB"}, `unknown model "nope"`},
		{DummyOptions{Preset: "bitnet_b1_58-large", Out: out, Layers: -1, MaxShardSize: "5GB"}, "--layers -1"},
		{DummyOptions{Preset: "bitnet_b1_58-large", Out: out, LinearClass: "x", MaxShardSize: "5GB"}, "--linear-class \"x\""},
		{DummyOptions{Preset: "bitnet_b1_58-large", Out: out, LinearClass: "bitlinear", MaxShardSize: "5GB"}, "add --packed"},
		{DummyOptions{Preset: "bitnet_b1_58-large", Out: out, MaxShardSize: "lots"}, "--max-shard-size"},
		{DummyOptions{Preset: listPresets, ConfigFile: "c.json"}, "cannot be combined"},
		{DummyOptions{Preset: "bitnet_b1_58-large", Out: out, GroupScaled: true, Packed: true, PackedSet: true, MaxShardSize: "5GB"}, "--group-scaled writes dense F16 weights: not with --packed"},
	}
	for _, tc := range cases {
		tc.opts.Stdout = &bytes.Buffer{}
		err := dummyRun(&tc.opts)
		var ue *usage.Error
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want %q", tc.opts, err, tc.want)
			continue
		}
		if !asUsage(err, &ue) {
			t.Errorf("%+v: %v is not a usage error", tc.opts, err)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("output directory created by a bad invocation")
	}
}

func asUsage(err error, ue **usage.Error) bool {
	u, ok := err.(*usage.Error)
	*ue = u
	return ok
}

// TestRunConfig generates from a config.json file (the 2B-4T config with a
// small vocabulary) with --packed --linear-class bitlinear and the Llama-3
// tokenizer, and reads it back.
func TestRunConfig(t *testing.T) {
	m, _ := presets.Get("BitNet-b1.58-2B-4T-bf16")
	cfg := map[string]any{}
	for k, v := range m.Config {
		cfg[k] = v
	}
	cfg["vocab_size"] = 256
	b, _ := json.Marshal(cfg)
	cfgPath := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(cfgPath, b, 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "m")
	var out bytes.Buffer
	err := dummyRun(&DummyOptions{ConfigFile: cfgPath, Out: dir, Layers: 1, Packed: true, PackedSet: true, LinearClass: "bitlinear",
		Tokenizer: "../../../../testdata/tokenizers/llama3", Seed: 4, MaxShardSize: "5GB", Stdout: &out, Context: context.Background()})
	if err != nil {
		t.Fatal(err)
	}
	if want := "1 layer(s), packed U8 + weight_scale, 20 tensors"; !strings.Contains(out.String(), want) || !strings.Contains(out.String(), "tokenizer: tokenizer.json, tokenizer_config.json") {
		t.Errorf("summary %q lacks %q or the tokenizer files", out.String(), want)
	}
	ck, err := hf.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ck.Close()
	qc, _ := ck.Config.Sub("quantization_config")
	if lc, _, _ := qc.String("linear_class"); lc != "bitlinear" {
		t.Errorf("linear_class %q, want bitlinear", lc)
	}
	if ref, ok := ck.Lookup("model.layers.0.mlp.down_proj.weight"); !ok || ref.DType != hf.U8 || ref.Shape[0] != 640 || ref.Shape[1] != 6912 {
		t.Errorf("down_proj %+v", ref)
	}
	if _, err := os.Stat(filepath.Join(dir, "tokenizer.json")); err != nil {
		t.Error(err)
	}
	// Again without --force: refused, naming the flag; the files stay.
	err = dummyRun(&DummyOptions{ConfigFile: cfgPath, Out: dir, Layers: 1, Seed: 4, MaxShardSize: "5GB", Stdout: &out, Context: context.Background()})
	if err == nil || !strings.Contains(err.Error(), "--force") {
		t.Errorf("rerun: %v, want a hint at --force", err)
	}
	if _, err := os.Stat(filepath.Join(dir, hf.SingleFile)); err != nil {
		t.Error("refused rerun removed the checkpoint")
	}
}

// TestRunErrors: data errors (exit 1) name the file; an interrupted run
// leaves nothing.
func TestRunErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte("[1]"), 0o644)
	gpt := filepath.Join(dir, "gpt.json")
	os.WriteFile(gpt, []byte(`{"architectures":["GPT2LMHeadModel"]}`), 0o644)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	cases := []struct {
		opts DummyOptions
		want string
	}{
		{DummyOptions{ConfigFile: filepath.Join(dir, "missing.json")}, "missing.json"},
		{DummyOptions{ConfigFile: bad}, "bad.json: not a JSON object"},
		{DummyOptions{ConfigFile: gpt}, `architecture "GPT2LMHeadModel" has no dummy layout`},
		{DummyOptions{Preset: "bitnet_b1_58-large", Context: ctx}, "interrupted"},
		{DummyOptions{Preset: "bitnet_b1_58-large", Tokenizer: dir}, "holds none of tokenizer.json"},
	}
	for _, tc := range cases {
		out := filepath.Join(dir, "out")
		tc.opts.Out, tc.opts.MaxShardSize, tc.opts.Stdout = out, "5GB", &bytes.Buffer{}
		if tc.opts.Context == nil {
			tc.opts.Context = context.Background()
		}
		err := dummyRun(&tc.opts)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.opts, err, tc.want)
		}
		var ue *usage.Error
		if asUsage(err, &ue) {
			t.Errorf("%v is a usage error; data errors exit 1", err)
		}
		ents, _ := os.ReadDir(out)
		if len(ents) != 0 {
			t.Errorf("%+v left %d files", tc.opts, len(ents))
		}
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]uint64{"5GB": 5e9, "500MB": 5e8, "2GiB": 2 << 30, "1000": 1000, " 7 kb ": 7000, "3B": 3} {
		got, err := ParseSize(in)
		if err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "GB", "-1GB", "1.5GB", "99999999999999999999", "18446744073GB"} {
		if _, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) accepted", in)
		}
	}
}

func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"5GB", "1", "2GiB", "0", "x", "9223372036854775807", "9223372036854775808KB"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseSize(s)
		if err == nil && (n == 0 || n > 1<<63) {
			t.Errorf("ParseSize(%q) = %d", s, n)
		}
	})
}

// An explicit --layers 0 is a usage error, not "the config's layer count".
func TestLayersZeroFlag(t *testing.T) {
	cmd := NewCmdDummy(func(*DummyOptions) error { t.Fatal("ran"); return nil })
	cmd.SetArgs([]string{"--preset", "bitnet_b1_58-large", "--out", t.TempDir(), "--layers", "0"})
	cmd.SetOut(&bytes.Buffer{})
	cmd.SetErr(&bytes.Buffer{})
	err := cmd.Execute()
	var ue *usage.Error
	if err == nil || !strings.Contains(err.Error(), "--layers 0") || !asUsage(err, &ue) {
		t.Fatalf("err = %v, want a usage error naming --layers 0", err)
	}
}

// On a terminal dummy draws a per-tensor bar on stderr.
func TestDummyProgressOnTerminal(t *testing.T) {
	var errb bytes.Buffer
	opts := &DummyOptions{Preset: "bitnet_b1_58-large", Layers: 1, Out: filepath.Join(t.TempDir(), "d"), Seed: 1, MaxShardSize: "5GB",
		Stdout: &bytes.Buffer{}, Stderr: &errb, StderrIsTerminal: true}
	if err := dummyRun(opts); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errb.String(), "(1/13)") || !strings.Contains(errb.String(), "model.embed_tokens.weight") {
		t.Errorf("no bar: %q", errb.String())
	}
}

// TestConfigFIFO: --config naming a FIFO nobody writes to is refused at once
// (the hostile-input campaign, internal/badinput/campaign.sh, saw it block
// until timeout).
func TestConfigFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "config.json")
	if err := osx.Mkfifo(fifo); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		done <- dummyRun(&DummyOptions{ConfigFile: fifo, Out: filepath.Join(dir, "out"), MaxShardSize: "5GB",
			Stdout: &bytes.Buffer{}, Context: context.Background()})
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "named pipe") || !strings.Contains(err.Error(), fifo) {
			t.Errorf("dummy --config FIFO: %v, want an error naming %s as a named pipe", err, fifo)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("dummy --config FIFO blocked reading the pipe")
	}
}

// A tokenizer .json file that is not one JSON object is refused naming it,
// before anything is written (dummy used to copy it verbatim, exit 0; the
// later hf2gguf failed on it).
func TestTokenizerJSONRefused(t *testing.T) {
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(`{"model": {"vocab": `))
	zw.Close()
	cases := []struct {
		file, body, want string
	}{
		{"tokenizer.json", "", "the file is empty"},
		{"tokenizer.json", "\x9f\x00garbage", "not valid JSON"},
		{"tokenizer.json", `{"model": {"vocab": {"a": 0}`, "not valid JSON: unexpected EOF"},
		{"tokenizer.json", `[1, 2]`, "not a JSON object"},
		{"tokenizer.json", `{} {}`, "data after the JSON object"},
		{"tokenizer.json.gz", gz.String(), "not valid JSON"},
		{"tokenizer_config.json", `{"bos_token": `, "not valid JSON"},
	}
	for _, tc := range cases {
		t.Run(tc.file+"/"+tc.want, func(t *testing.T) {
			dir := t.TempDir()
			tok := filepath.Join(dir, "tok")
			os.Mkdir(tok, 0o755)
			if tc.file == "tokenizer_config.json" {
				os.WriteFile(filepath.Join(tok, "tokenizer.json"), []byte(`{"model": {}}`), 0o644)
			}
			bad := filepath.Join(tok, tc.file)
			os.WriteFile(bad, []byte(tc.body), 0o644)
			out := filepath.Join(dir, "out")
			err := dummyRun(&DummyOptions{ConfigFile: "../../../../testdata/golden/tiny-bitnet/hf/config.json", Tokenizer: tok,
				Out: out, MaxShardSize: "5GB", Stdout: &bytes.Buffer{}, Context: context.Background()})
			if err == nil {
				t.Fatalf("dummy --tokenizer with %s %q succeeded", tc.file, tc.body)
			}
			if msg := err.Error(); !strings.Contains(msg, bad) || !strings.Contains(msg, tc.want) || strings.Contains(msg, "\n") {
				t.Errorf("error %q: want one line naming %s and %q", msg, bad, tc.want)
			}
			var ue *usage.Error
			if asUsage(err, &ue) {
				t.Errorf("%v is a usage error; data errors exit 1", err)
			}
			if ents, _ := os.ReadDir(out); len(ents) != 0 {
				t.Errorf("left %d files in the output directory", len(ents))
			}
		})
	}
	// The repository's real tokenizer directories still copy.
	for _, d := range []string{"llama3", "qwen3", "gemma3", "llama2"} {
		err := dummyRun(&DummyOptions{ConfigFile: "../../../../testdata/golden/tiny-bitnet/hf/config.json", Tokenizer: "../../../../testdata/tokenizers/" + d,
			Out: filepath.Join(t.TempDir(), "out"), MaxShardSize: "5GB", Stdout: &bytes.Buffer{}, Context: context.Background()})
		if err != nil {
			t.Errorf("%s: %v", d, err)
		}
	}
}

// TestRunGroupScaled: --group-scaled on a Llama config writes F16
// projections without quantization_config and suggests hf2gguf with
// --outtype q2_0; on an architecture without a dense path (bitnet) it says
// the checkpoint is not convertible.
func TestRunGroupScaled(t *testing.T) {
	cfg := map[string]any{
		"architectures": []any{"LlamaForCausalLM"}, "model_type": "llama", "hidden_act": "silu",
		"hidden_size": 128, "intermediate_size": 256, "num_hidden_layers": 1, "num_attention_heads": 2,
		"num_key_value_heads": 1, "vocab_size": 64, "max_position_embeddings": 256,
		"quantization_config": map[string]any{"quant_method": "bitnet"},
	}
	b, _ := json.Marshal(cfg)
	cfgPath := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(cfgPath, b, 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "m")
	var out bytes.Buffer
	if err := dummyRun(&DummyOptions{ConfigFile: cfgPath, Out: dir, GroupScaled: true, Seed: 1, MaxShardSize: "5GB", Stdout: &out, Context: context.Background()}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "F16 group-scaled ternary (one scale per 128 inputs)") || !strings.Contains(out.String(), "hf2gguf "+dir+" --no-vocab --outtype q2_0`") {
		t.Errorf("summary %q", out.String())
	}
	ck, err := hf.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ck.Close()
	if ck.Config.Has("quantization_config") {
		t.Error("quantization_config kept")
	}
	if ref, _ := ck.Lookup("model.layers.0.self_attn.q_proj.weight"); ref.DType != hf.F16 {
		t.Errorf("q_proj %+v", ref)
	}
	out.Reset()
	cfg["architectures"] = []any{"BitnetForCausalLM"}
	b, _ = json.Marshal(cfg)
	if err := os.WriteFile(cfgPath, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := dummyRun(&DummyOptions{ConfigFile: cfgPath, Out: filepath.Join(t.TempDir(), "b"), GroupScaled: true, Seed: 1, MaxShardSize: "5GB", Stdout: &out, Context: context.Background()}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "not convertible yet: ") || strings.Contains(out.String(), "hf2gguf ") {
		t.Errorf("bitnet --group-scaled: %q", out.String())
	}
}
