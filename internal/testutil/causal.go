package testutil

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/format"
	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/gguf/writer"
)

// CausalSpec describes a small causal-LM GGUF built from seeded values
// (CausalGGUF): the graph variants the runtime and verify's float
// reference run (arch llama, qwen2, qwen3; biases, per-head q/k norms,
// per-projection input norms, tied or untied head).
type CausalSpec struct {
	Arch string // general.architecture: "llama", "qwen2", "qwen3", …
	// Sizes: hidden size, heads, KV heads, head dimension (written as
	// attention.key_length / value_length), FFN width, vocabulary, layers.
	Hidden, Heads, HeadsKV, HeadDim, FF, Vocab, Layers int
	Eps                                                float32 // attention.layer_norm_rms_epsilon
	NormInEps                                          float32 // attention.norm_in_rms_epsilon (0: not written)
	Theta                                              float32 // rope.freq_base (0: 10000)
	Untied                                             bool    // write output.weight (else the head is token_embd)
	Biases                                             bool    // blk.N.attn_{q,k,v}.bias (F32)
	QKNorm                                             bool    // blk.N.attn_q_norm / attn_k_norm ([HeadDim], F32)
	// NormIn are the per-projection input norms written in every layer,
	// by stem: "attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate",
	// "ffn_up", "ffn_down" (tensor blk.N.<stem>_norm_in.weight, F32).
	NormIn []string
	// Type is the projections' type: F32 (codes × scale as floats) or a
	// ternary type format.ForType encodes (I2_S, TQ2_0, …).
	Type gguf.Type
	Seed uint64
}

// splitmix is splitmix64, the value stream of CausalGGUF.
func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// CausalGGUF writes the GGUF s describes to dir/name and returns its path.
// Values are deterministic in s.Seed and the tensor name: projections are
// ternary codes (about a third each of −1, 0, +1) times 1/√in, norms and
// q/k norms 1 ± 0.5, input norms 1 ± 0.5, biases ±0.5, the embedding and
// head ±0.5.
func CausalGGUF(t testing.TB, dir, name string, s CausalSpec) string {
	t.Helper()
	a := s.Arch
	kvs := []gguf.KV{
		{Key: "general.architecture", Value: gguf.String(a)},
		{Key: a + ".block_count", Value: gguf.Uint32(uint32(s.Layers))},
		{Key: a + ".context_length", Value: gguf.Uint32(256)},
		{Key: a + ".embedding_length", Value: gguf.Uint32(uint32(s.Hidden))},
		{Key: a + ".feed_forward_length", Value: gguf.Uint32(uint32(s.FF))},
		{Key: a + ".attention.head_count", Value: gguf.Uint32(uint32(s.Heads))},
		{Key: a + ".attention.head_count_kv", Value: gguf.Uint32(uint32(s.HeadsKV))},
		{Key: a + ".attention.key_length", Value: gguf.Uint32(uint32(s.HeadDim))},
		{Key: a + ".attention.value_length", Value: gguf.Uint32(uint32(s.HeadDim))},
		{Key: a + ".rope.dimension_count", Value: gguf.Uint32(uint32(s.HeadDim))},
		{Key: a + ".attention.layer_norm_rms_epsilon", Value: gguf.Float32(s.Eps)},
		{Key: a + ".vocab_size", Value: gguf.Uint32(uint32(s.Vocab))},
	}
	if s.Theta > 0 {
		kvs = append(kvs, gguf.KV{Key: a + ".rope.freq_base", Value: gguf.Float32(s.Theta)})
	}
	if s.NormInEps > 0 {
		kvs = append(kvs, gguf.KV{Key: a + ".attention.norm_in_rms_epsilon", Value: gguf.Float32(s.NormInEps)})
	}
	type tensor struct {
		name string
		ne   []uint64
		typ  gguf.Type
		data []byte
	}
	var ts []tensor
	unit := func(name string, i int) float64 {
		h := s.Seed
		for _, c := range []byte(name) {
			h = splitmix(h ^ uint64(c))
		}
		return float64(splitmix(h^uint64(i))>>11)/(1<<52) - 1
	}
	f32 := func(name string, n int, base, amp float64) {
		b := make([]byte, 4*n)
		for i := 0; i < n; i++ {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(float32(base+amp*unit(name, i))))
		}
		ts = append(ts, tensor{name, []uint64{uint64(n)}, gguf.TypeF32, b})
	}
	matF32 := func(name string, k, m int, amp float64) {
		f32(name, k*m, 0, amp)
		ts[len(ts)-1].ne = []uint64{uint64(k), uint64(m)}
	}
	proj := func(name string, k, m int) {
		codes := make([]int8, k*m)
		for i := range codes {
			codes[i] = int8(math.Floor((unit(name, i)+1)*1.5)) - 1 // [−1, 1) → {−1, 0, 1}
		}
		scale := float32(1 / math.Sqrt(float64(k)))
		if s.Type == gguf.TypeF32 {
			b := make([]byte, 4*k*m)
			for i, c := range codes {
				binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(float32(c)*scale))
			}
			ts = append(ts, tensor{name, []uint64{uint64(k), uint64(m)}, gguf.TypeF32, b})
			return
		}
		f, ok := format.ForType(s.Type, format.LayoutX86, nil)
		if !ok {
			t.Fatalf("CausalGGUF: no format for type %s", s.Type)
		}
		n, err := f.Bytes(k, m)
		if err != nil {
			t.Fatalf("CausalGGUF: %s: %v", name, err)
		}
		scales := make([]float32, format.NumScales(f, k, m))
		for i := range scales {
			scales[i] = scale
		}
		b := make([]byte, n)
		if err := f.Encode(b, codes, scales, k, m); err != nil {
			t.Fatalf("CausalGGUF: %s: %v", name, err)
		}
		ts = append(ts, tensor{name, []uint64{uint64(k), uint64(m)}, s.Type, b})
	}
	qDim, kvDim := s.Heads*s.HeadDim, s.HeadsKV*s.HeadDim
	matF32("token_embd.weight", s.Hidden, s.Vocab, 0.5)
	f32("output_norm.weight", s.Hidden, 1, 0.5)
	if s.Untied {
		matF32("output.weight", s.Hidden, s.Vocab, 0.5)
	}
	inDim := map[string]int{"attn_q": s.Hidden, "attn_k": s.Hidden, "attn_v": s.Hidden, "attn_output": qDim, "ffn_gate": s.Hidden, "ffn_up": s.Hidden, "ffn_down": s.FF}
	for l := 0; l < s.Layers; l++ {
		b := fmt.Sprintf("blk.%d.", l)
		f32(b+"attn_norm.weight", s.Hidden, 1, 0.5)
		f32(b+"ffn_norm.weight", s.Hidden, 1, 0.5)
		proj(b+"attn_q.weight", s.Hidden, qDim)
		proj(b+"attn_k.weight", s.Hidden, kvDim)
		proj(b+"attn_v.weight", s.Hidden, kvDim)
		proj(b+"attn_output.weight", qDim, s.Hidden)
		proj(b+"ffn_gate.weight", s.Hidden, s.FF)
		proj(b+"ffn_up.weight", s.Hidden, s.FF)
		proj(b+"ffn_down.weight", s.FF, s.Hidden)
		if s.Biases {
			f32(b+"attn_q.bias", qDim, 0, 0.5)
			f32(b+"attn_k.bias", kvDim, 0, 0.5)
			f32(b+"attn_v.bias", kvDim, 0, 0.5)
		}
		if s.QKNorm {
			f32(b+"attn_q_norm.weight", s.HeadDim, 1, 0.5)
			f32(b+"attn_k_norm.weight", s.HeadDim, 1, 0.5)
		}
		for _, stem := range s.NormIn {
			n, ok := inDim[stem]
			if !ok {
				t.Fatalf("CausalGGUF: unknown projection %q", stem)
			}
			f32(b+stem+"_norm_in.weight", n, 1, 0.5)
		}
	}
	infos := make([]gguf.TensorInfo, len(ts))
	for i, x := range ts {
		infos[i] = gguf.TensorInfo{Name: x.name, Type: x.typ, Ne: x.ne}
	}
	path := filepath.Join(dir, name)
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	w, err := writer.New(out, kvs, infos, 0)
	if err != nil {
		t.Fatalf("CausalGGUF: %v", err)
	}
	for i, x := range ts {
		if err := w.WriteTensor(i, x.data); err != nil {
			t.Fatalf("CausalGGUF: %s: %v", x.name, err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatalf("CausalGGUF: %v", err)
	}
	return path
}
