package writer_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
	"github.com/bitnet-convert/bitnet-convert/gguf/writer"
)

// writeFile writes kvs and tensors (data given per tensor) to memory.
func writeFile(t *testing.T, kvs []gguf.KV, tensors []gguf.TensorInfo, data [][]byte, align uint64) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := writer.New(&buf, kvs, tensors, align)
	if err != nil {
		t.Fatal(err)
	}
	for i := range tensors {
		if err := w.WriteTensor(i, data[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got, want := uint64(buf.Len()), w.HeaderSize()+w.DataSize(); got != want {
		t.Fatalf("file is %d bytes, HeaderSize+DataSize = %d", got, want)
	}
	return buf.Bytes()
}

// TestBR27 is BR-27 exactly: a token list with the empty string and UTF-8,
// token_type and merges arrays, one key of every non-array type before
// general.architecture, an empty u8 array; and general.architecture given
// twice is rejected by New, naming the key.
func TestBR27(t *testing.T) {
	var kvs []gguf.KV
	add := func(k string, v gguf.Value) { kvs = append(kvs, gguf.KV{Key: k, Value: v}) }
	add("test.u8", gguf.Uint8(250))
	add("test.i8", gguf.Int8(-7))
	add("test.u16", gguf.Uint16(65000))
	add("test.i16", gguf.Int16(-30000))
	add("test.u32", gguf.Uint32(4000000000))
	add("test.i32", gguf.Int32(-2000000000))
	add("test.f32", gguf.Float32(9.999999747378752e-06))
	add("test.bool", gguf.Bool(true))
	add("test.string", gguf.String("héllo wörld"))
	add("test.u64", gguf.Uint64(1<<63+5))
	add("test.i64", gguf.Int64(-1<<62))
	add("test.f64", gguf.Float64(math.Pi))
	add("general.architecture", gguf.String("bitnet"))
	add("tokenizer.ggml.tokens", gguf.Strings([]string{"<s>", "", "héllo", "日本", " x"}))
	add("tokenizer.ggml.token_type", gguf.Int32s([]int32{3, 1, 1, 1, 1}))
	add("tokenizer.ggml.merges", gguf.Strings([]string{"h é", "ll o", "日 本"}))
	add("test.empty_u8", gguf.Uint8s([]uint8{}))
	add("test.last", gguf.Uint32(42))

	_, err := writer.New(io.Discard, append(slices.Clone(kvs), gguf.KV{Key: "general.architecture", Value: gguf.String("bitnet")}), nil, 0)
	if !errors.Is(err, gguf.ErrDuplicateKey) || !strings.Contains(err.Error(), `"general.architecture"`) {
		t.Fatalf("second general.architecture: err = %v, want ErrDuplicateKey naming the key", err)
	}

	file := writeFile(t, kvs, nil, nil, 0)
	f, err := reader.Parse(file)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(kvs, f.KVs); diff != "" {
		t.Errorf("round trip (-wrote +read):\n%s", diff)
	}
	toks, _ := f.Get("tokenizer.ggml.tokens")
	if got := toks.V.([]string); len(got) != 5 || got[1] != "" || got[3] != "日本" {
		t.Errorf("tokens = %q", got)
	}
	if v, ok := f.Uint("test.last"); !ok || v != 42 {
		t.Errorf("last key = %d, %v; want 42 (reader desynced)", v, ok)
	}
	if f.Arch() != "bitnet" {
		t.Errorf("Arch() = %q", f.Arch())
	}
}

// TestRoundTripArrays writes an array of every element type and a tensor of
// several types, and reads them back.
func TestRoundTripArrays(t *testing.T) {
	kvs := []gguf.KV{
		{Key: "a.u8", Value: gguf.Uint8s([]uint8{0, 1, 255})},
		{Key: "a.i8", Value: gguf.Value{Type: gguf.ValueArray, Elem: gguf.ValueInt8, V: []int8{-128, 0, 127}}},
		{Key: "a.u16", Value: gguf.Value{Type: gguf.ValueArray, Elem: gguf.ValueUint16, V: []uint16{1, 65535}}},
		{Key: "a.i16", Value: gguf.Value{Type: gguf.ValueArray, Elem: gguf.ValueInt16, V: []int16{-32768, 5}}},
		{Key: "a.u32", Value: gguf.Uint32s([]uint32{7, 1 << 31})},
		{Key: "a.i32", Value: gguf.Int32s([]int32{-1, 2})},
		{Key: "a.f32", Value: gguf.Float32s([]float32{-1000, 0.5, float32(math.Inf(1))})},
		{Key: "a.bool", Value: gguf.Value{Type: gguf.ValueArray, Elem: gguf.ValueBool, V: []bool{true, false, true}}},
		{Key: "a.str", Value: gguf.Strings([]string{"", "x"})},
		{Key: "a.u64", Value: gguf.Value{Type: gguf.ValueArray, Elem: gguf.ValueUint64, V: []uint64{math.MaxUint64}}},
		{Key: "a.i64", Value: gguf.Value{Type: gguf.ValueArray, Elem: gguf.ValueInt64, V: []int64{math.MinInt64}}},
		{Key: "a.f64", Value: gguf.Value{Type: gguf.ValueArray, Elem: gguf.ValueFloat64, V: []float64{math.SmallestNonzeroFloat64}}},
		{Key: "a.empty_str", Value: gguf.Strings([]string{})},
	}
	tensors := []gguf.TensorInfo{
		{Name: "a", Type: gguf.TypeF32, Ne: []uint64{3}},
		{Name: "b", Type: gguf.TypeF16, Ne: []uint64{2, 2}},
		{Name: "c", Type: gguf.TypeI2S, Ne: []uint64{128, 2}},
		{Name: "d", Type: gguf.TypeQ8_0, Ne: []uint64{32}},
	}
	data := make([][]byte, len(tensors))
	for i, ti := range tensors {
		nb, err := ti.NBytes()
		if err != nil {
			t.Fatal(err)
		}
		data[i] = bytes.Repeat([]byte{byte(i + 1)}, int(nb))
	}
	for _, align := range []uint64{0, 32, 64, 1} {
		file := writeFile(t, kvs, tensors, data, align)
		f, err := reader.Parse(file)
		if err != nil {
			t.Fatalf("align %d: %v", align, err)
		}
		wantKVs := kvs
		wantAlign := align
		if align == 0 {
			wantAlign = 32
		}
		if wantAlign != 32 {
			wantKVs = append(append([]gguf.KV(nil), kvs...), gguf.KV{Key: "general.alignment", Value: gguf.Uint32(uint32(align))})
		}
		if diff := cmp.Diff(wantKVs, f.KVs); diff != "" {
			t.Errorf("align %d: kvs (-want +got):\n%s", align, diff)
		}
		if f.Alignment != wantAlign || f.DataOffset%wantAlign != 0 {
			t.Errorf("align %d: file alignment %d data offset %d", align, f.Alignment, f.DataOffset)
		}
		var off uint64
		for i, ti := range f.Tensors {
			if ti.Name != tensors[i].Name || ti.Type != tensors[i].Type || !cmp.Equal(ti.Ne, tensors[i].Ne) || ti.Offset != off {
				t.Errorf("align %d: tensor %d = %+v, want %+v at offset %d", align, i, ti, tensors[i], off)
			}
			got, err := f.TensorData(ti.Name)
			if err != nil || !bytes.Equal(got, data[i]) {
				t.Errorf("align %d: tensor %s data differs (err %v)", align, ti.Name, err)
			}
			off, _ = gguf.Pad(off+uint64(len(data[i])), wantAlign)
		}
	}
}

// TestHeaderBytes pins the exact encoding of a minimal file.
func TestHeaderBytes(t *testing.T) {
	file := writeFile(t, []gguf.KV{{Key: "k", Value: gguf.Bool(true)}},
		[]gguf.TensorInfo{{Name: "t", Type: gguf.TypeF32, Ne: []uint64{1}}}, [][]byte{{1, 2, 3, 4}}, 0)
	le := binary.LittleEndian
	var want []byte
	want = append(want, "GGUF"...)
	want = le.AppendUint32(want, 3)
	want = le.AppendUint64(want, 1)                    // tensors
	want = le.AppendUint64(want, 1)                    // kvs
	want = le.AppendUint64(want, 1)                    // key length
	want = append(want, 'k')                           // key
	want = le.AppendUint32(want, 7)                    // bool
	want = append(want, 1)                             // true
	want = le.AppendUint64(want, 1)                    // name length
	want = append(want, 't')                           // name
	want = le.AppendUint32(want, 1)                    // n_dims
	want = le.AppendUint64(want, 1)                    // ne[0]
	want = le.AppendUint32(want, 0)                    // F32
	want = le.AppendUint64(want, 0)                    // offset
	want = append(want, make([]byte, 96-len(want))...) // 71 header bytes padded to 96
	want = append(want, 1, 2, 3, 4)
	want = append(want, make([]byte, 28)...) // padding after the last tensor
	if !bytes.Equal(file, want) {
		t.Errorf("file bytes:\n got %x\nwant %x", file, want)
	}
}

// countingWriter records the size of every Write.
type countingWriter struct {
	bytes.Buffer
	writes []int
}

func (c *countingWriter) Write(p []byte) (int, error) {
	c.writes = append(c.writes, len(p))
	return c.Buffer.Write(p)
}

// TestLargeHeaderInPieces: a header of several MB (a 150 000-token
// vocabulary, a 300 kB byte array, 100 000 floats) reaches the destination
// in pieces of a bounded size and reads back exactly; a destination that
// fails part-way through the header is reported as a header write error.
func TestLargeHeaderInPieces(t *testing.T) {
	toks := make([]string, 150000)
	for i := range toks {
		toks[i] = strings.Repeat("tok", i%7) + string(rune('a'+i%26))
	}
	blob := make([]byte, 300000)
	for i := range blob {
		blob[i] = byte(i * 7)
	}
	fs := make([]float32, 100000)
	for i := range fs {
		fs[i] = float32(i) / 3
	}
	kvs := []gguf.KV{
		{Key: "general.architecture", Value: gguf.String("llama")},
		{Key: "tokenizer.ggml.tokens", Value: gguf.Strings(toks)},
		{Key: "x.blob", Value: gguf.Uint8s(blob)},
		{Key: "tokenizer.ggml.scores", Value: gguf.Float32s(fs)},
	}
	tensors := []gguf.TensorInfo{{Name: "w", Type: gguf.TypeF32, Ne: []uint64{4}}}
	var out countingWriter
	w, err := writer.New(&out, kvs, tensors, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteTensor(0, make([]byte, 16)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if len(out.writes) < 10 || slices.Max(out.writes[:len(out.writes)-1]) > 1<<20 {
		t.Errorf("header written in %d pieces, largest %d bytes; want pieces of at most 1 MiB", len(out.writes), slices.Max(out.writes))
	}
	f, err := reader.Parse(out.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(kvs, f.KVs); diff != "" {
		t.Errorf("kvs (-want +got):\n%s", diff)
	}
	if _, err := writer.New(&failWriter{left: 2 << 20}, kvs, tensors, 0); err == nil || !strings.Contains(err.Error(), "header") || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("failure in the middle of the header: %v", err)
	}
}
