package runtime

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/format"
	"github.com/bitnet-convert/bitnet-convert/gguf"
)

const ecoDir = "../testdata/golden/ecosystems"

// TestGoldenTQ reproduces bitnet.cpp build A's (BitNet c82b5e66, llama.cpp
// fork 406a5036, AVX2) logits of its own TQ1_0 and TQ2_0 files of the tiny
// model bit for bit (testdata/golden/ecosystems/README.md §1): every prompt
// and generated row of both prompts, with the prompt fed one token per call
// and as one EvalBatch, at 1 and 3 threads.
func TestGoldenTQ(t *testing.T) {
	for _, typ := range []string{"tq1_0", "tq2_0"} {
		for _, prompt := range []string{"hello", "ids"} {
			for _, run := range seqRunners {
				t.Run(typ+"_"+prompt+"_"+run.name, func(t *testing.T) {
					t.Parallel()
					m := openModel(t, filepath.Join(ecoDir, "tiny-bitnet-"+typ+".gguf"), run.threads)
					checkGoldenBits(t, m, filepath.Join(ecoDir, fmt.Sprintf("tiny-bitnet-%s_%s_seq_t1", typ, prompt)), run.f)
				})
			}
		}
	}
}

// seqRunners are the two ways a golden _seq_ run is reproduced: the prompt
// one token per call, and as one EvalBatch (the same bits by design).
var seqRunners = []struct {
	name    string
	f       func(testing.TB, *Model, []int32, int) ([][]float32, [][]float32, []int32)
	threads int
}{{"seq", runSeq, 1}, {"batched", runBatched, 1}, {"batched-3threads", runBatched, 3}}

// checkGoldenBits runs the golden PREFIX's prompt through m with run and
// requires its generated ids and every prompt and generated row of logits
// bit for bit.
func checkGoldenBits(t *testing.T, m *Model, prefix string, run func(testing.TB, *Model, []int32, int) ([][]float32, [][]float32, []int32)) {
	t.Helper()
	ids, wantGen := goldenIDs(t, prefix+".txt")
	wantP := readRows(t, prefix+".prompt_logits.f32", m.Params.NVocab)
	wantG := readRows(t, prefix+".gen_logits.f32", m.Params.NVocab)
	gotP, gotG, gen := run(t, m, ids, len(wantGen))
	if fmt.Sprint(gen) != fmt.Sprint(wantGen) {
		t.Errorf("generated ids\n got %v\nwant %v", gen, wantGen)
	}
	for _, c := range []struct {
		what      string
		got, want [][]float32
	}{{"prompt", gotP, wantP}, {"generated", gotG, wantG}} {
		if len(c.got) != len(c.want) {
			t.Fatalf("%s rows: %d, golden %d", c.what, len(c.got), len(c.want))
		}
		n := 0
		for r := range c.got {
			for i := range c.got[r] {
				if math.Float32bits(c.got[r][i]) != math.Float32bits(c.want[r][i]) {
					if n == 0 {
						t.Errorf("%s row %d id %d: %v, reference %v (not bit-identical)", c.what, r, i, c.got[r][i], c.want[r][i])
					}
					n++
				}
			}
		}
		if n > 0 {
			d, r, col := maxAbsDiff(c.got, c.want)
			t.Errorf("%s: %d logits differ, max |Δ| %.3g at row %d id %d", c.what, n, d, r, col)
		}
	}
}

// TestTQ1DigitsAVX2: the AVX2 kernel's digit extraction (a saturating −1,
// two _mm256_avg_epu8 to multiply by 3/4, then bits 7-6) gives tq1Trits'
// ((b·3^n mod 256)·3) >> 8 for every byte and digit, so the scalar
// decoding above computes the kernel's codes.
func TestTQ1DigitsAVX2(t *testing.T) {
	avg := func(a, b uint8) uint8 { return uint8((uint16(a) + uint16(b) + 1) >> 1) }
	pow := [5]uint8{1, 3, 9, 27, 81}
	for b := 0; b < 256; b++ {
		for n, p := range pow {
			q := uint8(b) * p
			if q > 0 {
				q--
			}
			got := avg(q, avg(q, 0)) >> 6 & 3
			if got != tq1Trits[b][n] {
				t.Fatalf("byte %#x digit %d: AVX2 path %d, table %d", b, n, got, tq1Trits[b][n])
			}
		}
	}
}

// TestQuantizeQ8K checks quantize_row_q8_K_ref's rules on hand-made blocks.
func TestQuantizeQ8K(t *testing.T) {
	x := make([]float32, 2*qkK)
	// Block 0: max by magnitude is the negative −2 (first of |−2| and |2|).
	x[3], x[7], x[10], x[20] = -2, 2, 1, 1.0/127
	// Block 1 stays all zero.
	q := make([]int8, len(x))
	d := make([]float32, 2)
	bs := make([]int16, 2*16)
	for i := range bs {
		bs[i] = 99 // must be overwritten
	}
	quantizeQ8K(q, d, bs, x)
	// iscale = −127/−2 = 63.5: 2 → 127, 1 → 63.5 → 64 (half to even),
	// 1/127·63.5 = 0.5 → 0 (half to even).
	if d[0] != 1/float32(63.5) || q[3] != -127 || q[7] != 127 || q[10] != 64 || q[20] != 0 {
		t.Errorf("block 0: d %v q %d %d %d %d", d[0], q[3], q[7], q[10], q[20])
	}
	if bs[0] != -127+127+64 || bs[1] != 0 {
		t.Errorf("bsums %d %d, want 64 0", bs[0], bs[1])
	}
	if d[1] != 0 || bs[16] != 0 || bs[31] != 0 {
		t.Errorf("zero block: d %v bsums %d %d", d[1], bs[16], bs[31])
	}
	// Positive max: iscale = −127/3, 3 → −127, −3 → 127.
	y := make([]float32, qkK)
	y[0], y[1] = 3, -3
	quantizeQ8K(q[:qkK], d[:1], bs[:16], y)
	if q[0] != -127 || q[1] != 127 || d[0] != 1/(-127/float32(3)) {
		t.Errorf("positive max: q %d %d d %v", q[0], q[1], d[0])
	}
}

// TestTQ1EqualsTQ2: the same codes and block scales stored as TQ1_0 and as
// TQ2_0 give bit-identical rows (both kernels produce the same integer
// lanes), for one token and in a batch, and the rows stay within the Q8_K
// rounding bound of the exact Σ (code·d_w)·x; 40 rows take TQ1_0's direct
// digit products, 300 its tables.
func TestTQ1EqualsTQ2(t *testing.T) {
	for _, m := range []int{40, tq1LUTMinRows + 44} {
		t.Run(fmt.Sprint(m), func(t *testing.T) { testTQ1EqualsTQ2(t, m) })
	}
}

func testTQ1EqualsTQ2(t *testing.T, m int) {
	const k = 768
	r := rand.New(rand.NewPCG(12, 1))
	codes := make([]int8, k*m)
	for i := range codes {
		codes[i] = int8(r.IntN(3) - 1)
	}
	scales := make([]float32, k*m/qkK)
	for i := range scales {
		scales[i] = roundF16(0.01 + r.Float32())
	}
	scales[1] = 0 // an all-zero block
	var mats []*Matrix
	for _, f := range []format.Format{format.TQ1_0{}, format.TQ2_0{}} {
		n, _ := f.Bytes(k, m)
		data := make([]byte, n)
		if err := f.Encode(data, codes, scales, k, m); err != nil {
			t.Fatal(err)
		}
		w, err := NewMatrix(f.Type(), k, m, data)
		if err != nil {
			t.Fatal(err)
		}
		mats = append(mats, w)
	}
	xs := make([][]float32, 5)
	for i := range xs {
		xs[i] = make([]float32, k)
		for j := range xs[i] {
			xs[i][j] = float32(r.NormFloat64())
		}
	}
	xs[2][300] = 40 // an outlier: a coarse Q8_K block
	var outs [2][][]float32
	for i, w := range mats {
		outs[i] = make([][]float32, len(xs))
		for tk := range outs[i] {
			outs[i][tk] = make([]float32, m)
		}
		w.MatMul(outs[i], xs, 2)
		one := make([]float32, m)
		w.MatVec(one, xs[4], nil, 1)
		for row := range one {
			if math.Float32bits(one[row]) != math.Float32bits(outs[i][4][row]) {
				t.Fatalf("%s row %d: MatVec %v, MatMul %v", w.Type, row, one[row], outs[i][4][row])
			}
		}
	}
	for tk := range xs {
		var amax [3]float64 // per block, for the bound
		for row := 0; row < m; row++ {
			if math.Float32bits(outs[0][tk][row]) != math.Float32bits(outs[1][tk][row]) {
				t.Fatalf("token %d row %d: TQ1_0 %v, TQ2_0 %v", tk, row, outs[0][tk][row], outs[1][tk][row])
			}
			var exact, bound float64
			for b := 0; b < k/qkK; b++ {
				amax[b] = 0
				for _, v := range xs[tk][b*qkK : (b+1)*qkK] {
					amax[b] = math.Max(amax[b], math.Abs(float64(v)))
				}
				s := float64(scales[row*k/qkK+b])
				for j := b * qkK; j < (b+1)*qkK; j++ {
					exact += float64(codes[row*k+j]) * s * float64(xs[tk][j])
				}
				// each code's activation is off by at most half a step.
				bound += qkK * s * amax[b] / 127 / 2
			}
			if d := math.Abs(float64(outs[0][tk][row]) - exact); d > bound+1e-4 {
				t.Errorf("token %d row %d: %v, exact %v, |Δ| %.3g > bound %.3g", tk, row, outs[0][tk][row], exact, d, bound)
			}
		}
	}
}

// FuzzQ8KTypes: TQ1_0, TQ2_0, Q6_K and Q4_K matrices over arbitrary block
// bytes (TQ2_0 code 3, TQ1_0 bytes ≥ 243, NaN or infinite f16 scales) and
// arbitrary activations never panic, and a batch gives every token
// MatVec's bits; token_embd rows decode without panicking.
func FuzzQ8KTypes(f *testing.F) {
	f.Add([]byte{0xff, 0x00, 0x7c, 0x55}, []byte{0, 1, 2, 3}, uint8(0))
	f.Add([]byte{0xf3, 0xfe, 0x00, 0xfc}, []byte{0x80, 0x7f}, uint8(1))
	f.Add([]byte{0x01}, []byte{0xff, 0xff, 0x7f, 0x7f}, uint8(2))
	f.Add([]byte{0x00, 0x7c, 0xff, 0xfb}, []byte{0x81, 0x00}, uint8(3))
	f.Fuzz(func(t *testing.T, seed, xs []byte, which uint8) {
		if len(seed) == 0 || len(xs) == 0 {
			return
		}
		typ := []gguf.Type{gguf.TypeTQ1_0, gguf.TypeTQ2_0, gguf.TypeQ6_K, gguf.TypeQ4_K}[int(which)%4]
		const k, m = 512, 3
		n, err := gguf.NBytes(typ, []uint64{k, m})
		if err != nil {
			t.Fatal(err)
		}
		data := make([]byte, n)
		for i := range data {
			data[i] = seed[i%len(seed)] ^ byte(i*7)
		}
		w, err := NewMatrix(typ, k, m, data)
		if err != nil {
			t.Fatal(err)
		}
		rows := make([][]float32, 3)
		for tk := range rows {
			rows[tk] = make([]float32, k)
			for i := range rows[tk] {
				b := xs[(i+tk*k)%len(xs)]
				rows[tk][i] = float32(int8(b)) * float32(i%5) / 16
			}
		}
		if xs[0] == 0xff {
			rows[1][7] = float32(math.Inf(1))
		}
		out := [][]float32{make([]float32, m), make([]float32, m), make([]float32, m)}
		w.MatMul(out, rows, 2)
		one := make([]float32, m)
		for tk := range rows {
			w.MatVec(one, rows[tk], nil, 1)
			for r := range one {
				if math.Float32bits(one[r]) != math.Float32bits(out[tk][r]) {
					t.Fatalf("token %d row %d: MatVec %v, MatMul %v", tk, r, one[r], out[tk][r])
				}
			}
		}
		emb := make([]float32, k)
		w.embedRow(emb, m-1)
	})
}
