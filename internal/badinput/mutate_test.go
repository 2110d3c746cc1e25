package badinput

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMutatedHeaders flips, overwrites and zeroes 1–4 random bytes of the
// tiny I2_S GGUF's header (fixed seed, 300 files) and runs run, tokenize,
// inspect --json and perplexity on each: whatever happens, a failure is
// exactly one stderr line and never the panic guard's "internal error". A
// first, longer run of this found key and tensor names swallowed by a damaged
// length printed raw (kilobytes of binary, several lines) in the reader's
// errors.
func TestMutatedHeaders(t *testing.T) {
	n := 300
	if testing.Short() {
		n = 30
	}
	base := tinyI2SBytes(t)
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(1, 2))
	const header = 8000 // the KVs and tensor infos of the tiny file
	for i := 0; i < n; i++ {
		b := append([]byte(nil), base...)
		for k := 0; k < 1+r.IntN(4); k++ {
			p := r.IntN(header)
			switch r.IntN(3) {
			case 0:
				b[p] = byte(r.IntN(256))
			case 1:
				b[p] ^= 1 << r.IntN(8)
			default:
				b[p] = []byte{0, 0xff, 0x7f, 0x80, 1}[r.IntN(5)]
			}
		}
		p := filepath.Join(dir, "m.gguf")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{runArgs(p), tokenizeArgs(p), {"inspect", "--json", p}, pplArgs(p)} {
			code, _, stderr := runMain(args...)
			if strings.Contains(stderr, "internal error") || (code != 0 && strings.Count(stderr, "\n") != 1) {
				if len(stderr) > 300 {
					stderr = stderr[:300]
				}
				t.Errorf("file %d, %s: exit %d: %q", i, args[0], code, stderr)
			}
		}
	}
}
