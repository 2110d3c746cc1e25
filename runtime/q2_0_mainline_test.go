package runtime

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// q2_0Prompts are the golden prompts of mainline's oracle-dump runs in
// testdata/golden/q2_0 (README.md there): token ids, 16 generated.
var q2_0Prompts = map[string][]int32{
	"hello": {1, 413, 480, 414, 271, 417, 313, 269, 421, 427, 457, 360, 314, 411, 280, 262, 261, 437, 413, 461, 268, 469, 316, 262, 414, 284, 432},
	"ids":   {1, 100, 200, 300, 400, 500, 7, 8},
}

// TestQ2_0VsMainline runs our runtime on mainline llama-quantize's Q2_0
// files (testdata/golden/q2_0) and compares its logits, one token per
// call, with mainline 3f545bec's AVX2 build (flash attention on, F16 KV
// cache). The Q2_0 kernel is mainline's (q2_0.go), but the rest of the
// graph is not yet mainline's (its flash-attention path and F16 KV cache:
// issue 21 Deliver 2, the mainline-graph work), so the logits are not
// bit-identical today (acceptance b is not claimed). The test pins today's
// distance: row 0 (the first token: every projection through the Q2_0
// kernel, no attention across positions) is bit-identical with mainline's,
// and every prompt row stays within the bound measured on these files.
func TestQ2_0VsMainline(t *testing.T) {
	const dir = "../testdata/golden/q2_0"
	for _, c := range []struct {
		model string
		bound float64 // max |Δlogit| measured today, rounded up
	}{{"tiny", 0.2}, {"bitnet384", 0.03}, {"llama-small", 0.03}} {
		for _, prompt := range []string{"hello", "ids"} {
			t.Run(c.model+"/"+prompt, func(t *testing.T) {
				m := openModel(t, filepath.Join(dir, c.model+"-q2_0.gguf"), 1)
				base := filepath.Join(dir, fmt.Sprintf("%s-q2_0.%s.seq.faon", c.model, prompt))
				txt, err := os.ReadFile(base + ".txt")
				if err != nil {
					t.Fatal(err)
				}
				var wantGen []string
				for _, l := range strings.Split(string(txt), "\n") {
					if g, ok := strings.CutPrefix(l, "gen: "); ok {
						wantGen = strings.Fields(g)
					}
				}
				want := readRows(t, base+".f32", m.Params.NVocab)
				ids := q2_0Prompts[prompt]
				gotP, gotG, gen := runSeq(t, m, ids, len(wantGen))
				got := append(gotP, gotG...)
				if len(got) != len(want) {
					t.Fatalf("%d rows, mainline %d", len(got), len(want))
				}
				// Rows past the prompt compare different contexts once the
				// greedy ids part, so the bound covers the prompt rows.
				var worst float64
				first := -1
				for r := range got {
					if r >= len(gotP) && first >= 0 {
						break
					}
					var d float64
					for i := range got[r] {
						d = math.Max(d, math.Abs(float64(got[r][i])-float64(want[r][i])))
					}
					if d != 0 && first < 0 {
						first = r
					}
					worst = math.Max(worst, d)
				}
				same := 0
				for same < len(gen) && fmt.Sprint(gen[same]) == wantGen[same] {
					same++
				}
				t.Logf("prompt rows: max |Δlogit| %.4g, first differing row %d of %d; greedy ids equal for %d of %d", worst, first, len(got), same, len(gen))
				if first == 0 {
					t.Errorf("row 0 differs from mainline's: the Q2_0 kernel, Q8_0 activations or the first token's graph are not mainline's")
				}
				if worst > c.bound {
					t.Errorf("max |Δlogit| %.4g exceeds today's bound %g", worst, c.bound)
				}
			})
		}
	}
}
