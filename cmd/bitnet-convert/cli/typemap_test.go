package cli

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/format"
	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
	"github.com/bitnet-convert/bitnet-convert/gguf/writer"
	"github.com/bitnet-convert/bitnet-convert/internal/testutil"
)

// rawTensor is one tensor of a hand-made file: any stored type id, any
// bytes (the layouts our writer does not write).
type rawTensor struct {
	name string
	ne   []uint64
	id   uint32
	data []byte
}

// rawGGUF writes a GGUF holding ts with their stored ids: each tensor goes
// through our writer as I8 with ne[0] = its bytes per row (so the offsets
// are the aligned sums of the data sizes, as every writer lays them out),
// then its tensor info is patched to the real ne[0] and type id.
func rawGGUF(t *testing.T, kvs []gguf.KV, ts []rawTensor) []byte {
	t.Helper()
	infos := make([]gguf.TensorInfo, len(ts))
	for i, r := range ts {
		rows := uint64(1)
		for _, d := range r.ne[1:] {
			rows *= d
		}
		ne := append([]uint64{uint64(len(r.data)) / rows}, r.ne[1:]...)
		infos[i] = gguf.TensorInfo{Name: r.name, Ne: ne, Type: gguf.TypeI8}
	}
	var buf bytes.Buffer
	w, err := writer.New(&buf, kvs, infos, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range ts {
		if err := w.WriteTensor(i, r.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	out := buf.Bytes()
	for _, r := range ts {
		key := binary.LittleEndian.AppendUint64(nil, uint64(len(r.name)))
		key = append(key, r.name...)
		at := bytes.Index(out[:w.HeaderSize()], key)
		if at < 0 {
			t.Fatalf("tensor info %s not found", r.name)
		}
		p := at + len(key) + 4 // n_dims
		binary.LittleEndian.PutUint64(out[p:], r.ne[0])
		binary.LittleEndian.PutUint32(out[p+8*len(r.ne):], r.id)
	}
	return out
}

// blocks returns n blocks of bs bytes whose first two bytes are the f16 d
// 0.5 and the rest code 0x99 (codes 1, 2, 1, 2: 0, +1, 0, +1 in the Q2_0
// codec), for the hand-made layouts.
func blocks(n, bs int) []byte {
	b := make([]byte, n*bs)
	for i := 0; i < n; i++ {
		b[i*bs], b[i*bs+1] = 0x00, 0x38
		for j := 2; j < bs; j++ {
			b[i*bs+j] = 0x99
		}
	}
	return b
}

func writeTemp(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestTypeIDMap (issue 21, acceptance e): hand-made files for every id and
// layout of the 2026 type-id map; inspect names each from the data: mainline
// NVFP4 (40) and Q1_0 (41), mainline Q2_0 g64 and Prism's legacy g128 under
// the same id 42 (arch llama), Prism PQ2_0 (142) and PTQ1_0 (143), an id-41
// tensor whose span fits no documented layout (AngelSlim's 2-bit layout is
// unsized) and an id-42 tensor too small to tell g64 from g128.
func TestTypeIDMap(t *testing.T) {
	dir := t.TempDir()
	kvs := []gguf.KV{{Key: "general.architecture", Value: gguf.String("llama")}}
	norm := rawTensor{"output_norm.weight", []uint64{2048}, 0, make([]byte, 4*2048)}
	for _, c := range []struct {
		name string
		ts   rawTensor
		want []string
	}{
		{"nvfp4", rawTensor{"blk.0.attn_q.weight", []uint64{2048, 2}, 40, blocks(64, 36)}, []string{"NVFP4(40)", "mainline NVFP4, 36 B per 64"}},
		{"q1_0", rawTensor{"blk.0.attn_q.weight", []uint64{2048, 2}, 41, blocks(32, 18)}, []string{"Q1_0(41)", "mainline Q1_0, 18 B per 128"}},
		{"q2_0-g64", rawTensor{"blk.0.attn_q.weight", []uint64{2048, 2}, 42, blocks(64, 18)}, []string{"Q2_0(42)", "mainline Q2_0 g64, 18 B per 64", "code 3 (+2·d, not ternary): 0"}},
		{"q2_0-g128", rawTensor{"blk.0.attn_q.weight", []uint64{2048, 2}, 42, blocks(32, 34)}, []string{"Q2_0_g128(42)", "Prism legacy Q2_0 g128 under id 42, 34 B per 128"}},
		{"pq2_0", rawTensor{"blk.0.attn_q.weight", []uint64{2048, 2}, 142, blocks(32, 34)}, []string{"PQ2_0(142)", "Prism PQ2_0, 34 B per 128"}},
		{"ptq1_0", rawTensor{"blk.0.attn_q.weight", []uint64{2048, 2}, 143, blocks(32, 28)}, []string{"PTQ1_0(143)", "Prism PTQ1_0, 28 B per 128 (scale last)"}},
		{"angelslim", rawTensor{"blk.0.attn_q.weight", []uint64{2048, 2}, 41, blocks(32, 40)}, []string{"id 41 (layout unknown)  ", "type 41: layout unknown (1280 bytes for ne [2048 2]; Q1_0 18 B per 128 = 576 bytes)"}},
		{"ambiguous", rawTensor{"blk.0.attn_q.weight", []uint64{128, 1}, 42, blocks(2, 18)}, []string{"Q2_0(42)", "type 42: layout ambiguous (64 bytes for ne [128 1] fit Q2_0 18 B per 64 = 36 bytes or Q2_0_g128 34 B per 128 = 34 bytes)"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := writeTemp(t, dir, c.name+".gguf", rawGGUF(t, kvs, []rawTensor{c.ts, norm}))
			var out, errb bytes.Buffer
			if code := Main([]string{"inspect", p}, &out, &errb); code != 0 {
				t.Fatalf("inspect: exit %d: %s", code, errb.String())
			}
			line := ""
			for _, l := range strings.Split(out.String(), "\n") {
				if strings.Contains(l, c.ts.name) {
					line = l
				}
			}
			for _, w := range c.want {
				if !strings.Contains(line, w) {
					t.Errorf("inspect line %q lacks %q", line, w)
				}
			}
			// the id once came twice: "type 41 (layout unknown)(41)"
			if strings.Contains(line, ")(") {
				t.Errorf("inspect line %q names the type id twice", line)
			}
		})
	}
}

// tinyQ2_0 converts the golden tiny model to Q2_0 and returns the path and
// the parsed file.
func tinyQ2_0(t *testing.T, dir string) (string, *reader.File) {
	t.Helper()
	p := filepath.Join(dir, "tiny-q2_0.gguf")
	var out, errb bytes.Buffer
	if code := Main([]string{"hf2gguf", golden, "--outtype", "q2_0", "--outfile", p, "--model-name", "tiny"}, &out, &errb); code != 0 {
		t.Fatalf("hf2gguf: %s", errb.String())
	}
	f, err := reader.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return p, f
}

// rewrite is f's KVs and tensors as raw tensors, each passed through fn.
func rewrite(t *testing.T, f *reader.File, fn func(ti gguf.TensorInfo, data []byte) rawTensor) []byte {
	t.Helper()
	var ts []rawTensor
	for _, ti := range f.Tensors {
		data, err := f.TensorData(ti.Name)
		if err != nil {
			t.Fatal(err)
		}
		ts = append(ts, fn(ti, data))
	}
	return rawGGUF(t, f.KVs, ts)
}

// TestRequantG128Lossless (acceptance e): Prism's legacy g128 Q2_0 under id
// 42 (made here from our Q2_0 file of the golden model by
// testutil.G128FromQ2_0: each pair of 64 blocks, which carry the same d,
// becomes one 128 block; mainline-home records mainline's run of the
// requant result) is told apart by
// its size, and requant turns it into mainline Q2_0 losslessly: every code
// identical and each 128 group's d in both of its 64 halves. The result
// runs.
func TestRequantG128Lossless(t *testing.T) {
	dir := t.TempDir()
	q2, _ := tinyQ2_0(t, dir)
	in := testutil.G128FromQ2_0(t, q2, filepath.Join(dir, "tiny-g128.gguf"))
	var out, errb bytes.Buffer
	if code := Main([]string{"inspect", in}, &out, &errb); code != 0 || !strings.Contains(out.String(), "Q2_0_g128(42)") {
		t.Fatalf("inspect: exit %d %s\n%s", code, errb.String(), out.String())
	}
	res := filepath.Join(dir, "back-q2_0.gguf")
	if code := Main([]string{"requant", in, "--outtype", "q2_0", "--outfile", res}, &out, &errb); code != 0 {
		t.Fatalf("requant: %s", errb.String())
	}
	src, err := reader.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	got, err := reader.Open(res)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Close()
	n := 0
	for _, ti := range src.Tensors {
		if ti.Type != gguf.TypeQ2_0G128 {
			continue
		}
		n++
		a, _ := src.TensorData(ti.Name)
		b, err := got.TensorData(ti.Name)
		if err != nil {
			t.Fatal(err)
		}
		if g, _ := got.Tensor(ti.Name); g.Type != gguf.TypeQ2_0 {
			t.Fatalf("%s: type %s", ti.Name, g.Type)
		}
		k, m := int(ti.Ne[0]), int(ti.Ne[1])
		ca, cb := make([]int8, k*m), make([]int8, k*m)
		sa, err := (format.Q2_0G128{}).Decode(ca, a, k, m)
		if err != nil {
			t.Fatal(err)
		}
		sb, err := (format.Q2_0{}).Decode(cb, b, k, m)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(int8s(ca), int8s(cb)) {
			t.Errorf("%s: codes differ", ti.Name)
		}
		for g := range sb {
			if sb[g] != sa[g/2] {
				t.Fatalf("%s: block %d d = %v, want the g128 group's %v", ti.Name, g, sb[g], sa[g/2])
			}
		}
	}
	if n != 14 {
		t.Fatalf("%d g128 tensors, want 14", n)
	}
	if code := Main([]string{"run", "-m", res, "-p", "Hello", "-n", "2"}, &out, &errb); code != 0 {
		t.Errorf("run on the requant result: %s", errb.String())
	}
}

func int8s(c []int8) []byte {
	b := make([]byte, len(c))
	for i, v := range c {
		b[i] = byte(v)
	}
	return b
}

// TestPrismRefused (acceptance e): a model whose blk.0.attn_q is Prism's
// PQ2_0 (142) or PTQ1_0 (143) is refused by requant, run and verify, each
// with one line naming the tensor and the Hadamard transform.
func TestPrismRefused(t *testing.T) {
	dir := t.TempDir()
	_, f := tinyQ2_0(t, dir)
	for _, c := range []struct {
		id uint32
		bs int
	}{{142, 34}, {143, 28}} {
		file := writeTemp(t, dir, "prism.gguf", rewrite(t, f, func(ti gguf.TensorInfo, data []byte) rawTensor {
			if ti.Name == "blk.0.attn_q.weight" {
				return rawTensor{ti.Name, ti.Ne, c.id, blocks(int(ti.Ne[0]*ti.Ne[1]/128), c.bs)}
			}
			return rawTensor{ti.Name, ti.Ne, ti.Type.ID(), data}
		}))
		for _, args := range [][]string{
			{"requant", file, "--outtype", "tq2_0", "--outfile", filepath.Join(dir, "x.gguf")},
			{"run", "-m", file, "-p", "Hello", "-n", "1"},
			{"verify", "--gguf", file},
		} {
			var out, errb bytes.Buffer
			code := Main(args, &out, &errb)
			lines := strings.Split(strings.TrimSpace(errb.String()), "\n")
			last := lines[len(lines)-1]
			if code != 1 || !strings.Contains(last, "blk.0.attn_q.weight") || !strings.Contains(last, "Hadamard") || !strings.Contains(last, fmt.Sprintf("(id %d,", c.id)) {
				t.Errorf("%s on id %d: exit %d, stderr %q", args[0], c.id, code, errb.String())
			}
		}
	}
}

// TestRequantRefusesCode3: a Q2_0 tensor holding code 3 (+2·d) is not
// ternary; inspect counts it and requant refuses it in one line naming the
// tensor.
func TestRequantRefusesCode3(t *testing.T) {
	dir := t.TempDir()
	_, f := tinyQ2_0(t, dir)
	file := writeTemp(t, dir, "code3.gguf", rewrite(t, f, func(ti gguf.TensorInfo, data []byte) rawTensor {
		if ti.Name == "blk.1.ffn_up.weight" {
			data = append([]byte(nil), data...)
			data[18+2] = 0xFF // four codes 3 in block 1
		}
		return rawTensor{ti.Name, ti.Ne, ti.Type.ID(), data}
	}))
	var out, errb bytes.Buffer
	if code := Main([]string{"inspect", file}, &out, &errb); code != 0 || !strings.Contains(out.String(), "code 3 (+2·d, not ternary): 4") {
		t.Errorf("inspect: exit %d %s", code, errb.String())
	}
	code := Main([]string{"requant", file, "--outtype", "i2_s", "--outfile", filepath.Join(dir, "x.gguf")}, &out, &errb)
	if last := strings.TrimSpace(errb.String()); code != 1 || strings.Count(last, "\n") != 0 || !strings.Contains(last, "tensor blk.1.ffn_up.weight") || !strings.Contains(last, "code 3") {
		t.Errorf("requant: exit %d, stderr %q", code, errb.String())
	}
}
