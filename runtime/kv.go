package runtime

import (
	"fmt"
	"math"

	"github.com/bitnet-convert/bitnet-convert/gguf"
)

// kvReader reads the {arch}.* hyper-parameters of a GGUF file for Load and
// LoadEmbedding. The first error (a missing required key, a wrong type, a
// value out of range) is kept in err, naming the key; later reads do nothing.
type kvReader struct {
	arch string
	kv   func(string) (gguf.Value, bool)
	err  error
}

func (r *kvReader) uint(dst *int, key string, def int, required bool) {
	if r.err != nil {
		return
	}
	v, ok := r.kv(r.arch + "." + key)
	if !ok {
		if required {
			r.err = fmt.Errorf("key %s.%s: %w", r.arch, key, ErrMissing)
		}
		*dst = def
		return
	}
	u, ok := v.Uint()
	if !ok {
		r.err = fmt.Errorf("key %s.%s: want a non-negative integer, have %s", r.arch, key, v.Type)
		return
	}
	if u > maxHyperParam {
		r.err = fmt.Errorf("key %s.%s: value %d is out of range (at most %d); fix the GGUF metadata", r.arch, key, u, maxHyperParam)
		return
	}
	*dst = int(u)
}

func (r *kvReader) float(dst *float32, key string, def float32, required bool) {
	if r.err != nil {
		return
	}
	v, ok := r.kv(r.arch + "." + key)
	if !ok {
		if required {
			r.err = fmt.Errorf("key %s.%s: %w", r.arch, key, ErrMissing)
		}
		*dst = def
		return
	}
	x, ok := v.Float()
	if !ok || math.IsNaN(x) || math.IsInf(x, 0) {
		r.err = fmt.Errorf("key %s.%s: want a finite float, have %s", r.arch, key, v.Type)
		return
	}
	*dst = float32(x)
}
