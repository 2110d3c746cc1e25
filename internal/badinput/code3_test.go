package badinput

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/internal/testutil"
)

// TestCode3Refused: the non-ternary 2-bit code 3 in I2_S and TQ2_0 data
// (byte 0 of blk.0.attn_q.weight set to 0xFF) was decoded as +1 by
// gguf2hf, requant, gpu-pack and verify --ref-gguf; they now refuse the
// tensor in one line naming it, and inspect counts it, as for Q2_0.
func TestCode3Refused(t *testing.T) {
	root := t.TempDir()
	tq2 := filepath.Join(root, "tq2.gguf")
	if code, _, stderr := runMain("requant", tinyI2S, "--outtype", "tq2_0", "--outfile", tq2); code != 0 {
		t.Fatalf("requant tq2_0: %d %s", code, stderr)
	}
	for _, src := range []struct{ name, path, count string }{{"i2_s", tinyI2S, "code3\": 4"}, {"tq2_0", tq2, "code3\": 4"}} {
		bad := filepath.Join(root, "bad-"+src.name+".gguf")
		data := testutil.RewriteGGUF(t, src.path, nil, func(name string, d []byte) []byte {
			if name == "blk.0.attn_q.weight" {
				d = append([]byte(nil), d...)
				d[0] = 0xFF
			}
			return d
		})
		if err := os.WriteFile(bad, data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{
			{"gguf2hf", bad, "--out", filepath.Join(root, "hf-"+src.name)},
			{"requant", bad, "--outtype", "q2_0", "--outfile", filepath.Join(root, "rq-"+src.name+".gguf")},
			{"verify", "--ref-gguf", src.path, bad, "--tokens", "2"},
			{"gpu-pack", bad, "--allow-unsupported-shape", "--out", filepath.Join(root, "gp-"+src.name)},
		} {
			code, _, stderr := runMain(args...)
			if code == 0 {
				t.Errorf("%s %v: exit 0 on code 3", src.name, args[0])
				continue
			}
			checkOneLine(t, stderr, []string{"blk.0.attn_q.weight", "code 3", "not ternary"})
		}
		code, out, stderr := runMain("inspect", "--json", bad)
		if code != 0 || !strings.Contains(out, src.count) {
			t.Errorf("%s inspect: %d %s; want %q in\n%s", src.name, code, stderr, src.count, out)
		}
	}
}
