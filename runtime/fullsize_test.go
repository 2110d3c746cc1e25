package runtime

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const fullsizeDir = "../testdata/golden/fullsize"

// fullsizeCase is one file of testdata/golden/fullsize: the commands that
// rebuild its GGUF (run in the repository root, as the README gives them)
// and the reference's rows.
type fullsizeCase struct {
	gguf   string     // output file name
	hf     string     // dummy output directory (its name is the GGUF's general.name)
	dummy  []string   // dummy arguments before --out
	golden string     // prefix of the .txt and .rows.sha256 files
	nVocab int        // row length
	prompt []int32    // filled from the .txt
	gen    []int32    // filled from the .txt
	rows   [][32]byte // sha256 of every reference row
}

var fullsizeCases = []fullsizeCase{
	{gguf: "large-i2_s.gguf", hf: "large-hf", golden: "large-i2_s_avx2_a", nVocab: 32002,
		dummy: []string{"--preset", "bitnet_b1_58-large", "--tokenizer", "testdata/golden/tiny-bitnet/hf"}},
	{gguf: "2b4t-i2_s.gguf", hf: "2b4t-hf", golden: "2b4t-i2_s_eb60avx2_a", nVocab: 128256,
		dummy: []string{"--preset", "BitNet-b1.58-2B-4T", "--layers", "2", "--tokenizer", "testdata/tokenizers/llama3"}},
}

// fullsizeInputs returns the directory holding both GGUFs:
// BITNET_FULLSIZE_DIR when set (missing files are generated there, so a
// developer can keep them), else a temporary directory. Generating takes
// about a minute and 4 GB of disk. only, when given, names the files
// wanted (fullsizeCase.gguf); the others are not generated.
func fullsizeInputs(t *testing.T, only ...string) string {
	t.Helper()
	dir := os.Getenv("BITNET_FULLSIZE_DIR")
	if dir == "" {
		dir = t.TempDir()
	}
	var bin string
	for _, c := range fullsizeCases {
		if len(only) > 0 && !slices.Contains(only, c.gguf) {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, c.gguf)); err == nil {
			continue
		}
		if bin == "" {
			bin = filepath.Join(t.TempDir(), "bitnet-convert")
			if out, err := exec.Command("go", "build", "-o", bin, "github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert").CombinedOutput(); err != nil {
				t.Fatalf("go build: %v\n%s", err, out)
			}
		}
		hf := filepath.Join(dir, c.hf)
		for _, args := range [][]string{
			append(append([]string{"dummy"}, c.dummy...), "--out", hf, "--force"),
			{"hf2gguf", hf, "--outtype", "i2_s", "--outfile", filepath.Join(dir, c.gguf), "--force"},
		} {
			cmd := exec.Command(bin, args...)
			cmd.Dir = ".." // the repository root: the README's relative --tokenizer paths
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("bitnet-convert %s: %v\n%s", strings.Join(args, " "), err, out)
			}
		}
		os.RemoveAll(hf)
	}
	return dir
}

// readFullsizeGolden fills c.prompt, c.gen and c.rows from the golden files.
func readFullsizeGolden(t *testing.T, c *fullsizeCase) {
	t.Helper()
	txt, err := os.ReadFile(filepath.Join(fullsizeDir, c.golden+".txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(txt), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || (f[0] != "prompt_ids" && f[0] != "gen_ids") {
			continue
		}
		var ids []int32
		for _, s := range f[1:] {
			v, err := strconv.Atoi(s)
			if err != nil {
				t.Fatalf("%s.txt: %q", c.golden, line)
			}
			ids = append(ids, int32(v))
		}
		if f[0] == "prompt_ids" {
			c.prompt = ids
		} else {
			c.gen = ids
		}
	}
	f, err := os.Open(filepath.Join(fullsizeDir, c.golden+".rows.sha256"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		h, err := hex.DecodeString(strings.Fields(sc.Text())[0])
		if err != nil || len(h) != 32 {
			t.Fatalf("%s.rows.sha256: bad line %q", c.golden, sc.Text())
		}
		c.rows = append(c.rows, [32]byte(h))
	}
	if len(c.prompt) == 0 || len(c.rows) != len(c.prompt)+len(c.gen) {
		t.Fatalf("%s: %d prompt ids, %d generated, %d rows", c.golden, len(c.prompt), len(c.gen), len(c.rows))
	}
}

// rowHash is the sha256 of a row as little-endian float32 (the reference's
// dump format).
func rowHash(row []float32) [32]byte {
	b := make([]byte, 4*len(row))
	for i, v := range row {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return sha256.Sum256(b)
}

// runBatched is runSeq with the prompt evaluated by one EvalBatch.
func runBatched(t testing.TB, m *Model, prompt []int32, n int) (promptRows, genRows [][]float32, gen []int32) {
	t.Helper()
	s := m.NewSession(len(prompt) + n)
	rows, err := s.EvalBatch(prompt, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		promptRows = append(promptRows, append([]float32(nil), r...))
	}
	last := promptRows[len(promptRows)-1]
	for i := 0; i < n; i++ {
		genRows = append(genRows, last)
		tok := Argmax(last)
		gen = append(gen, tok)
		if i == n-1 {
			break
		}
		l, err := s.Eval(tok)
		if err != nil {
			t.Fatal(err)
		}
		last = append([]float32(nil), l...)
	}
	return promptRows, genRows, gen
}

// TestFullsizeGolden reproduces testdata/golden/fullsize bit for bit: the
// bitnet_b1_58-large-shaped I2_S file against bitnet.cpp build A and the
// 2-layer 2B-4T-shaped one (arch bitnet-b1.58) against build B, every
// prompt and generated row, with the prompt fed token by token and as one
// batch, at 1, 2 and 3 threads. Heavy (builds 2 GB of inputs unless
// BITNET_FULLSIZE_DIR has them): runs with BITNET_HEAVY=1 (.ci/run).
func TestFullsizeGolden(t *testing.T) {
	if testing.Short() || (os.Getenv("BITNET_HEAVY") == "" && os.Getenv("BITNET_FULLSIZE_DIR") == "") {
		t.Skip("set BITNET_HEAVY=1 (or BITNET_FULLSIZE_DIR) to run the full-size goldens")
	}
	dir := fullsizeInputs(t)
	for i := range fullsizeCases {
		c := fullsizeCases[i]
		t.Run(c.gguf, func(t *testing.T) {
			readFullsizeGolden(t, &c)
			for _, run := range []struct {
				name    string
				threads int
				f       func(testing.TB, *Model, []int32, int) ([][]float32, [][]float32, []int32)
			}{
				{"token by token, 2 threads", 2, runSeq},
				{"batched, 2 threads", 2, runBatched},
				{"batched, 1 thread", 1, runBatched},
				{"batched, 3 threads", 3, runBatched},
			} {
				m := openModel(t, filepath.Join(dir, c.gguf), run.threads)
				if m.Params.NVocab != c.nVocab {
					t.Fatalf("vocabulary %d, golden rows of %d", m.Params.NVocab, c.nVocab)
				}
				p, g, gen := run.f(t, m, c.prompt, len(c.gen))
				if fmt.Sprint(gen) != fmt.Sprint(c.gen) {
					t.Errorf("%s: generated %v, want %v", run.name, gen, c.gen)
				}
				bad := 0
				for r, row := range append(p, g...) {
					if rowHash(row) != c.rows[r] {
						bad++
						t.Errorf("%s: row %d differs from the reference (argmax %d %v)", run.name, r, Argmax(row), row[Argmax(row)])
					}
				}
				if bad == 0 {
					t.Logf("%s: all %d rows bitwise equal", run.name, len(c.rows))
				}
			}
		})
	}
}
