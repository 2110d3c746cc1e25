package badinput

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli"
)

// tinyDir is the golden tiny-bitnet checkpoint (bf16, hidden 256, 2 layers,
// SentencePiece tokenizer.model); every hf2gguf case starts from a copy.
const tinyDir = "../../testdata/golden/tiny-bitnet/hf"

// tinyI2S is the reference I2_S GGUF of tinyDir, the base of the GGUF cases.
const tinyI2S = "../../testdata/golden/tiny-bitnet/gguf/ggml-model-i2_s.gguf"

// copyTiny copies the tiny checkpoint into dst (created) and returns dst.
func copyTiny(t *testing.T, dst string) string {
	t.Helper()
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"config.json", "model.safetensors", "tokenizer.model", "tokenizer_config.json"} {
		copyFile(t, filepath.Join(tinyDir, name), filepath.Join(dst, name))
	}
	return dst
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dst, b)
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// stFile is a safetensors file split into its JSON header (decoded with
// json.Number so offsets survive) and its data section.
type stFile struct {
	hdr  map[string]any
	data []byte
}

func readST(t *testing.T, path string) *stFile {
	t.Helper()
	b := readFile(t, path)
	n := binary.LittleEndian.Uint64(b)
	dec := json.NewDecoder(bytes.NewReader(b[8 : 8+n]))
	dec.UseNumber()
	st := &stFile{}
	if err := dec.Decode(&st.hdr); err != nil {
		t.Fatal(err)
	}
	st.data = b[8+n:]
	return st
}

// tensor returns the header entry of name.
func (st *stFile) tensor(t *testing.T, name string) map[string]any {
	t.Helper()
	e, ok := st.hdr[name].(map[string]any)
	if !ok {
		t.Fatalf("no tensor %q in the fixture", name)
	}
	return e
}

// offsets returns the data_offsets of name.
func (st *stFile) offsets(t *testing.T, name string) (uint64, uint64) {
	t.Helper()
	o := st.tensor(t, name)["data_offsets"].([]any)
	b, _ := o[0].(json.Number).Int64()
	e, _ := o[1].(json.Number).Int64()
	return uint64(b), uint64(e)
}

func (st *stFile) write(t *testing.T, path string) {
	t.Helper()
	h, err := json.Marshal(st.hdr)
	if err != nil {
		t.Fatal(err)
	}
	for len(h)%8 != 0 {
		h = append(h, ' ')
	}
	writeFile(t, path, rawST(uint64(len(h)), h, st.data))
}

// rawST assembles a safetensors file from a header length (which need not
// match), header bytes and data.
func rawST(n uint64, hdr, data []byte) []byte {
	b := binary.LittleEndian.AppendUint64(nil, n)
	b = append(b, hdr...)
	return append(b, data...)
}

// editST rewrites dir/model.safetensors through edit.
func editST(t *testing.T, dir string, edit func(st *stFile)) {
	t.Helper()
	p := filepath.Join(dir, "model.safetensors")
	st := readST(t, p)
	edit(st)
	st.write(t, p)
}

// ggufB builds GGUF bytes by hand (little-endian, version 3), for headers
// no writer would produce.
type ggufB struct{ b []byte }

func newGGUF(nTensors, nKV uint64) *ggufB {
	g := &ggufB{b: []byte("GGUF")}
	return g.u32(3).u64(nTensors).u64(nKV)
}

func (g *ggufB) u32(v uint32) *ggufB { g.b = binary.LittleEndian.AppendUint32(g.b, v); return g }
func (g *ggufB) u64(v uint64) *ggufB { g.b = binary.LittleEndian.AppendUint64(g.b, v); return g }
func (g *ggufB) str(s string) *ggufB { g.u64(uint64(len(s))); g.b = append(g.b, s...); return g }

// kvString appends a string KV (value type 8).
func (g *ggufB) kvString(k, v string) *ggufB { return g.str(k).u32(8).str(v) }

// tensor appends a tensor info.
func (g *ggufB) tensor(name string, typ uint32, off uint64, ne ...uint64) *ggufB {
	g.str(name).u32(uint32(len(ne)))
	for _, n := range ne {
		g.u64(n)
	}
	return g.u32(typ).u64(off)
}

// pad pads to the 32-byte default alignment and appends n zero data bytes.
func (g *ggufB) pad(n int) []byte {
	for len(g.b)%32 != 0 {
		g.b = append(g.b, 0)
	}
	return append(g.b, make([]byte, n)...)
}

// snapshot maps every path under root (relative) to a digest of what it is:
// a regular file's sha256, a symlink's target, "dir" for directories. Two
// equal snapshots mean nothing was created, removed or changed.
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	snap := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			snap[rel] = "link:" + target
		case d.IsDir():
			snap[rel] = "dir"
		case d.Type().IsRegular():
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			h := sha256.New()
			_, err = io.Copy(h, f)
			f.Close()
			if err != nil {
				return err
			}
			snap[rel] = hex.EncodeToString(h.Sum(nil))
		default:
			snap[rel] = d.Type().String()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// diffSnapshots describes what changed between two snapshots ("" for
// nothing).
func diffSnapshots(before, after map[string]string) string {
	var d []string
	for p, h := range before {
		switch a, ok := after[p]; {
		case !ok:
			d = append(d, "removed "+p)
		case a != h:
			d = append(d, "changed "+p)
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			d = append(d, "created "+p)
		}
	}
	sort.Strings(d)
	return strings.Join(d, "; ")
}

// runMain runs the CLI as a user would and returns the exit code, stdout
// and stderr.
func runMain(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := cli.Main(args, &out, &errb)
	return code, out.String(), errb.String()
}

// checkOneLine fails unless stderr is exactly one line that starts with the
// program name and contains every string of want.
func checkOneLine(t *testing.T, stderr string, want []string) {
	t.Helper()
	if !strings.HasSuffix(stderr, "\n") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("stderr is not one line:\n%s", stderr)
	}
	if !strings.HasPrefix(stderr, "bitnet-convert: ") {
		t.Errorf("stderr does not start with the program name: %q", stderr)
	}
	for _, w := range want {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr %q does not name %q", strings.TrimSpace(stderr), w)
		}
	}
}

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
	binDir    string
)

// buildBinary builds cmd/bitnet-convert once per test run and returns its path.
func buildBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "badinput-bin-")
		if buildErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "bitnet-convert")
		out, err := exec.Command("go", "build", "-o", binPath, "github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	for _, d := range []string{binDir, largeDir} {
		if d != "" {
			os.RemoveAll(d)
		}
	}
	os.Exit(code)
}
