package runtime

import (
	"fmt"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/gguf"
)

// fuzzFile builds an in-memory bitnet GGUF (F32 weights, zero data) from
// small hyper-parameters; bad selects one tensor whose shape is perturbed and
// short truncates one tensor's data.
func fuzzFile(nLayer, nEmbd, nHead, nHeadKV, nFF, nVocab, bad, short uint8) File {
	L, E, H, HKV, F, V := int(nLayer%3), int(nEmbd%80), int(nHead%9), int(nHeadKV%9), int(nFF%80), int(nVocab%70)
	kvs := []gguf.KV{
		{Key: "general.architecture", Value: gguf.String("bitnet")},
		{Key: "bitnet.block_count", Value: gguf.Uint32(uint32(L))},
		{Key: "bitnet.embedding_length", Value: gguf.Uint32(uint32(E))},
		{Key: "bitnet.attention.head_count", Value: gguf.Uint32(uint32(H))},
		{Key: "bitnet.attention.head_count_kv", Value: gguf.Uint32(uint32(HKV))},
		{Key: "bitnet.feed_forward_length", Value: gguf.Uint32(uint32(F))},
		{Key: "bitnet.attention.layer_norm_rms_epsilon", Value: gguf.Float32(1e-5)},
		{Key: "bitnet.context_length", Value: gguf.Uint32(8)},
	}
	hd := 0
	if H > 0 {
		hd = E / H
	}
	q, kv := H*hd, HKV*hd
	var ts []gguf.TensorInfo
	add := func(name string, ne ...uint64) {
		ts = append(ts, gguf.TensorInfo{Name: name, Type: gguf.TypeF32, Ne: ne})
	}
	add("token_embd.weight", uint64(E), uint64(V))
	add("output_norm.weight", uint64(E))
	for i := 0; i < L; i++ {
		b := fmt.Sprintf("blk.%d.", i)
		add(b+"attn_norm.weight", uint64(E))
		add(b+"attn_q.weight", uint64(E), uint64(q))
		add(b+"attn_k.weight", uint64(E), uint64(kv))
		add(b+"attn_v.weight", uint64(E), uint64(kv))
		add(b+"attn_output.weight", uint64(q), uint64(E))
		add(b+"attn_sub_norm.weight", uint64(q))
		add(b+"ffn_norm.weight", uint64(E))
		add(b+"ffn_gate.weight", uint64(E), uint64(F))
		add(b+"ffn_up.weight", uint64(E), uint64(F))
		add(b+"ffn_down.weight", uint64(F), uint64(E))
		add(b+"ffn_sub_norm.weight", uint64(F))
	}
	if i := int(bad) % (len(ts) + 1); i < len(ts) {
		ts[i].Ne[0]++
	}
	shortName := ""
	if i := int(short) % (len(ts) + 1); i < len(ts) {
		shortName = ts[i].Name
	}
	infos := map[string]gguf.TensorInfo{}
	for _, ti := range ts {
		infos[ti.Name] = ti
	}
	return File{KVs: kvs, Tensors: ts, Data: func(name string) ([]byte, error) {
		n, err := infos[name].NBytes()
		if err != nil {
			return nil, err
		}
		b := make([]byte, n)
		for i := 3; i < len(b); i += 4 {
			b[i] = 0x3c // float32 ≈ 0.0078: small non-zero weights
		}
		if name == shortName && n > 0 {
			b = b[:n-1]
		}
		return b, nil
	}}
}

// FuzzLoad: Load never panics on inconsistent hyper-parameters, shapes or
// short data, and a model it accepts evaluates tokens without panicking.
func FuzzLoad(f *testing.F) {
	f.Add(uint8(1), uint8(16), uint8(2), uint8(1), uint8(32), uint8(20), uint8(255), uint8(255))
	f.Add(uint8(2), uint8(64), uint8(4), uint8(2), uint8(48), uint8(40), uint8(3), uint8(255))
	f.Add(uint8(1), uint8(12), uint8(5), uint8(1), uint8(8), uint8(9), uint8(255), uint8(4))
	f.Add(uint8(0), uint8(0), uint8(0), uint8(0), uint8(0), uint8(0), uint8(0), uint8(0))
	f.Fuzz(func(t *testing.T, nLayer, nEmbd, nHead, nHeadKV, nFF, nVocab, bad, short uint8) {
		m, err := Load(fuzzFile(nLayer, nEmbd, nHead, nHeadKV, nFF, nVocab, bad, short), Options{Threads: 2})
		if err != nil {
			return
		}
		s := m.NewSession(4)
		for i := int32(0); i < 5; i++ {
			logits, err := s.Eval(i % int32(m.Params.NVocab+1))
			if err != nil {
				continue
			}
			if len(logits) != m.Params.NVocab {
				t.Fatalf("%d logits, NVocab %d", len(logits), m.Params.NVocab)
			}
		}
	})
}
