package hf2gguf

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/usage"
	"github.com/bitnet-convert/bitnet-convert/dummy"
)

// TestTernarizeFlag: --ternarize parses, reaches the converter, and is what
// lets a LlamaForCausalLM without quantization_config (bf16 masters, as
// BitNet Distillation saves them) convert; without it the run fails with
// one line naming the flag.
func TestTernarizeFlag(t *testing.T) {
	var got *Options
	cmd := NewCmd(func(o *Options) error { got = o; return nil })
	cmd.SetArgs([]string{"d", "--ternarize"})
	cmd.SetOut(&bytes.Buffer{})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if !got.Ternarize {
		t.Fatal("--ternarize not set")
	}
	cfg := map[string]any{
		"architectures": []any{"LlamaForCausalLM"}, "model_type": "llama", "hidden_size": 128, "intermediate_size": 256,
		"num_hidden_layers": 1, "num_attention_heads": 2, "num_key_value_heads": 1, "vocab_size": 64,
		"rms_norm_eps": 1e-5, "max_position_embeddings": 256, "tie_word_embeddings": false,
	}
	dir := filepath.Join(t.TempDir(), "m")
	if _, err := dummy.Generate(context.Background(), dir, dummy.Options{Config: cfg, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "m.gguf")
	_, _, err := run(t, Options{Dir: dir, OutFile: out, NoVocab: true, I2SLayout: "x86"})
	if err == nil || !strings.Contains(err.Error(), "pass --ternarize") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("without --ternarize: %v", err)
	}
	stdout, stderr, err := run(t, Options{Dir: dir, OutFile: out, NoVocab: true, I2SLayout: "x86", Ternarize: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout, "I2_S 7") || !strings.Contains(stderr, "--ternarize") {
		t.Errorf("stdout %q stderr %q", stdout, stderr)
	}
}

// TestPreFalconEUsage: --pre falcon_e with a mainline outtype is a usage
// error (exit 2) naming falcon3; with i2_s it reaches Run.
func TestPreFalconEUsage(t *testing.T) {
	for _, tc := range []struct {
		outtype string
		ok      bool
	}{{"tq2_0", false}, {"q2_0", false}, {"tq1_0", false}, {"i2_s", true}, {"iq2_bn", true}, {"f16", true}} {
		ran := false
		cmd := NewCmd(func(*Options) error { ran = true; return nil })
		cmd.SetArgs([]string{"dir", "--outtype", tc.outtype, "--pre", "falcon_e"})
		cmd.SetOut(&bytes.Buffer{})
		cmd.SetErr(&bytes.Buffer{})
		err := cmd.Execute()
		if ran != tc.ok || (err == nil) != tc.ok {
			t.Errorf("%s: ran %v err %v", tc.outtype, ran, err)
		}
		var ue *usage.Error
		if err != nil && (!strings.Contains(err.Error(), "--pre falcon3") || !errors.As(err, &ue)) {
			t.Errorf("%s: %v, want a usage error (exit 2) naming falcon3", tc.outtype, err)
		}
	}
}
