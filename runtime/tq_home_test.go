package runtime

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/convert"
)

// tqHomeSHA256 are the sha256 of the TQ files our hf2gguf and requant wrote
// that bitnet.cpp build A's oracle-dump ran (testdata/golden/tq-home/README.md:
// the golden TQ ids and bit-identical logits, both prompts).
var tqHomeSHA256 = map[string]string{
	"ours-hf2gguf-tq2_0": "a87848e2dcac27c6bdb2b6061ffa8a4a656a385a8c35a8afaf5fd64d0d7e7521",
	"ours-requant-tq2_0": "388139304e90f34bed2bde2ab0af6a4035e74ed18ba8c32b3cf5ba713f7637c9",
	"ours-hf2gguf-tq1_0": "0b02303ae1dcd14f4841ab00e7fccbf48bdf5b363f8c3445126481764ca28dc2",
	"ours-requant-tq1_0": "8da1907ca7f09883dd842cb351e4354e9fd55f7620373542f43ae1dfc71b87ed",
}

// TestTQHomeFiles: `hf2gguf --outtype tq{1,2}_0` of the golden checkpoint
// and `requant --outtype tq{1,2}_0` of bitnet.cpp's golden I2_S file still
// write the bytes bitnet.cpp build A ran (its oracle-dump gave the golden
// TQ ids, recorded in testdata/golden/tq-home), and our runtime gives the
// golden TQ logits on them bit for bit.
func TestTQHomeFiles(t *testing.T) {
	dir := t.TempDir()
	for _, typ := range []convert.OutType{convert.OutTQ2_0, convert.OutTQ1_0} {
		hfOut := filepath.Join(dir, "ours-hf2gguf-"+string(typ)+".gguf")
		if _, err := convert.ConvertDir(context.Background(), filepath.Join(tinyDir, "hf"), hfOut, false, false, convert.Options{OutType: typ}); err != nil {
			t.Fatal(err)
		}
		rqOut := filepath.Join(dir, "ours-requant-"+string(typ)+".gguf")
		if _, err := convert.RequantFile(context.Background(), filepath.Join(tinyDir, "gguf/ggml-model-i2_s.gguf"), rqOut, false, false, convert.RequantOptions{OutType: typ}); err != nil {
			t.Fatal(err)
		}
		for _, path := range []string{hfOut, rqOut} {
			name := checkHomeFile(t, path, tqHomeSHA256, "bitnet.cpp")
			for _, prompt := range []string{"hello", "ids"} {
				golden := filepath.Join(ecoDir, fmt.Sprintf("tiny-bitnet-%s_%s_seq_t1", typ, prompt))
				_, want := goldenIDs(t, golden+".txt")
				checkHomeRun(t, filepath.Join("../testdata/golden/tq-home", name+"."+prompt+".oracle-dump.txt"), want)
				checkGoldenBits(t, openModel(t, path, 1), golden, runSeq)
			}
		}
	}
}

// checkHomeFile checks that the file at path still has the sha256 recorded
// in shas (by file name without .gguf) for the file the home runtime ran,
// and returns that name.
func checkHomeFile(t *testing.T, path string, shas map[string]string, runtime string) string {
	t.Helper()
	name := strings.TrimSuffix(filepath.Base(path), ".gguf")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprintf("%x", sha256.Sum256(b)); got != shas[name] {
		t.Errorf("%s: sha256 %s, the file %s ran was %s", name, got, runtime, shas[name])
	}
	return name
}

// checkHomeRun checks that the oracle-dump output recorded in rec (its
// stdout) generated exactly the ids want.
func checkHomeRun(t *testing.T, rec string, want []int32) {
	t.Helper()
	b, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "gen: "+strings.Trim(fmt.Sprint(want), "[]")+"\n") {
		t.Errorf("%s: recorded run %q lacks the golden ids %v", rec, b, want)
	}
}
