package runtime

import (
	"fmt"
	"testing"
)

func TestZZDebug(t *testing.T) {
	for _, a := range []Arith{ArithBitnetCpp, ArithMainline} {
		m, f, err := Open("/work/oracle/mainline/ref/tiny-tq2_0.gguf", Options{Threads: 1, Arith: a})
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		s := m.NewSession(64)
		s.trace = func(name string, l int, v []float32) {
			if l == 0 {
				fmt.Println(a, name, v[:4])
			}
		}
		r, _ := s.Eval(1)
		fmt.Println(a, m.Arith(), r[:4])
	}
}
