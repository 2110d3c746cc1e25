package torchpt

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
)

func bf16(vals ...float32) []byte {
	var b []byte
	for _, v := range vals {
		b = binary.LittleEndian.AppendUint16(b, uint16(math.Float32bits(v)>>16))
	}
	return b
}

// smallDict is the state dict testdata/torch113_small.pt holds (see
// testdata/README.md for the torch commands that wrote it).
func smallDict() []Tensor {
	var a []float32
	for i := range 12 {
		a = append(a, float32(i))
	}
	ts := []Tensor{
		{Name: "a.weight", DType: BFloat16, Shape: []int64{3, 4}, Data: rawData(bf16(a...))},
		{Name: "b", DType: Int8, Shape: []int64{3}, Data: rawData([]byte{1, 0xfe, 3})},
		{Name: "c.weight_scale", DType: BFloat16, Shape: []int64{4}, Data: rawData(bf16(0.5, 0.25, 0, 0))},
	}
	for i := range 10 {
		ts = append(ts, Tensor{Name: "x" + string(rune('0'+i)), DType: BFloat16, Shape: []int64{2}, Data: rawData(bf16(float32(i), float32(i)))})
	}
	return ts
}

// TestWriteMatchesTorch writes the dict torch 1.13 saved into
// testdata/torch113_small.pt and wants the same bytes (the zip container,
// the pickle with its memo numbering, the string order of the data
// records), leaving out the byteorder record as torch 1.13 does.
func TestWriteMatchesTorch(t *testing.T) {
	want, err := os.ReadFile("testdata/torch113_small.pt")
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if err := write(&got, "small_file", smallDict(), false); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		n := 0
		for n < min(got.Len(), len(want)) && got.Bytes()[n] == want[n] {
			n++
		}
		t.Fatalf("output differs from torch's at byte %d (len %d, torch %d)", n, got.Len(), len(want))
	}
}

// TestReadTorchFile reads the file torch wrote: names in dict order,
// dtypes, shapes and the tensor bytes.
func TestReadTorchFile(t *testing.T) {
	f, err := Open("testdata/torch113_small.pt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Archive != "small_file" {
		t.Errorf("archive %q, want small_file", f.Archive)
	}
	want := smallDict()
	if len(f.Tensors) != len(want) {
		t.Fatalf("%d tensors, want %d", len(f.Tensors), len(want))
	}
	for i, ti := range f.Tensors {
		w := want[i]
		if ti.Name != w.Name || ti.DType != w.DType || !slices.Equal(ti.Shape, w.Shape) {
			t.Errorf("tensor %d: %s %v %v, want %s %v %v", i, ti.Name, ti.DType, ti.Shape, w.Name, w.DType, w.Shape)
		}
		got, err := f.TensorData(ti.Name)
		if err != nil {
			t.Fatal(err)
		}
		var wb bytes.Buffer
		_ = w.Data(&wb)
		if !bytes.Equal(got, wb.Bytes()) {
			t.Errorf("tensor %s: bytes %x, want %x", ti.Name, got, wb.Bytes())
		}
	}
	v, err := f.Record("version")
	if err != nil || string(v) != "3\n" {
		t.Errorf("version record %q, %v", v, err)
	}
}

// TestRoundTrip writes random state dicts (with the byteorder record, 1000+
// entries for the SETITEMS batching, large ints for BININT and LONG1) and
// reads them back.
func TestRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 2, 17, 1001, 2000} {
		var ts []Tensor
		data := map[string][]byte{}
		for i := range n {
			dt := dtypes[rng.IntN(len(dtypes))]
			shape := make([]int64, rng.IntN(4))
			for j := range shape {
				shape[j] = int64(rng.IntN(5))
			}
			tt := Tensor{Name: "t." + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + "." + itoa(i), DType: dt, Shape: shape}
			b := make([]byte, tt.Bytes())
			for j := range b {
				b[j] = byte(rng.Uint32())
			}
			data[tt.Name] = b
			tt.Data = rawData(b)
			ts = append(ts, tt)
		}
		var buf bytes.Buffer
		if err := Write(&buf, "model_state_int2", ts); err != nil {
			t.Fatal(err)
		}
		f, err := Parse(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
		if err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		if len(f.Tensors) != n {
			t.Fatalf("n=%d: read %d tensors", n, len(f.Tensors))
		}
		if bo, err := f.Record("byteorder"); err != nil || string(bo) != "little" {
			t.Errorf("byteorder %q %v", bo, err)
		}
		for i, ti := range f.Tensors {
			if ti.Name != ts[i].Name || ti.DType != ts[i].DType || !slices.Equal(ti.Shape, ts[i].Shape) {
				t.Fatalf("tensor %d: %+v, want %s %v", i, ti, ts[i].Name, ts[i].Shape)
			}
			got, err := f.TensorData(ti.Name)
			if err != nil || !bytes.Equal(got, data[ti.Name]) {
				t.Fatalf("tensor %s: data differs (%v)", ti.Name, err)
			}
		}
	}
	for _, v := range []int64{255, 256, 65535, 65536, 1<<31 - 1, 1 << 31, 1 << 40, -1, -129, -(1 << 31), -(1 << 31) - 1} {
		p := &pickler{seen: map[string]int{}}
		p.b = append(p.b, opProto, 2)
		p.int(v)
		p.b = append(p.b, opStop)
		got, err := unpickle(p.b)
		if err != nil || got != v {
			t.Errorf("int %d: read back %v, %v", v, got, err)
		}
	}
}

func itoa(i int) string {
	b := []byte{}
	for {
		b = append([]byte{byte('0' + i%10)}, b...)
		if i /= 10; i == 0 {
			return string(b)
		}
	}
}

// TestZip64 writes a record past the 4 GiB offset limit through a writer
// that only counts (the data is a run of zeros), then checks the local
// extra field and descriptor sizes the ZIP64 rules ask for.
func TestZip64(t *testing.T) {
	z := newZipWriter(io.Discard)
	z.pos = 1<<32 + 5
	extra := z.localExtra(10, 100)
	if binary.LittleEndian.Uint16(extra) != 1 || binary.LittleEndian.Uint16(extra[2:]) != 8 || binary.LittleEndian.Uint64(extra[4:]) != z.pos {
		t.Fatalf("zip64 local extra %x", extra[:12])
	}
	start := z.pos + localHdrLen + 10 + uint64(len(extra))
	if start%alignment != 0 {
		t.Errorf("data at %d is not 64-aligned", start)
	}
	if err := z.record("a/data/0", 100, rawData(make([]byte, 100))); err != nil {
		t.Fatal(err)
	}
	if got := z.pos - (1<<32 + 5); got != uint64(localHdrLen+len("a/data/0")+len(z.localExtraAt(1<<32+5, 8, 100))+100+24) {
		t.Errorf("record took %d bytes", got)
	}
}

func (z *zipWriter) localExtraAt(pos uint64, nameLen int, size uint64) []byte {
	save := z.pos
	z.pos = pos
	defer func() { z.pos = save }()
	return z.localExtra(nameLen, size)
}

// TestParseErrors: damaged archives fail with ErrFormat, never panic.
func TestParseErrors(t *testing.T) {
	var buf bytes.Buffer
	if err := Write(&buf, "m", smallDict()); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()
	for name, mut := range map[string]func([]byte) []byte{
		"empty":     func(b []byte) []byte { return nil },
		"truncated": func(b []byte) []byte { return b[:len(b)-30] },
		"no eocd":   func(b []byte) []byte { return bytes.ReplaceAll(b, []byte("PK\x05\x06"), []byte("XX\x05\x06")) },
		"pickle": func(b []byte) []byte {
			c := bytes.Clone(b)
			i := bytes.Index(c, []byte("_rebuild_tensor_v2"))
			copy(c[i:], "os\nsystem\n")
			return c
		},
	} {
		b := mut(bytes.Clone(good))
		_, err := Parse(bytes.NewReader(b), int64(len(b)))
		if !errors.Is(err, ErrFormat) {
			t.Errorf("%s: err %v, want ErrFormat", name, err)
		}
	}
}

// FuzzParse: any bytes are rejected or read without a panic; tensors that
// are read are within their records.
func FuzzParse(f *testing.F) {
	var buf bytes.Buffer
	if err := Write(&buf, "m", smallDict()); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	if b, err := os.ReadFile("testdata/torch113_small.pt"); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		pf, err := Parse(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			return
		}
		for _, ti := range pf.Tensors {
			if ti.Contiguous() {
				_, _ = pf.TensorData(ti.Name)
			}
		}
	})
}
