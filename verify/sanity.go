package verify

import (
	"fmt"
	"math"
)

// Sanity is what the runtime-only check measured: it is all `verify`
// proves without a checkpoint (finite logits that are not all equal), not
// that the file is the model it should be.
type Sanity struct {
	Positions    int     `json:"positions"`
	NonFinite    int     `json:"non_finite_positions"`
	MinSpread    float64 `json:"min_spread"` // smallest max − min of a position's logits
	MinSpreadPos int     `json:"min_spread_position"`
	MaxAbsLogit  float64 `json:"max_abs_logit"`
}

// checkSanity checks every row of runtime logits for non-finite values and
// for a spread under Thresholds.MinFiniteSpread, and returns the figures.
func checkSanity(rep *Report, rows [][]float32) *Sanity {
	s := &Sanity{Positions: len(rows), MinSpread: math.Inf(1)}
	first := ""
	for p, row := range rows {
		lo, hi := math.Inf(1), math.Inf(-1)
		finite := true
		for j, v := range row {
			if !finite32(v) {
				if first == "" {
					first = fmt.Sprintf("position %d, logit %d is %v", p, j, v)
				}
				s.NonFinite++
				finite = false
				break
			}
			lo, hi = math.Min(lo, float64(v)), math.Max(hi, float64(v))
		}
		if !finite {
			continue
		}
		s.MaxAbsLogit = math.Max(s.MaxAbsLogit, math.Max(math.Abs(lo), math.Abs(hi)))
		if hi-lo < s.MinSpread {
			s.MinSpread, s.MinSpreadPos = hi-lo, p
		}
		if hi-lo < rep.Thresholds.MinFiniteSpread {
			rep.fail("runtime logits at position %d are degenerate (spread %.3g)", p, hi-lo)
		}
	}
	if s.NonFinite > 0 {
		rep.fail("runtime logits are not finite at %d of %d positions (first: %s): the file's weights or scales hold NaN/Inf; reconvert the model", s.NonFinite, s.Positions, first)
	}
	if math.IsInf(s.MinSpread, 1) {
		s.MinSpread = 0
	}
	return s
}
