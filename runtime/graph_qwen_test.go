package runtime

import (
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
	"github.com/bitnet-convert/bitnet-convert/internal/testutil"
)

// near reports whether got equals want within tol (absolute).
func near(got, want []float32, tol float64) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if math.Abs(float64(got[i]-want[i])) > tol {
			return false
		}
	}
	return true
}

// TestGraphExtraPieces checks the three new graph pieces on hand-computed
// values: the bias add, the per-head q/k RMS norm and the per-projection
// input norm before a product.
func TestGraphExtraPieces(t *testing.T) {
	m := &Model{Params: Params{NEmbd: 4, NHead: 2, HeadDim: 2, NFF: 4}}
	s := &Session{m: m}

	x := []float32{1, 2, 3}
	addBias(x, []float32{0.5, -1, 0})
	if want := []float32{1.5, 1, 3}; !near(x, want, 0) {
		t.Errorf("addBias: %v, want %v", x, want)
	}
	addBias(x, nil)
	if want := []float32{1.5, 1, 3}; !near(x, want, 0) {
		t.Errorf("addBias(nil) changed x: %v", x)
	}

	// Two heads of 2, weight [1, 2], eps 0: head [3, 4] has rms √12.5,
	// so [3, 4]/3.5355339·[1, 2] = [0.8485281, 2.2627417]; head [1, 1]
	// has rms 1: [1, 2].
	h := []float32{3, 4, 1, 1}
	headNorms(s, h, []float32{1, 2}, 2, 0)
	if want := []float32{0.8485281, 2.2627417, 1, 2}; !near(h, want, 1e-6) {
		t.Errorf("headNorms: %v, want %v", h, want)
	}

	// W = [[1 0 0 0] [0 1 1 0]] (ne [4, 2]), input norm [1 2 1 1], eps
	// 0: x = [1 2 3 4] has rms √7.5 = 2.7386128, normed and weighted
	// [0.3651484 1.4605935 1.0954451 1.4605935]; W·that = [0.3651484,
	// 2.5560386]. Without the norm: [1, 5].
	w := make([]byte, 32)
	for _, i := range []int{0, 5, 6} {
		binary.LittleEndian.PutUint32(w[4*i:], math.Float32bits(1))
	}
	mat, err := NewMatrix(gguf.TypeF32, 4, 2, w)
	if err != nil {
		t.Fatal(err)
	}
	l := &layer{projections: projections{wq: mat}}
	in := [][]float32{{1, 2, 3, 4}}
	dst := [][]float32{make([]float32, 2)}
	s.project(l, projQ, dst, in)
	if want := []float32{1, 5}; !near(dst[0], want, 0) {
		t.Errorf("project without a norm: %v, want %v", dst[0], want)
	}
	l.normIn[projQ] = []float32{1, 2, 1, 1}
	s.project(l, projQ, dst, in)
	if want := []float32{0.3651484, 2.5560386}; !near(dst[0], want, 1e-6) {
		t.Errorf("project with attn_q_norm_in: %v, want %v", dst[0], want)
	}
	if want := []float32{1, 2, 3, 4}; !near(in[0], want, 0) {
		t.Errorf("project changed its input: %v", in[0])
	}
	// The eps enters as in ggml's rms_norm: 1/sqrt(mean + eps).
	m.Params.NormInRMSEps = 2.5 // mean 7.5 + 2.5 = 10
	s.project(l, projQ, dst, in)
	if want := []float32{float32(1 / math.Sqrt(10)), float32(7 / math.Sqrt(10))}; !near(dst[0], want, 1e-6) {
		t.Errorf("project with eps 2.5: %v, want %v", dst[0], want)
	}
}

// qwenSpec is a small qwen3 shape whose head dimension is not
// hidden/heads (Qwen3's key_length rule), in TQ2_0 (a mainline type).
func qwenSpec(arch string) testutil.CausalSpec {
	return testutil.CausalSpec{Arch: arch, Hidden: 256, Heads: 4, HeadsKV: 2, HeadDim: 128, FF: 512, Vocab: 64, Layers: 2,
		Eps: 1e-6, Theta: 1e6, Type: gguf.TypeTQ2_0, Seed: 7}
}

// openFile opens path as a runtime File (closed with the test).
func openFile(t *testing.T, path string) File {
	t.Helper()
	f, err := reader.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return File{KVs: f.KVs, Tensors: f.Tensors, Data: f.TensorData}
}

// without returns f with the tensors named drop removed.
func without(f File, drop ...string) File {
	var ts []gguf.TensorInfo
	for _, ti := range f.Tensors {
		keep := true
		for _, d := range drop {
			keep = keep && ti.Name != d
		}
		if keep {
			ts = append(ts, ti)
		}
	}
	f.Tensors = ts
	return f
}

// TestLoadQwenGraphs loads each new graph, checks the arithmetic default
// and the eps of the input norms, and the refusals of a tensor set that
// does not fit the graph.
func TestLoadQwenGraphs(t *testing.T) {
	dir := t.TempDir()
	q2 := qwenSpec("qwen2")
	q2.HeadDim, q2.Biases = 64, true
	q3 := qwenSpec("qwen3")
	q3.QKNorm, q3.Untied = true, true
	ll := qwenSpec("llama")
	ll.HeadDim, ll.Type, ll.NormInEps, ll.Untied = 64, gguf.TypeI2S, 1e-8, true
	ll.NormIn = []string{"attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down"}
	q2n := q2
	q2n.NormIn = []string{"attn_q"}
	q3sub := q3
	q3sub.NormIn, q3sub.Untied = []string{"attn_output", "ffn_down"}, false
	files := map[string]string{
		"qwen2":     testutil.CausalGGUF(t, dir, "qwen2.gguf", q2),
		"qwen3":     testutil.CausalGGUF(t, dir, "qwen3.gguf", q3),
		"llama":     testutil.CausalGGUF(t, dir, "llama.gguf", ll),
		"qwen3-sub": testutil.CausalGGUF(t, dir, "qwen3sub.gguf", q3sub),
	}
	for _, c := range []struct {
		file  string
		arith Arith
		eps   float32
		in    []int // projections with an input norm in layer 1
	}{
		{"qwen2", ArithMainline, 1e-6, nil},
		{"qwen3", ArithMainline, 1e-6, nil},
		{"llama", ArithBitnetCpp, 1e-8, []int{projQ, projK, projV, projO, projGate, projUp, projDown}},
		{"qwen3-sub", ArithMainline, 1e-6, []int{projO, projDown}},
	} {
		f := openFile(t, files[c.file])
		if IsEmbeddingFile(f.KVs, f.Tensors) {
			t.Errorf("%s: IsEmbeddingFile = true for a causal file", c.file)
		}
		m, err := Load(f, Options{})
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		if m.Arith() != c.arith || m.Params.NormInRMSEps != c.eps {
			t.Errorf("%s: arith %s, norm_in eps %g; want %s, %g", c.file, m.Arith(), m.Params.NormInRMSEps, c.arith, c.eps)
		}
		var in []int
		for p, v := range m.layers[1].normIn {
			if v != nil {
				in = append(in, p)
			}
		}
		if len(in) != len(c.in) {
			t.Errorf("%s: input norms on projections %v, want %v", c.file, in, c.in)
		}
		l := m.layers[1]
		if (l.bq != nil) != (c.file == "qwen2") || (l.qNorm != nil) != strings.HasPrefix(c.file, "qwen3") {
			t.Errorf("%s: biases %v, q norm %v", c.file, l.bq != nil, l.qNorm != nil)
		}
		if err := CheckFile(f, Options{}); err != nil {
			t.Errorf("%s: CheckFile: %v", c.file, err)
		}
	}

	q2f, llf, q3f := openFile(t, files["qwen2"]), openFile(t, files["llama"]), openFile(t, files["qwen3"])
	q2nf := openFile(t, testutil.CausalGGUF(t, dir, "qwen2n.gguf", q2n))
	// BitNet Distillation on Qwen2: biases and per-projection norms together.
	if _, err := Load(q2nf, Options{}); err != nil {
		t.Errorf("qwen2 with norm_in: %v", err)
	}
	// A non-positive model eps is refused naming its own key, on every
	// graph (qwen2 ran with it and blamed the weights for NaN logits).
	for _, name := range []string{"qwen2", "llama", "qwen3"} {
		bad := testutil.WithKVs(t, files[name], "", testutil.SetKV(name+".attention.layer_norm_rms_epsilon", gguf.Float32(-1)))
		if _, err := Load(openFile(t, bad), Options{}); err == nil || !strings.Contains(err.Error(), "key "+name+".attention.layer_norm_rms_epsilon: value -1 must be positive") {
			t.Errorf("%s with eps -1: %v", name, err)
		}
	}
	relabel := func(f File, arch string) File {
		kvs := []gguf.KV{}
		old, _ := gguf.Lookup(f.KVs, "general.architecture")
		for _, kv := range f.KVs {
			if kv.Key == "general.architecture" {
				kv.Value = gguf.String(arch)
			} else if k, ok := strings.CutPrefix(kv.Key, old.V.(string)+"."); ok {
				kv.Key = arch + "." + k
			}
			kvs = append(kvs, kv)
		}
		f.KVs = kvs
		return f
	}
	for _, c := range []struct {
		name string
		f    File
		want string
		is   error
	}{
		{"qwen2 without a bias", without(q2f, "blk.1.attn_v.bias"), "tensor blk.1.attn_v.bias: missing", ErrMissing},
		{"biases on llama", relabel(q2f, "llama"), "tensor blk.0.attn_q.bias: the runtime's llama graph has no such bias", nil},
		{"layer 1 lacks one", without(llf, "blk.1.ffn_up_norm_in.weight"), "tensor blk.1.ffn_up_norm_in.weight: missing (layer 0 has it", ErrMissing},
		{"layer 0 lacks one", without(llf, "blk.0.ffn_up_norm_in.weight"), "tensor blk.1.ffn_up_norm_in.weight: layer 0 has no ffn_up_norm_in", nil},
		{"qwen3 without a k norm", without(q3f, "blk.0.attn_k_norm.weight"), "tensor blk.0.attn_k_norm.weight: missing", ErrMissing},
	} {
		_, err := Load(c.f, Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) || (c.is != nil && !errors.Is(err, c.is)) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
		if cerr := CheckFile(c.f, Options{}); err != nil && (cerr == nil || cerr.Error() != err.Error()) {
			t.Errorf("%s: CheckFile says %v, Load %v", c.name, cerr, err)
		}
	}
}

// TestIsEmbeddingFile: arch qwen3 is an embedding model with pooling_type,
// or with all input norms, no output head and no norm_in eps key; a causal
// LM otherwise. Load refuses an embedding file.
func TestIsEmbeddingFile(t *testing.T) {
	dir := t.TempDir()
	emb := qwenSpec("qwen3")
	emb.QKNorm = true
	emb.NormIn = []string{"attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down"}
	f := openFile(t, testutil.CausalGGUF(t, dir, "emb.gguf", emb))
	withKV := func(f File, kv gguf.KV) File {
		kvs := []gguf.KV{}
		for _, x := range f.KVs {
			if x.Key != kv.Key {
				kvs = append(kvs, x)
			}
		}
		f.KVs = append(kvs, kv)
		return f
	}
	gemma := withKV(f, gguf.KV{Key: "general.architecture", Value: gguf.String("gemma3")})
	untied := emb
	untied.Untied = true
	fu := openFile(t, testutil.CausalGGUF(t, dir, "untied.gguf", untied))
	for _, c := range []struct {
		name string
		f    File
		want bool
	}{
		{"all norms, tied, no keys", f, true},
		{"pooling_type", withKV(f, gguf.KV{Key: "qwen3.pooling_type", Value: gguf.Uint32(3)}), true},
		{"norm_in eps key", withKV(f, gguf.KV{Key: "qwen3.attention.norm_in_rms_epsilon", Value: gguf.Float32(1e-8)}), false},
		{"output head", fu, false},
		{"no attn_q_norm_in", without(f, "blk.0.attn_q_norm_in.weight"), false},
		{"gemma3", gemma, true},
		{"llama", withKV(f, gguf.KV{Key: "general.architecture", Value: gguf.String("llama")}), false},
	} {
		if got := IsEmbeddingFile(c.f.KVs, c.f.Tensors); got != c.want {
			t.Errorf("%s: IsEmbeddingFile = %v, want %v", c.name, got, c.want)
		}
	}
	if _, err := Load(f, Options{}); err == nil || !errors.Is(err, ErrUnsupportedArch) || !strings.Contains(err.Error(), "sentence-embedding model") {
		t.Errorf("Load of an embedding file: %v", err)
	}
	if _, err := Load(withKV(f, gguf.KV{Key: "qwen3.attention.norm_in_rms_epsilon", Value: gguf.Float32(1e-8)}), Options{}); err != nil {
		t.Errorf("Load of the same tensors as a causal qwen3: %v", err)
	}
}

// FuzzLoadQwen: Load never panics on a qwen2, qwen3 or llama file whose
// biases, q/k norms and input norms have fuzzed shapes, are missing in one
// layer or appear where the graph has none, and a model it accepts
// evaluates tokens.
func FuzzLoadQwen(f *testing.F) {
	f.Add(uint8(0), uint8(2), uint8(16), uint8(2), uint8(1), uint8(8), uint8(255), uint8(255), uint8(0x7f))
	f.Add(uint8(1), uint8(2), uint8(16), uint8(2), uint8(2), uint8(16), uint8(255), uint8(255), uint8(0x03))
	f.Add(uint8(2), uint8(1), uint8(8), uint8(2), uint8(1), uint8(8), uint8(3), uint8(7), uint8(0x42))
	f.Add(uint8(1), uint8(1), uint8(8), uint8(4), uint8(1), uint8(0), uint8(255), uint8(1), uint8(0))
	f.Fuzz(func(t *testing.T, variant, nLayer, nEmbd, nHead, nHeadKV, headDim, bad, drop, normIn uint8) {
		arch := [...]string{"qwen2", "qwen3", "llama"}[variant%3]
		L, E, H, HKV, HD := int(nLayer%3), int(nEmbd%40), int(nHead%5), int(nHeadKV%5), int(headDim%20)
		kvs := []gguf.KV{
			{Key: "general.architecture", Value: gguf.String(arch)},
			{Key: arch + ".block_count", Value: gguf.Uint32(uint32(L))},
			{Key: arch + ".embedding_length", Value: gguf.Uint32(uint32(E))},
			{Key: arch + ".attention.head_count", Value: gguf.Uint32(uint32(H))},
			{Key: arch + ".attention.head_count_kv", Value: gguf.Uint32(uint32(HKV))},
			{Key: arch + ".attention.key_length", Value: gguf.Uint32(uint32(HD))},
			{Key: arch + ".attention.value_length", Value: gguf.Uint32(uint32(HD))},
			{Key: arch + ".rope.dimension_count", Value: gguf.Uint32(uint32(HD))},
			{Key: arch + ".feed_forward_length", Value: gguf.Uint32(uint32(2 * E))},
			{Key: arch + ".attention.layer_norm_rms_epsilon", Value: gguf.Float32(1e-6)},
			{Key: arch + ".attention.norm_in_rms_epsilon", Value: gguf.Float32(float32(variant) * 1e-9)},
			{Key: arch + ".context_length", Value: gguf.Uint32(8)},
		}
		q, kv, ff := H*HD, HKV*HD, 2*E
		var ts []gguf.TensorInfo
		add := func(name string, ne ...uint64) {
			ts = append(ts, gguf.TensorInfo{Name: name, Type: gguf.TypeF32, Ne: ne})
		}
		add("token_embd.weight", uint64(E), 11)
		add("output_norm.weight", uint64(E))
		for i := 0; i < L; i++ {
			b := "blk." + string(rune('0'+i)) + "."
			add(b+"attn_norm.weight", uint64(E))
			add(b+"ffn_norm.weight", uint64(E))
			add(b+"attn_q.weight", uint64(E), uint64(q))
			add(b+"attn_k.weight", uint64(E), uint64(kv))
			add(b+"attn_v.weight", uint64(E), uint64(kv))
			add(b+"attn_output.weight", uint64(q), uint64(E))
			add(b+"ffn_gate.weight", uint64(E), uint64(ff))
			add(b+"ffn_up.weight", uint64(E), uint64(ff))
			add(b+"ffn_down.weight", uint64(ff), uint64(E))
			if variant%2 == 0 {
				add(b+"attn_q.bias", uint64(q))
				add(b+"attn_k.bias", uint64(kv))
				add(b+"attn_v.bias", uint64(kv))
			}
			if variant%3 == 1 || variant&8 != 0 {
				add(b+"attn_q_norm.weight", uint64(HD))
				add(b+"attn_k_norm.weight", uint64(HD))
			}
			for p, row := range normInNames {
				if normIn&(1<<p) != 0 {
					n := map[vecDim]int{vHidden: E, vQ: q, vFF: ff}[row.dim]
					add(b+row.name+".weight", uint64(n))
				}
			}
		}
		if i := int(bad) % (len(ts) + 1); i < len(ts) {
			ts[i].Ne[0]++
		}
		if i := int(drop) % (len(ts) + 1); i < len(ts) {
			ts = append(ts[:i], ts[i+1:]...)
		}
		infos := map[string]gguf.TensorInfo{}
		for _, ti := range ts {
			infos[ti.Name] = ti
		}
		file := File{KVs: kvs, Tensors: ts, Data: func(name string) ([]byte, error) {
			n, err := infos[name].NBytes()
			if err != nil {
				return nil, err
			}
			b := make([]byte, n)
			for i := 3; i < len(b); i += 4 {
				b[i] = 0x3c
			}
			return b, nil
		}}
		m, err := Load(file, Options{Threads: 2})
		if cerr := CheckFile(file, Options{}); (cerr == nil) != (err == nil) {
			t.Fatalf("CheckFile %v, Load %v", cerr, err)
		}
		if err != nil {
			return
		}
		s := m.NewSession(4)
		for i := int32(0); i < 5; i++ {
			if logits, err := s.Eval(i % 12); err == nil && len(logits) != m.Params.NVocab {
				t.Fatalf("%d logits, NVocab %d", len(logits), m.Params.NVocab)
			}
		}
	})
}
