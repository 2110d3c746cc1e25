package verify

import (
	"fmt"
	"math"
)

// refModel is the float reference of a BitNet causal LM. Matrices are HF
// [out, in] row-major float32; vectors are float32.
type refModel struct {
	hidden, heads, kvHeads, headDim, ff, vocab, layers int
	eps, theta                                         float64
	relu2                                              bool
	embed, head, outNorm                               []float32
	l                                                  []refLayer
}

type refLayer struct {
	attnNorm, attnSub, ffnNorm, ffnSub []float32
	q, k, v, o, gate, up, down         []float32
}

// refState is the reference's cache of keys and values (float64, no
// rounding) for incremental evaluation.
type refState struct {
	m    *refModel
	keys [][][]float64 // [layer][pos][kvHeads·headDim]
	vals [][][]float64
}

func newRefState(m *refModel) *refState {
	return &refState{m: m, keys: make([][][]float64, m.layers), vals: make([][][]float64, m.layers)}
}

// rmsNorm is HF LlamaRMSNorm: x · rsqrt(mean(x²) + eps) · w.
func rmsNorm(x []float64, w []float32, eps float64) []float64 {
	var ss float64
	for _, v := range x {
		ss += v * v
	}
	r := 1 / math.Sqrt(ss/float64(len(x))+eps)
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = v * r * float64(w[i])
	}
	return out
}

// matVec computes W·x for W [rows, len(x)] row-major.
func matVec(w []float32, x []float64, rows int) []float64 {
	cols := len(x)
	out := make([]float64, rows)
	for r := 0; r < rows; r++ {
		row := w[r*cols : (r+1)*cols]
		var s float64
		for c, v := range row {
			s += float64(v) * x[c]
		}
		out[r] = s
	}
	return out
}

// rotateHalf applies HF's rotary embedding (apply_rotary_pos_emb with
// rotate_half: dimension i pairs with i + d/2) to each head of x in place.
func rotateHalf(x []float64, nHeads, d int, pos int, theta float64) {
	half := d / 2
	for h := 0; h < nHeads; h++ {
		v := x[h*d : (h+1)*d]
		for i := 0; i < half; i++ {
			freq := math.Pow(theta, -2*float64(i)/float64(d))
			a := float64(pos) * freq
			c, s := math.Cos(a), math.Sin(a)
			x0, x1 := v[i], v[i+half]
			v[i] = x0*c - x1*s
			v[i+half] = x1*c + x0*s
		}
	}
}

// step evaluates one token at the next position and returns the logits and
// the final normed hidden state.
func (st *refState) step(token int32) (logits, hidden []float64, err error) {
	m := st.m
	if token < 0 || int(token) >= m.vocab {
		return nil, nil, fmt.Errorf("token id %d out of range [0, %d)", token, m.vocab)
	}
	h := make([]float64, m.hidden)
	for i := range h {
		h[i] = float64(m.embed[int(token)*m.hidden+i])
	}
	q := m.heads * m.headDim
	kvd := m.kvHeads * m.headDim
	group := m.heads / m.kvHeads
	for li := range m.l {
		L := &m.l[li]
		pos := len(st.keys[li])
		a := rmsNorm(h, L.attnNorm, m.eps)
		qv := matVec(L.q, a, q)
		kv := matVec(L.k, a, kvd)
		vv := matVec(L.v, a, kvd)
		rotateHalf(qv, m.heads, m.headDim, pos, m.theta)
		rotateHalf(kv, m.kvHeads, m.headDim, pos, m.theta)
		st.keys[li] = append(st.keys[li], kv)
		st.vals[li] = append(st.vals[li], vv)
		att := make([]float64, q)
		scale := 1 / math.Sqrt(float64(m.headDim))
		for hd := 0; hd < m.heads; hd++ {
			kh := hd / group
			qh := qv[hd*m.headDim : (hd+1)*m.headDim]
			scores := make([]float64, pos+1)
			mx := math.Inf(-1)
			for p := 0; p <= pos; p++ {
				kp := st.keys[li][p][kh*m.headDim : (kh+1)*m.headDim]
				var s float64
				for i := range qh {
					s += qh[i] * kp[i]
				}
				scores[p] = s * scale
				mx = math.Max(mx, scores[p])
			}
			var sum float64
			for p := range scores {
				scores[p] = math.Exp(scores[p] - mx)
				sum += scores[p]
			}
			out := att[hd*m.headDim : (hd+1)*m.headDim]
			for p := 0; p <= pos; p++ {
				vp := st.vals[li][p][kh*m.headDim : (kh+1)*m.headDim]
				w := scores[p] / sum
				for i := range out {
					out[i] += w * vp[i]
				}
			}
		}
		o := att
		if L.attnSub != nil { // no SubLN in arch llama
			o = rmsNorm(att, L.attnSub, m.eps)
		}
		oo := matVec(L.o, o, m.hidden)
		for i := range h {
			h[i] += oo[i]
		}
		f := rmsNorm(h, L.ffnNorm, m.eps)
		g := matVec(L.gate, f, m.ff)
		u := matVec(L.up, f, m.ff)
		for i := range g {
			if m.relu2 {
				r := math.Max(g[i], 0)
				g[i] = r * r * u[i]
			} else {
				g[i] = g[i] / (1 + math.Exp(-g[i])) * u[i]
			}
		}
		s := g
		if L.ffnSub != nil {
			s = rmsNorm(g, L.ffnSub, m.eps)
		}
		d := matVec(L.down, s, m.hidden)
		for i := range h {
			h[i] += d[i]
		}
	}
	hidden = rmsNorm(h, m.outNorm, m.eps)
	return matVec(m.head, hidden, m.vocab), hidden, nil
}
