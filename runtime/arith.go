package runtime

import (
	"fmt"
	"math"
	"strings"

	"github.com/bitnet-convert/bitnet-convert/archtab"
	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/internal/kernels"
)

// Arith names the reference runtime whose CPU arithmetic the parts of the
// graph outside the matrix products follow (attention, RMS norms, the LM
// head's operand type). The matrix products always follow the weight type's
// kernel (its home runtime's), whatever the Arith.
type Arith string

// The arithmetics Options.Arith selects; ArithDefault picks the one of the
// runtime that runs the file's arch and types (DefaultArith).
const (
	// ArithDefault is the file's home runtime (DefaultArith).
	ArithDefault Arith = ""
	// ArithBitnetCpp is bitnet.cpp's (c82b5e66 with llama.cpp fork
	// 406a5036, eb60fc3 for bitnet-b1.58): attention as ggml mul_mat
	// against the F16 KV cache, q and the probabilities rounded to F16.
	ArithBitnetCpp Arith = "bitnet.cpp"
	// ArithMainline is mainline llama.cpp's CPU build (ggml-org/llama.cpp
	// 3f545bec, AVX2, its default flash attention "auto" = on for the CPU,
	// F16 K and V cache): attendHeadMainline.
	ArithMainline Arith = "mainline"
	// ArithIK is ik_llama.cpp 8337e4cd's (ik.go, Options.F32Attention).
	ArithIK Arith = "ik"
)

// Ariths lists the values ParseArith accepts, in the order --help shows
// them.
var Ariths = []Arith{ArithBitnetCpp, ArithMainline, ArithIK}

// ParseArith reads a --arith value: "bitnet.cpp" (or "bitnet"),
// "mainline" (or "llama.cpp"), "ik" (or "ik_llama.cpp"), case-insensitive;
// "" or "auto" is ArithDefault. Other values are an error naming the flag
// value and the choices.
func ParseArith(s string) (Arith, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "auto", "default":
		return ArithDefault, nil
	case "bitnet.cpp", "bitnet", "bitnetcpp":
		return ArithBitnetCpp, nil
	case "mainline", "llama.cpp":
		return ArithMainline, nil
	case "ik", "ik_llama.cpp", "ik_llama":
		return ArithIK, nil
	}
	return "", fmt.Errorf("arithmetic %q: want one of bitnet.cpp, mainline, ik (or auto: the file's home runtime)", s)
}

// typeQ2_0 is ggml's GGML_TYPE_Q2_0 (ggml-org/llama.cpp ggml.h, id 42):
// a type only mainline llama.cpp computes.
const typeQ2_0 gguf.Type = 42

// DefaultArith is the arithmetic of the runtime that runs a file of arch
// with tensors of types: ik_llama.cpp's for IQ1_BN/IQ2_BN, mainline's for
// Q2_0 or an arch bitnet.cpp lacks, else bitnet.cpp's (I2_S, TL1/TL2, and
// TQ1_0/TQ2_0/F16/F32 of the bitnet archs and llama, which bitnet.cpp runs
// as well as mainline).
func DefaultArith(arch string, types []gguf.Type) Arith {
	// archtab: the causal archs bitnet.cpp's fork (either build) runs
	mainline := true
	if a := archtab.Causal(arch); a != nil && a.BitnetCpp() {
		mainline = false
	}
	for _, t := range types {
		switch t {
		case gguf.TypeIQ1BN, gguf.TypeIQ2BN:
			return ArithIK
		case typeQ2_0:
			mainline = true
		}
	}
	if mainline {
		return ArithMainline
	}
	return ArithBitnetCpp
}

// resolveArith fills opts.Arith from the file when it is ArithDefault
// (Options.F32Attention set by the caller meaning ArithIK) and sets
// F32Attention to match it.
func resolveArith(opts *Options, arch string, tensors []gguf.TensorInfo) {
	if opts.Arith == ArithDefault {
		if opts.F32Attention {
			opts.Arith = ArithIK
		} else {
			types := make([]gguf.Type, len(tensors))
			for i, ti := range tensors {
				types[i] = ti.Type
			}
			opts.Arith = DefaultArith(arch, types)
		}
	}
	opts.F32Attention = opts.Arith == ArithIK
}

// Arith returns the arithmetic the model runs with (Options.Arith resolved
// against the file).
func (m *Model) Arith() Arith { return m.opts.Arith }

// attendHeadMainline is attendHead as mainline llama.cpp's CPU flash
// attention computes one query row against the F16 K and V cache
// (ggml/src/ggml-cpu/ops.cpp ggml_compute_forward_flash_attn_ext_f16_one_chunk,
// ggml-org/llama.cpp 3f545bec; the path of every decode with fewer than 512
// cache cells and of batches under 64 tokens):
//
//   - q is rounded to F16 (the K type's vec_dot_type), each score is
//     ggml_vec_dot_f16 of the key row with it (dotF16ggml), times the scale;
//   - an online softmax over the keys in order: a score above the running
//     maximum M rescales the F16 accumulator by ms = expf(M_old − s)
//     (ggml_vec_scale_f16: each lane widened, multiplied, rounded back to
//     F16) and takes weight 1, any other takes vs = expf(s − M); expf is
//     glibc's (glibcExpf);
//   - the accumulator adds V·vs lane by lane as one fused multiply-add
//     rounded to F16 (ggml_vec_mad_f16 on AVX2/FMA), and the sum
//     S = S·ms + vs (one fused multiply-add, as gcc contracts it);
//   - out = float32(acc)·(1/S).
func (s *Session) attendHeadMainline(kc, vc []uint16, n, h int, qh []float32, acc []uint16, out []float32) {
	p := s.m.Params
	hd := p.HeadDim
	kvDim := p.NHeadKV * hd
	kvh := h / (p.NHead / p.NHeadKV)
	scale := 1 / float32(math.Sqrt(float64(hd)))
	clear(acc)
	mx := float32(math.Inf(-1))
	var sum float32
	// The V column of this head at one position, gathered from the
	// transposed cache for kernels.FMAF16Acc.
	var buf [256]uint16
	col := buf[:]
	if len(acc) > len(buf) {
		col = make([]uint16, len(acc))
	}
	col = col[:len(acc)]
	for j := 0; j < n; j++ {
		krow := kc[j*kvDim+kvh*hd : j*kvDim+(kvh+1)*hd]
		sc := dotF16ggml(krow, qh) * scale
		ms, vs := float32(1), float32(1)
		if sc > mx {
			old := mx
			mx = sc
			ms = glibcExpf(old - mx)
			kernels.ScaleF16(acc, ms)
		} else {
			vs = glibcExpf(sc - mx)
		}
		// vc is transposed ([kvDim][nCtx]): dimension d of position j
		// is vc[d·nCtx + j].
		vcol := vc[kvh*hd*s.nCtx+j:]
		for i := range col {
			col[i] = vcol[i*s.nCtx]
		}
		kernels.FMAF16Acc(acc, col, vs)
		sum = fma32(vs, sum, ms)
	}
	inv := float32(0)
	if sum != 0 {
		inv = 1 / sum
	}
	for i, a := range acc {
		out[i] = f16Table[a] * inv
	}
}

// headTinyBLAS is the F16 LM head of a mainline batch of two or more rows
// (one EvalBatch, as one llama_decode with those output rows):
// ggml_compute_forward_mul_mat hands F16 × F16 (the rows rounded to F16,
// the vec_dot_type) to llamafile_sgemm (ggml/src/ggml-cpu/llamafile/sgemm.cpp,
// tinyBLAS<8, __m256, …> on AVX2 with F16C), which keeps one 8-lane fused
// multiply-add accumulator per output over k in steps of 8 and adds the
// lanes as hsum(__m256) does: ((l4+l0)+(l6+l2)) + ((l5+l1)+(l7+l3)).
// A single row (n < 2) takes ggml's vec_dot instead (Matrix.matMul).
func (s *Session) headTinyBLAS(dst, hidden [][]float32) {
	out := s.m.output
	xh := packRows(hidden, out.K)
	roundF16Into(xh, xh)
	tinyHead(out, dst, xh, s.m.opts.Threads)
}

// roundF16Into writes src rounded to F16 (and widened back) into dst.
func roundF16Into(dst, src []float32) {
	for i, v := range src {
		dst[i] = roundF16(v)
	}
}

// expf2Table is glibc's __exp2f_data.tab (sysdeps/ieee754/flt-32/e_exp2f_data.c,
// EXP2F_TABLE_BITS = 5): the bits of 2^(i/32) rounded to double, minus
// i << 47 (TestExpf2Table recomputes it).
var expf2Table = [32]uint64{
	0x3ff0000000000000, 0x3fefd9b0d3158574, 0x3fefb5586cf9890f, 0x3fef9301d0125b51,
	0x3fef72b83c7d517b, 0x3fef54873168b9aa, 0x3fef387a6e756238, 0x3fef1e9df51fdee1,
	0x3fef06fe0a31b715, 0x3feef1a7373aa9cb, 0x3feedea64c123422, 0x3feece086061892d,
	0x3feebfdad5362a27, 0x3feeb42b569d4f82, 0x3feeab07dd485429, 0x3feea47eb03a5585,
	0x3feea09e667f3bcd, 0x3fee9f75e8ec5f74, 0x3feea11473eb0187, 0x3feea589994cce13,
	0x3feeace5422aa0db, 0x3feeb737b0cdc5e5, 0x3feec49182a3f090, 0x3feed503b23e255d,
	0x3feee89f995ad3ad, 0x3feeff76f2fb5e47, 0x3fef199bdd85529c, 0x3fef3720dcef9069,
	0x3fef5818dcfba487, 0x3fef7c97337b9b5f, 0x3fefa4afa2a490da, 0x3fefd0765b6e4540,
}

// glibcExpf is expf as glibc 2.36 computes it on x86-64 with FMA
// (sysdeps/ieee754/flt-32/e_expf.c, the __expf_fma variant): x·32/ln2 in
// double split into k + r with the 0x1.8p52 shift, 2^(k/32) from
// expf2Table, a degree-3 polynomial in r with fused multiply-adds, rounded
// once to float32. It differs from float32(math.Exp(x)) in about 1 of 2000
// arguments (glibc's bound is 0.502 ulp); checked against glibc's own on
// 15 million arguments (TestGlibcExpf keeps the hard ones).
func glibcExpf(x float32) float32 {
	const (
		n       = 32
		invLn2N = 0x1.71547652b82fep+0 * n
		shift   = 0x1.8p+52
		c0      = 0x1.c6af84b912394p-5 / n / n / n
		c1      = 0x1.ebfce50fac4f3p-3 / n / n
		c2      = 0x1.62e42ff0c52d6p-1 / n
	)
	switch {
	case x != x:
		return x
	case x > 0x1.62e42ep6: // overflow, +Inf included
		return float32(math.Inf(1))
	case x < -0x1.9fe368p6: // underflow, −Inf included
		return 0
	}
	xd := float64(x)
	z := invLn2N * xd
	kd := z + shift
	ki := math.Float64bits(kd)
	kd -= shift
	r := z - kd
	t := expf2Table[ki%n] + ki<<(52-5)
	sc := math.Float64frombits(t)
	p := math.FMA(c0, r, c1)
	r2 := r * r
	y := math.FMA(c2, r, 1)
	y = math.FMA(p, r2, y)
	return float32(y * sc)
}
