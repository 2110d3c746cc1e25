package verify

import (
	"fmt"
	"math"
	"slices"
)

// compareNumbers compares the reference logits ref ([len(seq), vocab]
// row-major) with the runtime rows over seq into rep.Numbers.
func compareNumbers(rep *Report, ref []float64, runRows [][]float32, seq []int32) {
	if num := compareNumbersAs(rep, "", ref, runRows, seq); num != nil {
		rep.Numbers = num
	}
}

// compareNumbersAs is compareNumbers returning the metrics (nil when the
// shapes disagree), each failure prefixed with label (which file's logits).
func compareNumbersAs(rep *Report, label string, ref []float64, runRows [][]float32, seq []int32) *Numbers {
	fail := func(format string, args ...any) { rep.fail(label+format, args...) }
	num := &Numbers{Positions: len(runRows)}
	if len(runRows) == 0 || len(ref)%len(runRows) != 0 {
		fail("float reference: %d logits for %d positions", len(ref), len(runRows))
		return nil
	}
	vocab := len(ref) / len(runRows)
	if len(runRows[0]) != vocab {
		fail("the runtime gives %d logits per position, the float reference %d (the vocabulary sizes differ)", len(runRows[0]), vocab)
		return nil
	}
	bad := 0
	for _, row := range runRows {
		if slices.ContainsFunc(row, func(v float32) bool { return !finite32(v) }) {
			bad++
		}
	}
	if bad > 0 {
		// figures over NaN rows would be NaN or meaningless (a max over
		// the finite logits only): none are given
		rep.Notes = append(rep.Notes, fmt.Sprintf("%snumeric comparison skipped: the runtime logits are not finite at %d of %d positions", label, bad, len(runRows)))
		return nil
	}
	agree := 0
	var klSum, nllRun, nllRef float64
	scored := 0
	firstBad := -1
	for p := range runRows {
		r := ref[p*vocab : (p+1)*vocab]
		g := runRows[p]
		if argmax64(r) == argmax32(g) {
			agree++
		} else if firstBad < 0 {
			firstBad = p
		}
		for i := range r {
			if d := math.Abs(r[i] - float64(g[i])); d > num.MaxAbsDelta {
				num.MaxAbsDelta, num.MaxDeltaPos = d, p
			}
		}
		lr, lg := logSoftmax64(r), logSoftmax32(g)
		var kl float64
		for i := range lr {
			kl += math.Exp(lr[i]) * (lr[i] - lg[i])
		}
		klSum += kl
		if p+1 < len(seq) && seq[p+1] >= 0 && int(seq[p+1]) < vocab {
			nllRef -= lr[seq[p+1]]
			nllRun -= lg[seq[p+1]]
			scored++
		}
	}
	num.Top1Agreement = float64(agree) / float64(len(runRows))
	num.MeanKL = klSum / float64(len(runRows))
	if scored > 0 {
		num.PPLReference = math.Exp(nllRef / float64(scored))
		num.PPLRuntime = math.Exp(nllRun / float64(scored))
	}
	th := rep.Thresholds
	if num.Top1Agreement < th.MinTop1 {
		fail("top-1 agreement %.3f < %.3f (first disagreement at position %d)", num.Top1Agreement, th.MinTop1, firstBad)
	}
	if num.MaxAbsDelta > th.MaxDelta {
		fail("max |Δlogit| %.4g > %.4g at position %d", num.MaxAbsDelta, th.MaxDelta, num.MaxDeltaPos)
	}
	if num.MeanKL > th.MaxKL {
		fail("mean KL %.4g > %.4g", num.MeanKL, th.MaxKL)
	}
	if scored > 0 && math.Abs(num.PPLRuntime/num.PPLReference-1) > th.MaxPPLRel {
		fail("perplexity %.4f vs reference %.4f differs by more than %.1f%%", num.PPLRuntime, num.PPLReference, 100*th.MaxPPLRel)
	}
	return num
}

func argmax32(x []float32) int {
	b := 0
	for i, v := range x {
		if v > x[b] {
			b = i
		}
	}
	return b
}

func argmax64(x []float64) int {
	b := 0
	for i, v := range x {
		if v > x[b] {
			b = i
		}
	}
	return b
}

func logSoftmax64(x []float64) []float64 {
	mx := math.Inf(-1)
	for _, v := range x {
		mx = math.Max(mx, v)
	}
	var s float64
	for _, v := range x {
		s += math.Exp(v - mx)
	}
	l := math.Log(s) + mx
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = v - l
	}
	return out
}

func logSoftmax32(x []float32) []float64 {
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = float64(v)
	}
	return logSoftmax64(y)
}
