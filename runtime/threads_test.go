package runtime

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/gguf"
)

// TestThreadsIdentical: the logits of the hello prompt and 4 greedy tokens
// are bit-identical for 1, 2, 3 and 4 threads, with the prompt fed token by
// token and as one batch (EvalBatch), for every golden file.
func TestThreadsIdentical(t *testing.T) {
	prompt, _ := goldenIDs(t, filepath.Join(tinyDir, "outputs/i2s_hello_seq_t1.txt"))
	for _, file := range []string{
		filepath.Join(tinyDir, "gguf/ggml-model-i2_s.gguf"),
		filepath.Join(tinyDir, "gguf/ggml-model-f32.gguf"),
		filepath.Join(tinyDir, "gguf/ggml-model-i2_s-q8embd.gguf"),
		filepath.Join(b158Dir, "gguf/tiny-b158-h512-f32.gguf"),
		// IQ2_BN: forward1's fused Q/K/V and gate/up against forward's
		// per-matrix products (runBatched).
		filepath.Join(ecoDir, "tiny-b158-h512-iq2_bn.gguf"),
	} {
		var ref [][]float32
		for _, th := range []int{1, 2, 3, 4, -1, -2, -3, -4} {
			run := runSeq
			if th < 0 {
				th, run = -th, runBatched
			}
			m := openModel(t, file, th)
			p, g, _ := run(t, m, prompt[:12], 4)
			rows := append(p, g...)
			if ref == nil {
				ref = rows
				continue
			}
			for r := range rows {
				for i := range rows[r] {
					if math.Float32bits(rows[r][i]) != math.Float32bits(ref[r][i]) {
						t.Fatalf("%s: %d threads row %d id %d: %v, 1 thread %v", filepath.Base(file), th, r, i, rows[r][i], ref[r][i])
					}
				}
			}
		}
	}
}

// randomI2S returns the packed data (codes, scale, 28 zero bytes) of an M×K
// I2_S tensor with seeded random ternary codes, and the same weights as F32
// values t·scale (row-major [M][K]).
func randomI2S(k, m int, scale float32, seed uint64) ([]byte, []float32) {
	r := rand.New(rand.NewPCG(seed, 1))
	n := k * m
	data := make([]byte, n/4+32)
	w := make([]float32, n)
	for e := 0; e < n; e++ {
		c := r.IntN(3)
		w[e] = float32(c-1) * scale
		g, j := e/128, e%128
		data[g*32+j%32] |= byte(c) << (6 - 2*uint(j/32))
	}
	b := math.Float32bits(scale)
	data[n/4], data[n/4+1], data[n/4+2], data[n/4+3] = byte(b), byte(b>>8), byte(b>>16), byte(b>>24)
	return data, w
}

// TestBR09BatchSizes: an I2_S tensor ne [128, 512] with scale 0.037 gives,
// for batch sizes 1, 2, 7 and 32, exactly the batch-1 result on every row,
// reads its scale from byte n/4, and stays within the int8-activation error
// bound of the f32 reference (BR-09).
func TestBR09BatchSizes(t *testing.T) {
	const k, m = 128, 512
	const scale = 0.037
	data, wf := randomI2S(k, m, scale, 9)
	w, err := NewMatrix(gguf.TypeI2S, k, m, data)
	if err != nil {
		t.Fatal(err)
	}
	if w.Scale != scale {
		t.Fatalf("scale read %v, want %v (byte n/4)", w.Scale, scale)
	}
	r := rand.New(rand.NewPCG(7, 7))
	xs := make([][]float32, 32)
	for i := range xs {
		xs[i] = make([]float32, k)
		for j := range xs[i] {
			xs[i][j] = float32(r.NormFloat64()) * float32(1+i%5)
		}
	}
	single := make([][]float32, len(xs))
	for i, x := range xs {
		single[i] = make([]float32, m)
		w.MatVec(single[i], x, nil, 1)
	}
	for _, bs := range []int{1, 2, 7, 32} {
		for _, th := range []int{1, 4} {
			for lo := 0; lo < len(xs); lo += bs {
				hi := min(lo+bs, len(xs))
				dst := make([][]float32, hi-lo)
				for i := range dst {
					dst[i] = make([]float32, m)
				}
				w.MatMul(dst, xs[lo:hi], th)
				for i := range dst {
					for row := range dst[i] {
						if dst[i][row] != single[lo+i][row] {
							t.Fatalf("batch %d threads %d token %d row %d: %v, batch-1 %v", bs, th, lo+i, row, dst[i][row], single[lo+i][row])
						}
					}
				}
			}
		}
	}
	// Against the f32 reference: each activation is off by at most half a
	// quantization step (amax/254), so |Δy| ≤ scale·K·amax/254 per row.
	for i, x := range xs {
		var amax float64
		for _, v := range x {
			amax = math.Max(amax, math.Abs(float64(v)))
		}
		bound := scale*k*amax/254 + 1e-5
		var worst float64
		for row := 0; row < m; row++ {
			var ref float64
			for j := 0; j < k; j++ {
				ref += float64(wf[row*k+j]) * float64(x[j])
			}
			worst = math.Max(worst, math.Abs(ref-float64(single[i][row])))
		}
		if worst > bound {
			t.Errorf("token %d: max |Δ| vs f32 %.4g > bound %.4g", i, worst, bound)
		}
	}
}

// TestI2SWorkedExample is conversion spec §4.4 padded to K = 128 (the extra
// weights are 0, the extra activations 0): sumi − Σq = −31, y = −0.0158661.
func TestI2SWorkedExample(t *testing.T) {
	const k = 128
	codes := make([]byte, k)
	for i := range codes {
		codes[i] = 1
	}
	copy(codes, []byte{2, 0, 1, 0})
	data := make([]byte, k/4+32)
	for j := 0; j < 32; j++ {
		data[j] = codes[j]<<6 | codes[j+32]<<4 | codes[j+64]<<2 | codes[j+96]
	}
	scale := float32(0.0325)
	b := math.Float32bits(scale)
	data[32], data[33], data[34], data[35] = byte(b), byte(b>>8), byte(b>>16), byte(b>>24)
	w, err := NewMatrix(gguf.TypeI2S, k, 1, data)
	if err != nil {
		t.Fatal(err)
	}
	x := make([]float32, k)
	copy(x, []float32{1.0, -0.5, 0.25, 2.0})
	q := make([]int8, k)
	s, sum := QuantizeI8S(q, x)
	if s != 63.5 || sum != 175 || q[0] != 64 || q[1] != -32 || q[2] != 16 || q[3] != 127 {
		t.Fatalf("QuantizeI8S: scale %v sum %d q %v, want 63.5 175 [64 -32 16 127]", s, sum, q[:4])
	}
	y := make([]float32, 1)
	w.MatVec(y, x, nil, 1)
	want := float32(float32(-31)/63.5) * scale
	if y[0] != want || math.Abs(float64(y[0])+0.0158661) > 1e-7 {
		t.Fatalf("y = %v, want %v (≈ −0.0158661)", y[0], want)
	}
}

func TestQuantizeI8SClampAndTies(t *testing.T) {
	// amax 127 gives scale 1: x·1 rounds half to even.
	x := []float32{127, 0.5, 1.5, 2.5, -0.5, -1.5, -127}
	q := make([]int8, len(x))
	s, sum := QuantizeI8S(q, x)
	want := []int8{127, 0, 2, 2, 0, -2, -127}
	if s != 1 {
		t.Fatalf("scale %v, want 1", s)
	}
	var ws int32
	for i := range want {
		ws += int32(want[i])
		if q[i] != want[i] {
			t.Errorf("q[%d] = %d, want %d", i, q[i], want[i])
		}
	}
	if sum != ws {
		t.Errorf("sum %d, want %d", sum, ws)
	}
	// All zero: amax floors at 1e-5, every q is 0.
	z := make([]float32, 8)
	qz := make([]int8, 8)
	s, sum = QuantizeI8S(qz, z)
	if s != float32(127/1e-5) || sum != 0 {
		t.Errorf("zero row: scale %v sum %d", s, sum)
	}
}

func TestQuantizeQ8_0(t *testing.T) {
	x := make([]float32, 64)
	for i := range x {
		x[i] = float32(i-16) / 8
	}
	q := make([]int8, 64)
	d := make([]float32, 2)
	QuantizeQ8_0(q, d, x)
	// block 0: amax 2 (x[0] = −2), d = f16(2/127), id = 63.5.
	if d[0] != roundF16(2.0/127) {
		t.Errorf("d[0] = %v, want %v", d[0], roundF16(2.0/127))
	}
	if q[0] != -127 || q[16] != 0 || q[17] != 8 { // 0.125·63.5 = 7.9375 → 8
		t.Errorf("q = %v", q[:20])
	}
	for i := range x {
		if got := d[i/32] * float32(q[i]); math.Abs(float64(got-x[i])) > float64(d[i/32]) {
			t.Errorf("x[%d] = %v reconstructs as %v", i, x[i], got)
		}
	}
}

// TestI2SInt16Wrap: bitnet.cpp's AVX2 kernel sums code·q pairs in int16
// lanes over groups of 32 blocks before widening; with K = 4096, every code
// +1 (2) and every activation 127, each lane reaches 65024 and wraps to
// −512, so the kernel's Σ code·q is 16 × −512 = −8192 instead of 1040384.
// dotI2S reproduces that (and the exact value again once K is below the
// wrap, as in TestI2SWorkedExample).
func TestI2SInt16Wrap(t *testing.T) {
	const k = 4096
	row := make([]byte, k/4)
	for i := range row {
		row[i] = 0xAA // four codes 2
	}
	q := make([]int8, k)
	for i := range q {
		q[i] = 127
	}
	if got := dotI2S(row, q); got != -8192 {
		t.Fatalf("dotI2S = %d, want -8192 (int16 lane wrap)", got)
	}
	// One group short of the wrap: 31 blocks → lanes 63008 → wraps too;
	// 16 blocks → 32512 per lane, no wrap: exact 16·32512.
	if got := dotI2S(row[:16*32], q[:16*128]); got != 16*32512 {
		t.Fatalf("16 blocks: %d, want %d", got, 16*32512)
	}
}

// TestResetClearsV: attendHead reads a head's V columns in place up to the
// next multiple of 32 cells when the cells past the token are +0
// (Session.vDirty); Reset must make them so. Every V cell an earlier run
// wrote is set to +Inf (an F16 overflow), then after Reset the same tokens,
// one at a time and as one batch, give a fresh session's logits bit for
// bit: a cell left stale would turn them into NaN. (The batch's earlier
// tokens see its later tokens' cells, finite values that +0 probabilities
// cancel either way: the guard that sends them to the gather is
// TestAttendHeadMasksDirtyCells's.)
func TestResetClearsV(t *testing.T) {
	prompt, _ := goldenIDs(t, filepath.Join(tinyDir, "outputs/i2s_hello_seq_t1.txt"))
	prompt = prompt[:12]
	for _, th := range []int{1, 2} {
		m := openModel(t, filepath.Join(tinyDir, "gguf/ggml-model-i2_s.gguf"), th)
		fresh := m.NewSession(64)
		want := evalEach(t, fresh, prompt)
		s := m.NewSession(64)
		for _, batched := range []bool{false, true, false} {
			for _, id := range prompt[:7] {
				if _, err := s.Eval(id); err != nil {
					t.Fatal(err)
				}
			}
			if s.vDirty != 7 {
				t.Fatalf("vDirty %d after 7 tokens, want 7", s.vDirty)
			}
			for _, vc := range s.vCache {
				for col := 0; col < len(vc); col += s.nCtx {
					for p := range s.vDirty {
						vc[col+p] = 0x7c00 // +Inf
					}
				}
			}
			s.Reset()
			var got [][]float32
			if batched {
				rows, err := s.EvalBatch(prompt, 0)
				if err != nil {
					t.Fatal(err)
				}
				got = rows
			} else {
				got = evalEach(t, s, prompt)
			}
			for r := range want {
				for i := range want[r] {
					if math.Float32bits(got[r][i]) != math.Float32bits(want[r][i]) {
						t.Fatalf("threads %d batched %v: token %d logit %d: %v after Reset, %v fresh", th, batched, r, i, got[r][i], want[r][i])
					}
				}
			}
			s.Reset()
		}
	}
}

// TestAttendHeadMasksDirtyCells: with cells past the token holding values
// (vDirty > n: later tokens of a batch), attendHead masks them as ggml's
// padded cells: here they are +Inf, and the output must equal the one with
// those cells zero, where the columns are read in place.
func TestAttendHeadMasksDirtyCells(t *testing.T) {
	m := openModel(t, filepath.Join(tinyDir, "gguf/ggml-model-i2_s.gguf"), 1)
	p := m.Params
	hd, kvDim := p.HeadDim, p.NHeadKV*p.HeadDim
	r := rand.New(rand.NewPCG(5, 8))
	for _, n := range []int{1, 10, 31, 32, 33} {
		s := m.NewSession(64)
		kc, vc := s.kCache[0], s.vCache[0]
		for pos := range n {
			for i := range kvDim {
				kc[pos*kvDim+i] = uint16(r.IntN(0x3c00)) // finite, below 1
				vc[i*s.nCtx+pos] = uint16(r.IntN(0x7bff)) | uint16(r.IntN(2))<<15
			}
		}
		q := make([]float32, hd)
		for i := range q {
			q[i] = float32(r.NormFloat64())
		}
		want := make([]float32, hd)
		s.vDirty = n
		s.attendHead(&attnScratch{}, kc, vc, n, 0, q, want)
		for i := range kvDim {
			for pos := n; pos < n+5; pos++ {
				vc[i*s.nCtx+pos] = 0x7c00 // +Inf
			}
		}
		s.vDirty = n + 5
		got := make([]float32, hd)
		s.attendHead(&attnScratch{}, kc, vc, n, 0, q, got)
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) || math.IsNaN(float64(want[i])) {
				t.Fatalf("n=%d dim %d: %v with dirty cells, %v with zero cells", n, i, got[i], want[i])
			}
		}
	}
}

// TestPerHeadPath: forward1's per-head call (rope, K and V store and
// attention of each head in one team call), taken only when every query
// head has its own KV head, gives forward's numbers bit for bit: a model
// with random F32 weights and NHead = NHeadKV, one token per Eval against
// one EvalBatch of the same tokens, under every arithmetic, for head sizes
// with and without a multiple of 32 and contexts that are not a multiple of
// 32. (The golden models all group their heads; the large dummy, which
// takes this path, is a heavy test.) Under mainline the batched LM head is
// tinyBLAS (EvalBatch's doc), so only the last token's logits are compared.
func TestPerHeadPath(t *testing.T) {
	const vocab = 11
	for _, c := range []struct{ heads, headDim, nCtx int }{{1, 48, 40}, {2, 64, 64}, {4, 32, 100}, {3, 40, 70}} {
		for _, arith := range Ariths {
			E := c.heads * c.headDim
			kvs := []gguf.KV{
				{Key: "general.architecture", Value: gguf.String("llama")},
				{Key: "llama.block_count", Value: gguf.Uint32(2)},
				{Key: "llama.embedding_length", Value: gguf.Uint32(uint32(E))},
				{Key: "llama.attention.head_count", Value: gguf.Uint32(uint32(c.heads))},
				{Key: "llama.attention.head_count_kv", Value: gguf.Uint32(uint32(c.heads))},
				{Key: "llama.rope.dimension_count", Value: gguf.Uint32(uint32(c.headDim))},
				{Key: "llama.feed_forward_length", Value: gguf.Uint32(uint32(2 * E))},
				{Key: "llama.attention.layer_norm_rms_epsilon", Value: gguf.Float32(1e-6)},
				{Key: "llama.context_length", Value: gguf.Uint32(uint32(c.nCtx))},
			}
			var ts []gguf.TensorInfo
			add := func(name string, ne ...uint64) {
				ts = append(ts, gguf.TensorInfo{Name: name, Type: gguf.TypeF32, Ne: ne})
			}
			e, ff := uint64(E), uint64(2*E)
			add("token_embd.weight", e, vocab)
			add("output_norm.weight", e)
			for _, b := range []string{"blk.0.", "blk.1."} {
				add(b+"attn_norm.weight", e)
				add(b+"ffn_norm.weight", e)
				add(b+"attn_q.weight", e, e)
				add(b+"attn_k.weight", e, e)
				add(b+"attn_v.weight", e, e)
				add(b+"attn_output.weight", e, e)
				add(b+"ffn_gate.weight", e, ff)
				add(b+"ffn_up.weight", e, ff)
				add(b+"ffn_down.weight", ff, e)
			}
			data := map[string][]byte{}
			r := rand.New(rand.NewPCG(uint64(E), 3))
			for _, ti := range ts {
				n, _ := ti.NBytes()
				b := make([]byte, n)
				for i := 0; i < len(b); i += 4 {
					v := float32(r.NormFloat64() * 0.3)
					if strings.HasSuffix(ti.Name, "norm.weight") {
						v = 1 + v/4
					}
					binary.LittleEndian.PutUint32(b[i:], math.Float32bits(v))
				}
				data[ti.Name] = b
			}
			file := File{KVs: kvs, Tensors: ts, Data: func(name string) ([]byte, error) { return data[name], nil }}
			m, err := Load(file, Options{Threads: 2, Arith: arith})
			if err != nil {
				t.Fatal(err)
			}
			if m.Params.NHead != m.Params.NHeadKV {
				t.Fatalf("NHead %d, NHeadKV %d", m.Params.NHead, m.Params.NHeadKV)
			}
			tokens := make([]int32, 37)
			for i := range tokens {
				tokens[i] = int32(1 + i*7%(vocab-1))
			}
			want := evalEach(t, m.NewSession(c.nCtx), tokens)
			batch := m.NewSession(c.nCtx)
			from := 0
			if arith == ArithMainline {
				from = len(tokens) - 1
			}
			got, err := batch.EvalBatch(tokens, from)
			if err != nil {
				t.Fatal(err)
			}
			for r := range got {
				for i, v := range got[r] {
					if w := want[from+r][i]; math.Float32bits(v) != math.Float32bits(w) || math.IsNaN(float64(w)) {
						t.Fatalf("heads %d × %d, nCtx %d, %s: token %d logit %d: Eval %v, EvalBatch %v", c.heads, c.headDim, c.nCtx, arith, from+r, i, w, v)
					}
				}
			}
		}
	}
}

// evalEach evaluates ids one Eval call each on s and returns a copy of each
// call's logits.
func evalEach(t testing.TB, s *Session, ids []int32) [][]float32 {
	t.Helper()
	var rows [][]float32
	for _, id := range ids {
		l, err := s.Eval(id)
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, append([]float32(nil), l...))
	}
	return rows
}
