package verify

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// synthWeights generates a causal LM's weights on demand from a seed, one
// tensor at a time and as sourceWeights serves them (a projection's ternary
// codes, one byte per weight, held while its blocks are served; the float
// embedding and head generated row block by row block), so the reference's
// memory and speed can be measured at any model size without a checkpoint
// on disk. Projections are codes × 1/√in, norm weights 1 + small noise,
// embedding and head values in ±0.05.
type synthWeights struct {
	g        refGeometry
	untied   bool // output.weight exists (Llama3-8B, Falcon3)
	subNorms bool // attn_sub_norm / ffn_sub_norm exist (BitNet)
	seed     uint64
}

// mix is splitmix64: a deterministic stream of 64-bit values.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// key is a stream key of (seed, name).
func (s *synthWeights) key(name string) uint64 {
	h := s.seed
	for _, c := range []byte(name) {
		h = mix(h ^ uint64(c))
	}
	return h
}

// unit returns a value in [−1, 1) from (seed, name, i).
func (s *synthWeights) unit(name string, i uint64) float64 {
	return float64(mix(s.key(name)^i)>>11)/(1<<52) - 1
}

func (s *synthWeights) shape(name string) ([]int, bool) {
	g := s.g
	qDim, kvDim := g.heads*g.headDim, g.kvHeads*g.headDim
	switch name {
	case "token_embd.weight":
		return []int{g.vocab, g.hidden}, true
	case "output.weight":
		return []int{g.vocab, g.hidden}, s.untied
	case "output_norm.weight":
		return []int{g.hidden}, true
	}
	rest, ok := strings.CutPrefix(name, "blk.")
	if !ok {
		return nil, false
	}
	num, stem, ok := strings.Cut(rest, ".")
	if b, err := strconv.Atoi(num); !ok || err != nil || b < 0 || b >= g.layers {
		return nil, false
	}
	switch stem {
	case "attn_norm.weight", "ffn_norm.weight":
		return []int{g.hidden}, true
	case "attn_sub_norm.weight":
		return []int{qDim}, s.subNorms
	case "ffn_sub_norm.weight":
		return []int{g.ff}, s.subNorms
	case "attn_q.weight":
		return []int{qDim, g.hidden}, true
	case "attn_k.weight", "attn_v.weight":
		return []int{kvDim, g.hidden}, true
	case "attn_output.weight":
		return []int{g.hidden, qDim}, true
	case "ffn_gate.weight", "ffn_up.weight":
		return []int{g.ff, g.hidden}, true
	case "ffn_down.weight":
		return []int{g.hidden, g.ff}, true
	}
	return nil, false
}

func (s *synthWeights) vector(name string) ([]float64, error) {
	sh, ok := s.shape(name)
	if !ok || len(sh) != 1 {
		return nil, fmt.Errorf("no vector %s", name)
	}
	v := make([]float64, sh[0])
	for i := range v {
		v[i] = 1 + 0.1*s.unit(name, uint64(i))
	}
	return v, nil
}

func (s *synthWeights) rows(name string, ids []int32) ([]float64, error) {
	sh, ok := s.shape(name)
	if !ok || len(sh) != 2 {
		return nil, fmt.Errorf("no matrix %s", name)
	}
	cols := sh[1]
	out := make([]float64, len(ids)*cols)
	for i, id := range ids {
		for j := 0; j < cols; j++ {
			out[i*cols+j] = 0.05 * s.unit(name, uint64(id)*uint64(cols)+uint64(j))
		}
	}
	return out, nil
}

func (s *synthWeights) blocks(name string, maxElems int, fn func(lo, hi int, w []float64)) error {
	sh, ok := s.shape(name)
	if !ok || len(sh) != 2 {
		return fmt.Errorf("no matrix %s", name)
	}
	rows, cols := sh[0], sh[1]
	per := max(1, maxElems/cols)
	buf := make([]float64, min(per, rows)*cols)
	if strings.HasPrefix(name, "blk.") {
		codes := make([]int8, rows*cols)
		k := s.key(name)
		for i := range codes {
			codes[i] = int8(mix(k^uint64(i))%3) - 1
		}
		scale := 1 / math.Sqrt(float64(cols))
		for lo := 0; lo < rows; lo += per {
			hi := min(lo+per, rows)
			w := buf[:(hi-lo)*cols]
			for i, c := range codes[lo*cols : hi*cols] {
				w[i] = float64(c) * scale
			}
			fn(lo, hi, w)
		}
		return nil
	}
	k := s.key(name)
	for lo := 0; lo < rows; lo += per {
		hi := min(lo+per, rows)
		w := buf[:(hi-lo)*cols]
		for i := range w {
			w[i] = 0.05 * (float64(mix(k^uint64(lo*cols+i))>>11)/(1<<52) - 1)
		}
		fn(lo, hi, w)
	}
	return nil
}
