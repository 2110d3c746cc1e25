package inspect

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// run executes the inspect command line args on the tiny I2_S golden file.
func runArgs(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := NewCmdInspect(nil)
	var out bytes.Buffer
	cmd.SetArgs(append([]string{filepath.Join(goldenDir, "ggml-model-i2_s.gguf")}, args...))
	cmd.SetOut(&out)
	cmd.SetErr(&bytes.Buffer{})
	err := cmd.Execute()
	return out.String(), err
}

// --key prints single values whole (arrays one item per line), --json
// --key an object, --full / --json-array whole arrays; a missing key fails.
func TestKeysAndWholeArrays(t *testing.T) {
	out, err := runArgs(t, "--key", "general.architecture,bitnet.block_count")
	if err != nil || out != "bitnet\n2\n" {
		t.Fatalf("--key scalars: %q %v", out, err)
	}
	out, err = runArgs(t, "--key", "tokenizer.ggml.tokens")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if err != nil || len(lines) != 512 || lines[0] != "<unk>" || lines[1] != "<s>" || lines[2] != "</s>" {
		t.Fatalf("--key tokens: %d lines, first %q, %v", len(lines), lines[:min(3, len(lines))], err)
	}
	out, err = runArgs(t, "--key", "tokenizer.ggml.bos_token_id", "--key", "tokenizer.ggml.tokens", "--json")
	var obj map[string]any
	if err != nil || json.Unmarshal([]byte(out), &obj) != nil {
		t.Fatalf("--key --json: %q %v", out, err)
	}
	if obj["tokenizer.ggml.bos_token_id"] != float64(1) || len(obj["tokenizer.ggml.tokens"].([]any)) != 512 {
		t.Errorf("--key --json: %v", obj["tokenizer.ggml.bos_token_id"])
	}
	if _, err := runArgs(t, "--key", "no.such.key"); err == nil || !strings.Contains(err.Error(), `"no.such.key"`) {
		t.Errorf("missing key: %v", err)
	}
	out, err = runArgs(t, "--json-array")
	var rep report
	if err != nil || json.Unmarshal([]byte(out), &rep) != nil {
		t.Fatalf("--json-array: %v", err)
	}
	for _, k := range rep.KVs {
		if k.Key == "tokenizer.ggml.tokens" && (len(k.Items) != 512 || *k.Count != 512 || len(k.First) != 0) {
			t.Errorf("--json-array tokens: %d items", len(k.Items))
		}
	}
	last := strconv.Quote(lines[511])
	out, err = runArgs(t, "--full")
	if err != nil || !strings.Contains(out, last+"\n") {
		t.Errorf("--full does not reach the last token %s: %v", last, err)
	}
	if out, _ = runArgs(t); strings.Contains(out, last+"\n") {
		t.Errorf("the default view printed all 512 tokens")
	}
}

// A long string (a chat template) is cut in the default text view and whole
// with --full or --key.
func TestLongStringWhole(t *testing.T) {
	long := strings.Repeat("{% x %}", 60)
	r := &report{Path: "p", KVs: []kvReport{{Key: "tokenizer.chat_template", Type: "string", Value: long}}}
	var cut, whole bytes.Buffer
	writeText(&cut, r, false)
	writeText(&whole, r, true)
	if strings.Contains(cut.String(), long) || !strings.Contains(cut.String(), "(420 bytes)") || !strings.Contains(whole.String(), long) {
		t.Errorf("cut:\n%s\nwhole:\n%s", cut.String(), whole.String())
	}
}
