package convert

import (
	"encoding/binary"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/hf"
	"github.com/bitnet-convert/bitnet-convert/internal/testutil"
)

// copyGolden copies the golden tiny checkpoint into a temp dir the test may
// edit.
func copyGolden(t *testing.T) string {
	t.Helper()
	dst := t.TempDir()
	ents, err := os.ReadDir(goldenHF)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(goldenHF, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// goldenTensors reads every tensor of the golden checkpoint as raw bytes, in
// checkpoint order.
func goldenTensors(t *testing.T) (*hf.Checkpoint, []hf.TensorRef, map[string][]byte) {
	t.Helper()
	ck, err := hf.Open(goldenHF)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ck.Close() })
	raw := map[string][]byte{}
	for _, ref := range ck.Tensors {
		d, err := ck.Read(ref)
		if err != nil {
			t.Fatal(err)
		}
		raw[ref.Name] = append([]byte(nil), d.Raw...)
	}
	return ck, ck.Tensors, raw
}

func f32Bytes(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return b
}

// randomBF16 is a seeded N(0, 0.02²) bf16 tensor.
func randomBF16(name string, seed uint64, shape ...uint64) hf.WriteTensor {
	n := uint64(1)
	for _, d := range shape {
		n *= d
	}
	return hf.WriteTensor{Name: name, DType: hf.BF16, Shape: shape, Data: func(w io.Writer) error {
		r := rand.New(rand.NewPCG(seed, n))
		buf := make([]float32, 4096)
		for done := uint64(0); done < n; {
			k := min(uint64(len(buf)), n-done)
			for i := range buf[:k] {
				buf[i] = float32(r.NormFloat64() * 0.02)
			}
			if _, err := w.Write(testutil.BF16Bytes(buf[:k])); err != nil {
				return err
			}
			done += k
		}
		return nil
	}}
}

func onesBF16(name string, n uint64) hf.WriteTensor {
	v := make([]float32, n)
	for i := range v {
		v[i] = 1
	}
	return hf.WriteTensor{Name: name, DType: hf.BF16, Shape: []uint64{n}, Data: hf.RawData(testutil.BF16Bytes(v))}
}

// llamaLayout is a BitNet checkpoint shape for synthetic fixtures.
type llamaLayout struct {
	hidden, ff, heads, kv, headDim, vocab, layers int
	subNorms                                      [2]string // attention, ffn sub-norm names
	act                                           string
}

// bitnetFixture writes config.json and model.safetensors of a seeded random
// BitNet master-weight checkpoint with layout l into dir (no tokenizer).
func bitnetFixture(t *testing.T, dir string, l llamaLayout, cfgEdit func(map[string]any)) {
	t.Helper()
	if l.subNorms[0] == "" {
		l.subNorms = [2]string{"self_attn.inner_attn_ln", "mlp.ffn_layernorm"}
	}
	if l.act == "" {
		l.act = "silu"
	}
	if l.headDim == 0 {
		l.headDim = l.hidden / l.heads
	}
	cfg := map[string]any{
		"architectures": []any{"BitnetForCausalLM"}, "hidden_size": l.hidden, "intermediate_size": l.ff,
		"num_hidden_layers": l.layers, "num_attention_heads": l.heads, "num_key_value_heads": l.kv,
		"vocab_size": l.vocab, "max_position_embeddings": 2048, "rms_norm_eps": 1e-5, "rope_theta": 10000.0,
		"hidden_act": l.act, "tie_word_embeddings": true,
	}
	if l.headDim != l.hidden/l.heads {
		cfg["head_dim"] = l.headDim
	}
	if cfgEdit != nil {
		cfgEdit(cfg)
	}
	testutil.WriteJSON(t, filepath.Join(dir, "config.json"), cfg)
	h, ff, q, kvd := uint64(l.hidden), uint64(l.ff), uint64(l.heads*l.headDim), uint64(l.kv*l.headDim)
	ts := []hf.WriteTensor{randomBF16("model.embed_tokens.weight", 1, uint64(l.vocab), h), onesBF16("model.norm.weight", h)}
	for b := 0; b < l.layers; b++ {
		p := "model.layers." + strconv.Itoa(b) + "."
		s := uint64(100 * (b + 1))
		ts = append(ts,
			onesBF16(p+"input_layernorm.weight", h),
			onesBF16(p+"post_attention_layernorm.weight", h),
			onesBF16(p+l.subNorms[0]+".weight", q),
			onesBF16(p+l.subNorms[1]+".weight", ff),
			randomBF16(p+"self_attn.q_proj.weight", s+1, q, h),
			randomBF16(p+"self_attn.k_proj.weight", s+2, kvd, h),
			randomBF16(p+"self_attn.v_proj.weight", s+3, kvd, h),
			randomBF16(p+"self_attn.o_proj.weight", s+4, h, q),
			randomBF16(p+"mlp.gate_proj.weight", s+5, ff, h),
			randomBF16(p+"mlp.up_proj.weight", s+6, ff, h),
			randomBF16(p+"mlp.down_proj.weight", s+7, h, ff),
		)
	}
	if err := hf.WriteSafetensors(filepath.Join(dir, "model.safetensors"), ts, map[string]string{"format": "pt"}); err != nil {
		t.Fatal(err)
	}
}
