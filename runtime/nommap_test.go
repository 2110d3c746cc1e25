package runtime

import (
	"math"
	"path/filepath"
	"testing"
)

// TestOpenNoMmap: Options.NoMmap reads the golden tiny I2_S model into
// memory, and its logits equal the mapped model's bit for bit (the weights
// are the same bytes; only where they live differs).
func TestOpenNoMmap(t *testing.T) {
	path := filepath.Join(tinyDir, "gguf/ggml-model-i2_s.gguf")
	prompt, _ := goldenIDs(t, filepath.Join(tinyDir, "outputs", "i2s_hello_seq_t1.txt"))
	var rows [2][][]float32
	for i, noMmap := range []bool{false, true} {
		m, f, err := Open(path, Options{Threads: 2, NoMmap: noMmap})
		if err != nil {
			t.Fatal(err)
		}
		rows[i], _, _ = runSeq(t, m, prompt, 4)
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	for r := range rows[0] {
		for j, v := range rows[0][r] {
			if math.Float32bits(v) != math.Float32bits(rows[1][r][j]) {
				t.Fatalf("row %d logit %d: mapped %v, in memory %v", r, j, v, rows[1][r][j])
			}
		}
	}
	if _, _, err := Open("nope.gguf", Options{NoMmap: true}); err == nil {
		t.Fatal("a missing file opened")
	}
}
