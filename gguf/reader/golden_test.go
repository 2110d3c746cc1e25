package reader

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/gguf"
)

// goldenListing is what a gguf_list_*.txt file (made by the reference
// pipeline's gguf-py dump) says about one GGUF.
type goldenListing struct {
	version, nTensors, nKV uint64
	dataStart              uint64 // 0 when the listing does not say
	kvs                    [][2]string
	tensors                []goldenTensor
}

type goldenTensor struct {
	name      string
	typeID    uint32
	typeName  string
	ne        string // "[256, 512]"
	offset    uint64 // relative to the data section
	nbytes    uint64
	shaPrefix string
}

var (
	// tiny-bitnet style: "blk.0.attn_q.weight  type 36 I2_S  ne [256, 256]  offset 390304 stored 16416 nbytes 16416 sha256 e21b…"
	tinyTensorRE = regexp.MustCompile(`^(\S+)\s+type\s+(\d+)\s+(\S+)\s+ne (\[[0-9, ]*\])\s+offset\s+(\d+)\s+stored\s+(\d+)\s+nbytes\s+(\S+)\s+sha256\s+([0-9a-f]+)$`)
	// b158 style: "tensor token_embd.weight  F32  ne=[512, 512] bytes=1048576 off=12832 sha256=68fc…" (absolute offset)
	b158TensorRE = regexp.MustCompile(`^tensor\s+(\S+)\s+(\S+)\s+ne=(\[[0-9, ]*\])\s+bytes=(\d+)\s+off=(\d+)\s+sha256=([0-9a-f]+)$`)
	headerRE     = regexp.MustCompile(`^gguf version (\d+) n_tensors (\d+) n_kv (\d+)$`)
	dataStartRE  = regexp.MustCompile(`^data_start (\d+) alignment (\d+)$`)
)

func parseListing(t *testing.T, path string) goldenListing {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	var g goldenListing
	absolute := false
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		line := sc.Text()
		atoi := func(s string) uint64 {
			n, err := strconv.ParseUint(s, 10, 64)
			if err != nil {
				t.Fatalf("%s: %q: %v", path, line, err)
			}
			return n
		}
		switch {
		case strings.HasPrefix(line, "kv GGUF."):
			k, v, _ := strings.Cut(strings.TrimPrefix(line, "kv GGUF."), " = ")
			n := atoi(strings.Trim(v, "[]"))
			switch k {
			case "version":
				g.version = n
			case "tensor_count":
				g.nTensors = n
			case "kv_count":
				g.nKV = n
			}
		case strings.HasPrefix(line, "kv "):
			k, v, ok := strings.Cut(strings.TrimPrefix(line, "kv "), " = ")
			if !ok {
				t.Fatalf("%s: bad kv line %q", path, line)
			}
			g.kvs = append(g.kvs, [2]string{k, v})
		case headerRE.MatchString(line):
			m := headerRE.FindStringSubmatch(line)
			g.version, g.nTensors, g.nKV = atoi(m[1]), atoi(m[2]), atoi(m[3])
		case dataStartRE.MatchString(line):
			g.dataStart = atoi(dataStartRE.FindStringSubmatch(line)[1])
		case tinyTensorRE.MatchString(line):
			m := tinyTensorRE.FindStringSubmatch(line)
			if m[6] != m[7] && m[7] != "None" {
				t.Fatalf("%s: stored %s != nbytes %s", path, m[6], m[7])
			}
			g.tensors = append(g.tensors, goldenTensor{m[1], uint32(atoi(m[2])), m[3], m[4], atoi(m[5]), atoi(m[6]), m[8]})
		case b158TensorRE.MatchString(line):
			m := b158TensorRE.FindStringSubmatch(line)
			absolute = true
			g.tensors = append(g.tensors, goldenTensor{m[1], math.MaxUint32, m[2], m[3], atoi(m[5]), atoi(m[4]), m[6]})
		case strings.HasPrefix(line, "file "), line == "":
		default:
			t.Fatalf("%s: unrecognised listing line %q", path, line)
		}
	}
	if absolute {
		// Offsets are absolute; make them relative to the first tensor,
		// which sits at the start of the data section.
		g.dataStart = g.tensors[0].offset
		for i := range g.tensors {
			g.tensors[i].offset -= g.dataStart
		}
	}
	return g
}

// pyRepr formats a scalar value as Python's repr does in the listings.
func pyRepr(v gguf.Value) string {
	switch x := v.V.(type) {
	case string:
		return "'" + strings.ReplaceAll(strings.ReplaceAll(x, `\`, `\\`), `'`, `\'`) + "'"
	case bool:
		if x {
			return "True"
		}
		return "False"
	case float32:
		return pyFloat(float64(x))
	case float64:
		return pyFloat(x)
	}
	return fmt.Sprint(v.V)
}

func pyFloat(f float64) string {
	if f == math.Trunc(f) && math.Abs(f) < 1e16 {
		return strconv.FormatFloat(f, 'f', 1, 64)
	}
	s := strconv.FormatFloat(f, 'g', -1, 64)
	return s
}

// listingValue renders v in the listing's style: tiny-bitnet writes scalars
// bare and arrays as "[N items] [first 8]"; b158 wraps numbers in brackets
// and writes arrays as "arr[N]".
func listingValue(v gguf.Value, b158 bool) string {
	if v.Type == gguf.ValueArray {
		items := arrayItems(v)
		if b158 {
			return fmt.Sprintf("arr[%d]", len(items))
		}
		first := items[:min(8, len(items))]
		return fmt.Sprintf("[%d items] [%s]", len(items), strings.Join(first, ", "))
	}
	if s, ok := v.V.(string); ok {
		return s
	}
	if b158 {
		return "[" + pyRepr(v) + "]"
	}
	return pyRepr(v)
}

func arrayItems(v gguf.Value) []string {
	var out []string
	add := func(x any) { out = append(out, pyRepr(gguf.Value{V: x})) }
	switch s := v.V.(type) {
	case []string:
		for _, x := range s {
			add(x)
		}
	case []float32:
		for _, x := range s {
			add(x)
		}
	case []int32:
		for _, x := range s {
			add(x)
		}
	case []uint8:
		for _, x := range s {
			add(x)
		}
	default:
		panic(fmt.Sprintf("arrayItems: %T", v.V))
	}
	return out
}

// TestGoldenFiles parses every GGUF the reference pipeline wrote and checks
// every KV and every tensor (name, type, ne, offset, nbytes, sha256 of the
// stored bytes) against its listing.
func TestGoldenFiles(t *testing.T) {
	cases := []struct{ gguf, listing string }{
		{"tiny-bitnet/gguf/ggml-model-f32.gguf", "tiny-bitnet/outputs/gguf_list_f32.txt"},
		{"tiny-bitnet/gguf/ggml-model-i2_s.gguf", "tiny-bitnet/outputs/gguf_list_i2_s.txt"},
		{"tiny-bitnet/gguf/ggml-model-i2_s-q8embd.gguf", "tiny-bitnet/outputs/gguf_list_i2_s-q8embd.txt"},
		{"tiny-bitnet/gguf/ggml-model-tl1.gguf", "tiny-bitnet/outputs/gguf_list_tl1.txt"},
		{"tiny-bitnet/gguf/ggml-model-tl2.gguf", "tiny-bitnet/outputs/gguf_list_tl2.txt"},
		{"b158-h512/gguf/tiny-b158-h512-f32.gguf", "b158-h512/outputs/gguf_list_tiny-b158-h512-f32.txt"},
	}
	for _, c := range cases {
		t.Run(filepath.Base(c.gguf), func(t *testing.T) {
			t.Parallel()
			root := filepath.Join("..", "..", "testdata", "golden")
			want := parseListing(t, filepath.Join(root, c.listing))
			b158 := strings.HasPrefix(c.listing, "b158")
			f, err := Open(filepath.Join(root, c.gguf))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if uint64(f.Version) != want.version || uint64(len(f.Tensors)) != want.nTensors || uint64(len(f.KVs)) != want.nKV {
				t.Fatalf("version/tensors/kvs = %d/%d/%d, listing says %d/%d/%d", f.Version, len(f.Tensors), len(f.KVs), want.version, want.nTensors, want.nKV)
			}
			if f.DataOffset != want.dataStart || f.Alignment != 32 {
				t.Errorf("data offset %d alignment %d, listing says %d 32", f.DataOffset, f.Alignment, want.dataStart)
			}
			if len(want.kvs) != len(f.KVs) {
				t.Fatalf("listing has %d kvs, file %d", len(want.kvs), len(f.KVs))
			}
			for i, kv := range f.KVs {
				got := listingValue(kv.Value, b158)
				if kv.Key != want.kvs[i][0] || got != want.kvs[i][1] {
					t.Errorf("kv %d: got %s = %s, listing %s = %s", i, kv.Key, got, want.kvs[i][0], want.kvs[i][1])
				}
			}
			if len(want.tensors) != len(f.Tensors) {
				t.Fatalf("listing has %d tensors, file %d", len(want.tensors), len(f.Tensors))
			}
			for i, ti := range f.Tensors {
				w := want.tensors[i]
				ne := strings.ReplaceAll(fmt.Sprint(ti.Ne), " ", ", ")
				if ti.Name != w.name || ti.Type.String() != w.typeName || (w.typeID != math.MaxUint32 && uint32(ti.Type) != w.typeID) || ne != w.ne || ti.Offset != w.offset {
					t.Errorf("tensor %d: got %s %s(%d) ne %s offset %d; listing %s %s(%d) ne %s offset %d",
						i, ti.Name, ti.Type, uint32(ti.Type), ne, ti.Offset, w.name, w.typeName, w.typeID, w.ne, w.offset)
				}
				data, err := f.TensorData(ti.Name)
				if err != nil {
					t.Fatal(err)
				}
				if uint64(len(data)) != w.nbytes {
					t.Errorf("tensor %s: %d bytes, listing %d", ti.Name, len(data), w.nbytes)
				}
				sum := sha256.Sum256(data)
				if got := hex.EncodeToString(sum[:]); !strings.HasPrefix(got, w.shaPrefix) {
					t.Errorf("tensor %s: sha256 %s, listing %s", ti.Name, got[:16], w.shaPrefix)
				}
			}
		})
	}
}
