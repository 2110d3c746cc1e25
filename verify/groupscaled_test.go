package verify

import (
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/convert"
	"github.com/bitnet-convert/bitnet-convert/dummy"
	"github.com/bitnet-convert/bitnet-convert/internal/testutil"
	"github.com/bitnet-convert/bitnet-convert/quantize"
)

// TestVerifyGroupScaled: a group-scaled dense Llama checkpoint (dummy
// --group-scaled, one scale per 128 inputs) converted to Q2_0 and to F32
// passes verify --hf: the structure check compares every code and every
// group scale (convert.Source.TernaryGroupsView), the float reference uses
// the checkpoint's values. A Q2_0 file with one block's d changed by one
// f16 ulp fails, naming that scale.
func TestVerifyGroupScaled(t *testing.T) {
	cfg := map[string]any{
		"architectures": []any{"LlamaForCausalLM"}, "model_type": "llama", "hidden_act": "silu",
		"hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 2, "num_attention_heads": 4,
		"num_key_value_heads": 2, "vocab_size": 512, "rms_norm_eps": 1e-5, "max_position_embeddings": 512,
		"tie_word_embeddings": false,
	}
	dir := filepath.Join(t.TempDir(), "hf")
	if _, err := dummy.Generate(context.Background(), dir, dummy.Options{Config: cfg, GroupScaled: true, Tokenizer: "../testdata/golden/tiny-bitnet/hf", Seed: 3}); err != nil {
		t.Fatal(err)
	}
	files := map[convert.OutType]string{}
	for _, ot := range []convert.OutType{"q2_0", convert.OutF32} {
		out := filepath.Join(t.TempDir(), string(ot)+".gguf")
		if _, err := convert.ConvertDir(context.Background(), dir, out, false, false, convert.Options{OutType: ot}); err != nil {
			t.Fatal(err)
		}
		files[ot] = out
		rep, err := Run(Options{GGUF: out, HF: dir})
		if err != nil {
			t.Fatal(err)
		}
		if !rep.Pass || rep.Numbers == nil {
			t.Errorf("%s: pass %v failures %v", ot, rep.Pass, rep.Failures)
		}
		for _, tc := range rep.Tensors {
			if !tc.OK {
				t.Errorf("%s: tensor %s: %s", ot, tc.Name, tc.Detail)
			}
		}
	}
	bad := filepath.Join(t.TempDir(), "bad.gguf")
	raw := testutil.RewriteGGUF(t, files["q2_0"], nil, func(name string, d []byte) []byte {
		if name == "blk.1.ffn_up.weight" {
			const block = 5 // 18-byte blocks: an f16 d first
			h := binary.LittleEndian.Uint16(d[block*18:])
			if quantize.F16ToF32(h) == 0 {
				t.Fatal("fixture block has d = 0")
			}
			binary.LittleEndian.PutUint16(d[block*18:], h+1)
		}
		return d
	})
	if err := os.WriteFile(bad, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := Run(Options{GGUF: bad, HF: dir})
	if rep == nil {
		t.Fatalf("no report: %v", err)
	}
	if err == nil && rep.Pass {
		t.Fatal("a changed group scale passed")
	}
	found := false
	for _, tc := range rep.Tensors {
		if !tc.OK {
			found = found || (tc.Name == "blk.1.ffn_up.weight" && strings.Contains(tc.Detail, "scale 5 of "))
			if tc.Name != "blk.1.ffn_up.weight" {
				t.Errorf("tensor %s reported: %s", tc.Name, tc.Detail)
			}
		}
	}
	if !found {
		t.Errorf("no failure naming scale 5 of blk.1.ffn_up.weight: %+v", rep.Tensors)
	}
}

// TestVerifyGroupScaledTernarize: hf2gguf --ternarize re-ternarizes a
// group-scaled checkpoint for a type that cannot hold its group scales (one
// abs-mean scale per tensor for I2_S, per 256 weights for TQ2_0); verify
// --ternarize reads the checkpoint the same way and passes, while Q2_0 (which
// keeps the scales) stays exact under --ternarize. Without --ternarize the
// lossy file fails with a line that says to pass it.
func TestVerifyGroupScaledTernarize(t *testing.T) {
	cfg := map[string]any{
		"architectures": []any{"LlamaForCausalLM"}, "model_type": "llama", "hidden_act": "silu",
		"hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 2, "num_attention_heads": 4,
		"num_key_value_heads": 2, "vocab_size": 512, "rms_norm_eps": 1e-5, "max_position_embeddings": 512,
		"tie_word_embeddings": true,
	}
	dir := filepath.Join(t.TempDir(), "hf")
	if _, err := dummy.Generate(context.Background(), dir, dummy.Options{Config: cfg, GroupScaled: true, Tokenizer: "../testdata/golden/tiny-bitnet/hf", Seed: 4}); err != nil {
		t.Fatal(err)
	}
	for _, ot := range []convert.OutType{convert.OutI2S, convert.OutTQ2_0, "q2_0"} {
		out := filepath.Join(t.TempDir(), string(ot)+".gguf")
		if _, err := convert.ConvertDir(context.Background(), dir, out, false, false, convert.Options{OutType: ot, Ternarize: true}); err != nil {
			t.Fatal(err)
		}
		rep, err := Run(Options{GGUF: out, HF: dir, Ternarize: true})
		if err != nil || !rep.Pass {
			t.Errorf("%s --ternarize: err %v, failures %v", ot, err, rep.Failures)
			continue
		}
		for _, tc := range rep.Tensors {
			if !tc.OK {
				t.Errorf("%s: tensor %s: %s", ot, tc.Name, tc.Detail)
			}
		}
		if ot == "q2_0" {
			continue
		}
		rep, err = Run(Options{GGUF: out, HF: dir})
		if err == nil && rep.Pass {
			t.Errorf("%s without --ternarize passed a lossy file", ot)
			continue
		}
		hint := false
		for _, tc := range rep.Tensors {
			hint = hint || (!tc.OK && strings.Contains(tc.Detail, "if hf2gguf --ternarize wrote this file, pass --ternarize"))
		}
		if !hint {
			t.Errorf("%s without --ternarize: no tensor line suggests --ternarize: %v", ot, err)
		}
	}
}
