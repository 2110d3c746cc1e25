package verify

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

const golden = "../../../../testdata/golden/tiny-bitnet"

func TestNewCmdParses(t *testing.T) {
	var got *Options
	cmd := NewCmd(func(o *Options) error { got = o; return nil })
	cmd.SetArgs([]string{"--gguf", "m.gguf", "--hf", "dir", "--ids", "1, 2,3", "--tokens", "4", "--json", "--max-kl", "0.5"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.GGUF != "m.gguf" || got.HF != "dir" || got.IDs != "1, 2,3" || got.Tokens != 4 || !got.JSON || got.MaxKL == nil || *got.MaxKL != 0.5 || got.MinTop1 != nil {
		t.Errorf("%+v", got)
	}
	for _, args := range [][]string{{}, {"--gguf", "m", "--prompt", "x", "--ids", "1"}, {"--gguf", "m", "--ids", "1,x"}, {"--gguf", "m", "--tokens", "-1"}} {
		cmd := NewCmd(func(*Options) error { t.Fatalf("%v: ran", args); return nil })
		cmd.SetArgs(args)
		cmd.SetOut(&bytes.Buffer{})
		cmd.SetErr(&bytes.Buffer{})
		if cmd.Execute() == nil {
			t.Errorf("%v: accepted", args)
		}
	}
}

func TestRunJSONAndFailure(t *testing.T) {
	var out bytes.Buffer
	err := Run(&Options{GGUF: golden + "/gguf/ggml-model-f32.gguf", HF: golden + "/hf", JSON: true, Tokens: 2, Out: &out})
	if err != nil {
		t.Fatal(err)
	}
	var rep map[string]any
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if rep["pass"] != true || rep["numbers"] == nil || rep["bound"] == nil {
		t.Errorf("report %v", rep)
	}
	// -v prints the bound the error model derived, and why (issue 20).
	out.Reset()
	if err := Run(&Options{GGUF: golden + "/gguf/ggml-model-i2_s.gguf", HF: golden + "/hf", Verbose: true, Out: &out}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"bound (error model, families I2_S/TL):", "I2_S/TL projections: int8 activations, one absmax scale per row", "max |Δlogit| ≤ z·K·r·σ = "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("-v output lacks %q:\n%s", want, out.String())
		}
	}
	// An impossible threshold fails with exit-1 semantics, naming the metric.
	out.Reset()
	err = Run(&Options{GGUF: golden + "/gguf/ggml-model-f32.gguf", HF: golden + "/hf", Tokens: 2, MaxDelta: new(float64), Out: &out})
	if err == nil || !strings.Contains(err.Error(), "max |Δlogit|") || !strings.Contains(out.String(), "FAIL") {
		t.Errorf("err %v, output %s", err, out.String())
	}
}

// On a terminal verify names each stage on stderr with its duration.
func TestVerifyStagesOnTerminal(t *testing.T) {
	var errb bytes.Buffer
	opts := &Options{GGUF: "../../../../testdata/golden/tiny-bitnet/gguf/ggml-model-i2_s.gguf", HF: "../../../../testdata/golden/tiny-bitnet/hf", Tokens: 2,
		Out: &bytes.Buffer{}, Err: &errb, ErrIsTerminal: true}
	if err := Run(opts); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"verify: load the model …", "verify: check the structure against the checkpoint …", "verify: run the prompt …", "verify: build the float reference …", "s\n"} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, errb.String())
		}
	}
}
