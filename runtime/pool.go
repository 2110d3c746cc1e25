package runtime

import "fmt"

// PoolMode selects how Pool reduces per-position hidden states to one
// embedding (llama.cpp's --pooling).
type PoolMode int

const (
	// PoolMean averages every position (llama.cpp LLAMA_POOLING_TYPE_MEAN).
	PoolMean PoolMode = iota
	// PoolCLS takes the first position (LLAMA_POOLING_TYPE_CLS).
	PoolCLS
	// PoolLast takes the last position (LLAMA_POOLING_TYPE_LAST).
	PoolLast
)

// poolNames maps the --pooling names to modes.
var poolNames = map[string]PoolMode{"mean": PoolMean, "cls": PoolCLS, "last": PoolLast}

// ParsePoolMode returns the mode named "mean", "cls" or "last".
func ParsePoolMode(name string) (PoolMode, error) {
	if m, ok := poolNames[name]; ok {
		return m, nil
	}
	return 0, fmt.Errorf("unknown pooling %q (mean, cls, last)", name)
}

// Pool reduces hiddens (one row per position, each the final
// RMSNorm(x)·output_norm of Session.Hidden, all of the same length) to one
// vector, without normalisation (llama-embedding --embd-normalize -1). Mean
// sums in float64 and divides once. It returns nil for no rows and panics on
// ragged rows or an unknown mode.
func Pool(hiddens [][]float32, mode PoolMode) []float32 {
	if len(hiddens) == 0 {
		return nil
	}
	n := len(hiddens[0])
	for _, h := range hiddens {
		if len(h) != n {
			panic("runtime: Pool rows of different lengths")
		}
	}
	out := make([]float32, n)
	switch mode {
	case PoolMean:
		for i := range out {
			var s float64
			for _, h := range hiddens {
				s += float64(h[i])
			}
			out[i] = float32(s / float64(len(hiddens)))
		}
	case PoolCLS:
		copy(out, hiddens[0])
	case PoolLast:
		copy(out, hiddens[len(hiddens)-1])
	default:
		panic("runtime: unknown PoolMode")
	}
	return out
}
