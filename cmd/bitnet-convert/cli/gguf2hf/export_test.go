package gguf2hf_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/gguf2hf"
	"github.com/bitnet-convert/bitnet-convert/dummy"
	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
	"github.com/bitnet-convert/bitnet-convert/hf"
	"github.com/bitnet-convert/bitnet-convert/quantize"
)

// readAll returns every tensor of an HF checkpoint directory (one file or
// shards with an index) as name → (dtype, shape, bytes).
func readAll(t *testing.T, dir string) map[string]hf.TensorRef {
	t.Helper()
	ck, err := hf.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ck.Close()
	out := map[string]hf.TensorRef{}
	for _, r := range ck.Tensors {
		out[r.Name] = r
	}
	return out
}

func tensorBytes(t *testing.T, dir, name string) []byte {
	t.Helper()
	ck, err := hf.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ck.Close()
	ref, ok := ck.Lookup(name)
	if !ok {
		t.Fatalf("%s: no tensor %s", dir, name)
	}
	d, err := ck.Read(ref)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Clone(d.Raw)
}

// TestPackedBytesBack: a packed checkpoint (U8 codes + bf16 weight_scale,
// autobitlinear) converted to I2_S and exported again gives the source's
// U8 bytes and bf16 scales exactly: pack_weights' layout, and the llama
// arch's q/k rows un-permuted (hf2gguf permutes them for llama's rope;
// BitNet archs are not permuted). The small --max-shard-size splits the
// export into shards with an index, which hf2gguf reads.
func TestPackedBytesBack(t *testing.T) {
	llamaCfg := map[string]any{
		"architectures": []any{"LlamaForCausalLM"}, "model_type": "llama", "hidden_size": 256, "intermediate_size": 512,
		"num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 512, "rms_norm_eps": 1e-5,
		"rope_theta": 500000.0, "hidden_act": "silu", "tie_word_embeddings": false, "max_position_embeddings": 2048,
	}
	b, err := os.ReadFile(cfg2B4T)
	if err != nil {
		t.Fatal(err)
	}
	var bitnetCfg map[string]any
	if err := json.Unmarshal(b, &bitnetCfg); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		cfg    map[string]any
		vocab  int
		shards string
	}{{"llama", llamaCfg, 0, "100000"}, {"bitnet-2b4t", bitnetCfg, 512, "5MB"}} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			src, gg, exp := filepath.Join(dir, "src"), filepath.Join(dir, "m.gguf"), filepath.Join(dir, "exp")
			res, err := dummy.Generate(context.Background(), src, dummy.Options{Config: c.cfg, Layers: 2, VocabSize: c.vocab, Packed: true, LinearClass: dummy.AutoBitLinear, Seed: 3})
			if err != nil {
				t.Fatal(err)
			}
			mustRun(t, "hf2gguf", src, "--outfile", gg, "--no-vocab")
			mustRun(t, "gguf2hf", gg, "--out", exp, "--max-shard-size", c.shards)
			if _, err := os.Stat(filepath.Join(exp, "model.safetensors.index.json")); err != nil {
				t.Fatalf("no index for a sharded export: %v", err)
			}
			got := readAll(t, exp)
			for _, w := range res.Tensors {
				g, ok := got[w.Name]
				if !ok {
					t.Fatalf("tensor %s missing from the export", w.Name)
				}
				if g.DType != w.DType {
					t.Fatalf("tensor %s: %s, source %s", w.Name, g.DType, w.DType)
				}
				if w.Role != dummy.Projection && w.Role != dummy.WeightScale {
					continue
				}
				if !bytes.Equal(tensorBytes(t, exp, w.Name), tensorBytes(t, src, w.Name)) {
					t.Fatalf("tensor %s: bytes differ from the packed source", w.Name)
				}
			}
			// and the sharded export converts back to the same GGUF tensors
			back := filepath.Join(dir, "back.gguf")
			mustRun(t, "hf2gguf", exp, "--outfile", back, "--no-vocab")
			sameTensors(t, gg, back, "bf16")
		})
	}
}

// TestRefusals: one line naming the tensor for a file whose blocks carry
// different scales; blocks whose codes are all 0 (scale 0) are ignored; an
// existing output directory is kept without --force; a failed export leaves
// nothing behind.
func TestRefusals(t *testing.T) {
	dir := t.TempDir()
	tq := filepath.Join(dir, "tq.gguf")
	mustRun(t, "hf2gguf", tinyHF, "--outtype", "tq2_0", "--outfile", tq)
	f, err := reader.Open(tq)
	if err != nil {
		t.Fatal(err)
	}
	ti, _ := f.Tensor("blk.0.attn_q.weight")
	off := int64(f.DataOffset + ti.Offset)
	f.Close()
	orig, err := os.ReadFile(tq)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, edit func(b []byte)) string {
		b := bytes.Clone(orig)
		edit(b)
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// block 1's d (offset 64 of its 66 bytes) doubled
	twoScales := write("two.gguf", func(b []byte) {
		o := off + 66 + 64
		d := quantize.F16ToF32(binary.LittleEndian.Uint16(b[o:]))
		binary.LittleEndian.PutUint16(b[o:], quantize.F32ToF16(2*d))
	})
	out := filepath.Join(dir, "out")
	code, _, errs := runMain("gguf2hf", twoScales, "--out", out)
	if code != 1 || !strings.Contains(errs, "tensor blk.0.attn_q.weight") || !strings.Contains(errs, "block 1") || strings.Count(errs, "\n") != 1 {
		t.Fatalf("two scales: exit %d, %q; want exit 1 and one line naming blk.0.attn_q.weight block 1", code, errs)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("a failed export left %s", out)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Fatalf("a failed export left files behind: %v", ents)
	}
	// block 1 all zero: scale 0 and codes 1 (ternary 0): ignored
	zero := write("zero.gguf", func(b []byte) {
		o := off + 66
		for i := int64(0); i < 64; i++ {
			b[o+i] = 0x55
		}
		binary.LittleEndian.PutUint16(b[o+64:], 0)
	})
	mustRun(t, "gguf2hf", zero, "--out", out)
	code, _, errs = runMain("gguf2hf", zero, "--out", out)
	if code != 1 || !strings.Contains(errs, "exists; pass --force") {
		t.Fatalf("existing output: exit %d, %q", code, errs)
	}
	mustRun(t, "gguf2hf", tq, "--out", out, "--force")
	code, _, errs = runMain("gguf2hf", tq)
	if code != 2 || !strings.Contains(errs, "--out") {
		t.Fatalf("no --out: exit %d, %q", code, errs)
	}
	code, _, errs = runMain("gguf2hf", tq, "--out", out, "--dtype", "f16")
	if code != 2 || !strings.Contains(errs, "--dtype") {
		t.Fatalf("--dtype f16: exit %d, %q", code, errs)
	}
}

// TestParseSize reads sizes as transformers' convert_file_size_to_int.
func TestParseSize(t *testing.T) {
	for in, want := range map[string]uint64{"5GB": 5e9, "2GiB": 2 << 30, "500MB": 5e8, "1KiB": 1024, "12345": 12345, "8Gb": 1e9} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "-1GB", "5XB", "GB"} {
		if _, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q): no error", in)
		}
	}
}

// TestEveryType: bitnet.cpp's own golden files (I2_S, TL1 and TL2 with their
// kernel_config.ini, F32) and requants of its I2_S file into every type and
// layout requant writes export with --dtype f32 to a checkpoint against
// which the file itself passes verify --hf: the same codes, the file's
// scales exactly, and the logits within the limits.
func TestEveryType(t *testing.T) {
	const golden = "../../../../testdata/golden/tiny-bitnet/gguf/"
	dir := t.TempDir()
	type input struct {
		name, file string
		flags      []string
	}
	inputs := []input{
		{"bitnet.cpp i2_s", golden + "ggml-model-i2_s.gguf", nil},
		{"bitnet.cpp tl1", golden + "ggml-model-tl1.gguf", []string{"--kernel-config", golden + "kernel_config_tl1.ini"}},
		{"bitnet.cpp tl2", golden + "ggml-model-tl2.gguf", []string{"--kernel-config", golden + "kernel_config_tl2.ini"}},
		{"bitnet.cpp f32", golden + "ggml-model-f32.gguf", nil},
	}
	for _, rq := range []struct {
		name  string
		flags []string
	}{
		{"i2_s-arm", []string{"--outtype", "i2_s", "--i2s-layout", "arm"}},
		{"i2_s-x86-1x4", []string{"--outtype", "i2_s", "--i2s-layout", "x86-1x4"}},
		{"tq1_0", []string{"--outtype", "tq1_0"}},
		{"tq2_0", []string{"--outtype", "tq2_0"}},
		{"iq1_bn", []string{"--outtype", "iq1_bn", "--allow-fallback"}},
		{"iq2_bn", []string{"--outtype", "iq2_bn", "--allow-fallback"}},
		{"f16", []string{"--outtype", "f16"}},
		{"bf16", []string{"--outtype", "bf16"}},
		{"tl2", []string{"--outtype", "tl2"}},
	} {
		out := filepath.Join(dir, rq.name+".gguf")
		mustRun(t, append([]string{"requant", golden + "ggml-model-i2_s.gguf", "--outfile", out}, rq.flags...)...)
		inputs = append(inputs, input{"requant " + rq.name, out, nil})
	}
	for i, in := range inputs {
		t.Run(in.name, func(t *testing.T) {
			exp := filepath.Join(dir, "exp"+strings.Repeat("x", i))
			mustRun(t, append([]string{"gguf2hf", in.file, "--out", exp, "--dtype", "f32"}, in.flags...)...)
			args := append([]string{"verify", "--gguf", in.file, "--hf", exp}, in.flags...)
			if out := mustRun(t, args...); !strings.HasSuffix(out, "PASS\n") {
				t.Fatalf("verify: %s", out)
			}
		})
	}
}

// TestInterrupted: a cancelled export (Ctrl-C, SIGTERM) says so in one line
// and leaves neither the output nor its temporary directory.
func TestInterrupted(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errb bytes.Buffer
	err := Run(&Options{In: "../../../../testdata/golden/tiny-bitnet/gguf/ggml-model-i2_s.gguf", Out: filepath.Join(dir, "out"), DType: "bf16", Stdout: &out, Stderr: &errb, Context: ctx})
	if err == nil || !strings.Contains(err.Error(), "interrupted") {
		t.Fatalf("cancelled export: %v", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("a cancelled export left %v", ents)
	}
}
