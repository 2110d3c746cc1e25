package quantize_test

import (
	"bufio"
	"encoding/binary"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/hf"
)

const (
	goldenHF      = "../testdata/golden/tiny-bitnet/hf"
	goldenI2S     = "../testdata/golden/tiny-bitnet/gguf/ggml-model-i2_s.gguf"
	goldenI2SList = "../testdata/golden/tiny-bitnet/outputs/gguf_list_i2_s.txt"
	goldenF32     = "../testdata/golden/tiny-bitnet/gguf/ggml-model-f32.gguf"
	goldenF32List = "../testdata/golden/tiny-bitnet/outputs/gguf_list_f32.txt"
)

// projections maps the 14 ternarized HF tensors of the tiny golden model to
// their GGUF names (spec §5.5).
var projections = func() [][2]string {
	var out [][2]string
	for _, l := range []string{"0", "1"} {
		for _, p := range [][2]string{
			{"self_attn.q_proj", "attn_q"}, {"self_attn.k_proj", "attn_k"},
			{"self_attn.v_proj", "attn_v"}, {"self_attn.o_proj", "attn_output"},
			{"mlp.gate_proj", "ffn_gate"}, {"mlp.up_proj", "ffn_up"}, {"mlp.down_proj", "ffn_down"},
		} {
			out = append(out, [2]string{"model.layers." + l + "." + p[0] + ".weight", "blk." + l + "." + p[1] + ".weight"})
		}
	}
	return out
}()

// goldenTensor is one tensor's bytes from a golden GGUF, located with the
// offsets listed in the gguf_list_*.txt dump (data_start + offset).
type goldenTensor struct {
	data []byte
	ne   []uint64
}

func readGoldenGGUF(t testing.TB, ggufPath, listPath string) map[string]goldenTensor {
	t.Helper()
	file, err := os.ReadFile(ggufPath)
	if err != nil {
		t.Fatal(err)
	}
	lf, err := os.Open(listPath)
	if err != nil {
		t.Fatal(err)
	}
	defer lf.Close()
	out := map[string]goldenTensor{}
	var dataStart uint64
	sc := bufio.NewScanner(lf)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "data_start" {
			dataStart, _ = strconv.ParseUint(f[1], 10, 64)
			continue
		}
		if len(f) < 10 || f[1] != "type" {
			continue
		}
		// name type N NAME ne [a, b] offset O stored S ...
		line := sc.Text()
		i := strings.Index(line, "[")
		j := strings.Index(line, "]")
		var ne []uint64
		for _, s := range strings.Split(line[i+1:j], ",") {
			v, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
			if err != nil {
				t.Fatalf("%s: bad ne in %q", listPath, line)
			}
			ne = append(ne, v)
		}
		rest := strings.Fields(line[j+1:])
		off, _ := strconv.ParseUint(rest[1], 10, 64)
		size, _ := strconv.ParseUint(rest[3], 10, 64)
		out[f[0]] = goldenTensor{data: file[dataStart+off : dataStart+off+size], ne: ne}
	}
	if dataStart == 0 || len(out) != 24 {
		t.Fatalf("%s: parsed data_start %d and %d tensors, want 24", listPath, dataStart, len(out))
	}
	return out
}

// readMaster returns the bf16 master weights of an HF tensor as float32.
func readMaster(t testing.TB, ck *hf.Checkpoint, name string) []float32 {
	t.Helper()
	ref, ok := ck.Lookup(name)
	if !ok {
		t.Fatalf("golden checkpoint has no %s", name)
	}
	d, err := ck.Read(ref)
	if err != nil {
		t.Fatal(err)
	}
	x, err := d.Float32s(nil)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func goldenScale(g goldenTensor, n int) float32 {
	return math.Float32frombits(binary.LittleEndian.Uint32(g.data[n/4:]))
}
