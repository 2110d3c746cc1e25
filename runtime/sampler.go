package runtime

import (
	"math"
	"slices"
)

// SamplerParams are the sampling settings of `run`, with llama.cpp's
// meanings (common/common.h common_params_sampling and the samplers of
// src/llama-sampling.cpp), applied in llama.cpp's order: repetition
// penalty, top-k, top-p, temperature, then the draw.
type SamplerParams struct {
	// Temp divides the logits; ≤ 0 is greedy (the largest penalised
	// logit, ties to the lowest id), as llama.cpp's temp sampler keeps
	// only the maximum for temp ≤ 0.
	Temp float64
	// TopK keeps the K largest logits; ≤ 0 keeps all
	// (llama_sampler_top_k).
	TopK int
	// TopP keeps the smallest run of most likely tokens whose softmax
	// probabilities (before temperature) sum to at least TopP, at least
	// one; ≥ 1 keeps all (llama_sampler_top_p).
	TopP float64
	// RepeatPenalty divides a positive logit and multiplies a non-positive
	// one, once per distinct token among the last RepeatLastN tokens of
	// the history; 1 is off (llama_sampler_penalties, penalty_repeat).
	RepeatPenalty float64
	// RepeatLastN is the window of the penalty in tokens; 0 is off, < 0
	// the whole history (llama.cpp's -1 = the context size).
	RepeatLastN int
}

// plain reports whether p is temperature sampling alone (Sample).
func (p SamplerParams) plain(history []int32) bool {
	return p.TopK <= 0 && p.TopP >= 1 && !p.penalises(history)
}

func (p SamplerParams) penalises(history []int32) bool {
	return p.RepeatPenalty != 1 && p.RepeatLastN != 0 && len(history) > 0
}

// SampleWith chooses the next token from logits (not modified) with the
// settings of p; history holds the tokens seen so far, prompt included,
// oldest first (llama-cli accepts the prompt into its sampler too), and u
// is a uniform number in [0, 1). Without top-k, top-p and penalty it is
// Sample(logits, p.Temp, u), so a seed gives the same tokens as before.
// The penalty is computed in float32 as llama.cpp computes it; the
// softmax of top-p and of the draw in float64. The draw walks the kept
// ids in increasing order. It returns −1 when every logit is NaN.
func SampleWith(logits []float32, p SamplerParams, history []int32, u float64) int32 {
	if p.plain(history) {
		return Sample(logits, p.Temp, u)
	}
	type cand struct {
		id    int32
		logit float32
	}
	cands := make([]cand, 0, len(logits))
	for i, v := range logits {
		if v == v {
			cands = append(cands, cand{int32(i), v})
		}
	}
	if len(cands) == 0 {
		return -1
	}
	if p.penalises(history) {
		win := history
		if p.RepeatLastN > 0 && len(win) > p.RepeatLastN {
			win = win[len(win)-p.RepeatLastN:]
		}
		seen := make(map[int32]bool, len(win))
		for _, id := range win {
			seen[id] = true
		}
		pen := float32(p.RepeatPenalty)
		for i := range cands {
			if !seen[cands[i].id] {
				continue
			}
			if cands[i].logit <= 0 {
				cands[i].logit *= pen
			} else {
				cands[i].logit /= pen
			}
		}
	}
	if p.Temp <= 0 {
		best := 0
		for i, c := range cands {
			if c.logit > cands[best].logit {
				best = i
			}
		}
		return cands[best].id
	}
	// Largest logit first, the lower id first on ties.
	byLogit := func(a, b cand) int {
		switch {
		case a.logit > b.logit:
			return -1
		case a.logit < b.logit:
			return 1
		}
		return int(a.id - b.id)
	}
	sorted := false
	if p.TopK > 0 && p.TopK < len(cands) {
		slices.SortFunc(cands, byLogit)
		sorted = true
		cands = cands[:p.TopK]
	}
	if p.TopP < 1 {
		if !sorted {
			slices.SortFunc(cands, byLogit)
		}
		mx := float64(cands[0].logit)
		var sum float64
		for _, c := range cands {
			sum += math.Exp(float64(c.logit) - mx)
		}
		var cum float64
		for i, c := range cands {
			cum += math.Exp(float64(c.logit)-mx) / sum
			if cum >= p.TopP {
				cands = cands[:i+1]
				break
			}
		}
	}
	slices.SortFunc(cands, func(a, b cand) int { return int(a.id - b.id) })
	mx := float64(cands[0].logit)
	for _, c := range cands {
		mx = math.Max(mx, float64(c.logit))
	}
	var sum float64
	for _, c := range cands {
		sum += math.Exp((float64(c.logit) - mx) / p.Temp)
	}
	target := u * sum
	var acc float64
	for _, c := range cands {
		acc += math.Exp((float64(c.logit) - mx) / p.Temp)
		if acc > target {
			return c.id
		}
	}
	return cands[len(cands)-1].id
}
