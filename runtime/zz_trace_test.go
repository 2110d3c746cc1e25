package runtime

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"testing"
)

func TestZZTrace(t *testing.T) {
	path, out := os.Getenv("ZZ_MODEL"), os.Getenv("ZZ_OUT")
	if path == "" {
		t.Skip()
	}
	m := openModelOpts(t, path, Options{Threads: 1, Arith: ArithMainline})
	s := m.NewSession(64)
	pos := 0
	s.trace = func(name string, l int, v []float32) {
		b := make([]byte, 0, 4*len(v))
		for _, x := range v {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
		}
		os.WriteFile(fmt.Sprintf("%s/pos%03d.%s-%d.f32", out, pos, name, l), b, 0o644)
	}
	for i, id := range []int32{1, 100, 200} {
		pos = i
		if _, err := s.Eval(id); err != nil {
			t.Fatal(err)
		}
		b := make([]byte, 0)
		for _, x := range s.Hidden() {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
		}
		os.WriteFile(fmt.Sprintf("%s/pos%03d.result_norm.f32", out, pos), b, 0o644)
	}
}
