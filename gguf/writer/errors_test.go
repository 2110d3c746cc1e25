package writer_test

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/gguf/writer"
)

// TestNewErrors: every invalid header is refused before a byte is written,
// with an error naming the key or tensor.
func TestNewErrors(t *testing.T) {
	arch := gguf.KV{Key: "general.architecture", Value: gguf.String("bitnet")}
	f32 := func(name string, ne ...uint64) gguf.TensorInfo {
		return gguf.TensorInfo{Name: name, Type: gguf.TypeF32, Ne: ne}
	}
	cases := []struct {
		name    string
		kvs     []gguf.KV
		tensors []gguf.TensorInfo
		align   uint64
		want    error
		mention string
	}{
		{"duplicate key", []gguf.KV{arch, {Key: "x", Value: gguf.Uint8(1)}, arch}, nil, 0, gguf.ErrDuplicateKey, "general.architecture"},
		{"empty key", []gguf.KV{{Key: "", Value: gguf.Uint8(1)}}, nil, 0, nil, "empty key"},
		{"go type mismatch", []gguf.KV{{Key: "bitnet.block_count", Value: gguf.Value{Type: gguf.ValueUint32, V: 2}}}, nil, 0, gguf.ErrValueType, "bitnet.block_count"},
		{"unknown value type", []gguf.KV{{Key: "odd", Value: gguf.Value{Type: 13, V: uint8(1)}}}, nil, 0, gguf.ErrValueType, "odd"},
		{"nil value", []gguf.KV{{Key: "nil", Value: gguf.Value{}}}, nil, 0, gguf.ErrValueType, "nil"},
		{"array slice mismatch", []gguf.KV{{Key: "tokenizer.ggml.token_type", Value: gguf.Value{Type: gguf.ValueArray, Elem: gguf.ValueInt32, V: []uint32{1}}}}, nil, 0, gguf.ErrValueType, "token_type"},
		{"nested array", []gguf.KV{{Key: "nest", Value: gguf.Value{Type: gguf.ValueArray, Elem: gguf.ValueArray, V: []any{}}}}, nil, 0, gguf.ErrValueType, "nest"},
		{"alignment twice", []gguf.KV{{Key: "general.alignment", Value: gguf.Uint32(64)}}, nil, 64, gguf.ErrDuplicateKey, "general.alignment"},
		{"alignment disagrees", []gguf.KV{{Key: "general.alignment", Value: gguf.Uint32(64)}}, nil, 0, nil, "general.alignment"},
		{"alignment not power of two", nil, nil, 48, nil, "alignment 48"},
		{"duplicate tensor", []gguf.KV{arch}, []gguf.TensorInfo{f32("a", 4), f32("blk.0.x", 4), f32("blk.0.x", 4)}, 0, gguf.ErrDuplicateTensor, "blk.0.x"},
		{"unknown tensor type", nil, []gguf.TensorInfo{{Name: "blk.0.odd", Type: 77, Ne: []uint64{4}}}, 0, gguf.ErrUnknownType, "blk.0.odd"},
		{"block size", nil, []gguf.TensorInfo{{Name: "blk.0.q8", Type: gguf.TypeQ8_0, Ne: []uint64{33}}}, 0, gguf.ErrBlockSize, "blk.0.q8"},
		{"size overflow BR-28c", nil, []gguf.TensorInfo{f32("blk.0.big", 4, 1073741823, 1073741825, 1)}, 0, gguf.ErrOverflow, "blk.0.big"},
		{"elements overflow", nil, []gguf.TensorInfo{f32("blk.0.huge", 1<<40, 1<<40)}, 0, gguf.ErrOverflow, "blk.0.huge"},
		{"running offset overflow", nil, []gguf.TensorInfo{f32("a", 1<<60), f32("b", 1<<60)}, 0, gguf.ErrOverflow, "(b)"},
		{"dimension too big", nil, []gguf.TensorInfo{f32("neg", 1<<63)}, 0, gguf.ErrOverflow, "neg"},
		{"five dims", nil, []gguf.TensorInfo{f32("five", 1, 1, 1, 1, 1)}, 0, nil, "five"},
		{"empty name", nil, []gguf.TensorInfo{f32("", 1)}, 0, nil, "empty tensor name"},
		{"long name", nil, []gguf.TensorInfo{f32(strings.Repeat("n", 64), 1)}, 0, nil, "at most 63"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			_, err := writer.New(&buf, c.kvs, c.tensors, c.align)
			if err == nil {
				t.Fatal("accepted")
			}
			if c.want != nil && !errors.Is(err, c.want) {
				t.Errorf("err = %v, want %v", err, c.want)
			}
			if !strings.Contains(err.Error(), c.mention) {
				t.Errorf("err = %q, should mention %q", err, c.mention)
			}
			if buf.Len() != 0 {
				t.Errorf("%d bytes written before the error", buf.Len())
			}
		})
	}
}

// TestWriteErrors: wrong length, wrong order, missing tensors, short
// readers and write failures are reported naming the tensor.
func TestWriteErrors(t *testing.T) {
	tensors := []gguf.TensorInfo{
		{Name: "first", Type: gguf.TypeF32, Ne: []uint64{2}},
		{Name: "second", Type: gguf.TypeF16, Ne: []uint64{4}},
	}
	newW := func(out io.Writer) *writer.Writer {
		t.Helper()
		w, err := writer.New(out, nil, tensors, 0)
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	var buf bytes.Buffer
	w := newW(&buf)
	if err := w.WriteTensor(0, make([]byte, 7)); !errors.Is(err, writer.ErrTensorSize) || !strings.Contains(err.Error(), "first") {
		t.Errorf("short data: %v", err)
	}
	if err := w.WriteTensor(1, make([]byte, 8)); !errors.Is(err, writer.ErrTensorOrder) || !strings.Contains(err.Error(), "second") || !strings.Contains(err.Error(), "0 (first)") {
		t.Errorf("out of order: %v", err)
	}
	if err := w.WriteTensor(5, nil); !errors.Is(err, writer.ErrTensorOrder) {
		t.Errorf("bad index: %v", err)
	}
	if err := w.WriteTensor(0, make([]byte, 8)); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteTensor(0, make([]byte, 8)); !errors.Is(err, writer.ErrTensorOrder) {
		t.Errorf("written twice: %v", err)
	}
	if err := w.Close(); !errors.Is(err, writer.ErrMissingTensor) || !strings.Contains(err.Error(), "second") {
		t.Errorf("Close with a missing tensor: %v", err)
	}
	if err := w.WriteTensorFrom(1, strings.NewReader("abc")); !errors.Is(err, writer.ErrTensorSize) || !errors.Is(err, io.ErrUnexpectedEOF) || !strings.Contains(err.Error(), "second") {
		t.Errorf("short reader: %v", err)
	}
	// The failure is sticky: the file is now unusable.
	if err := w.Close(); err == nil {
		t.Error("Close after a failed write succeeded")
	}

	// A failing destination: the error names the tensor and sticks.
	fw := &failWriter{left: 1000}
	w = newW(fw)
	if err := w.WriteTensor(0, make([]byte, 8)); err != nil {
		t.Fatal(err)
	}
	fw.left = 0
	if err := w.WriteTensor(1, make([]byte, 8)); err == nil || !strings.Contains(err.Error(), "second") {
		t.Errorf("write failure: %v", err)
	}
	if err := w.Close(); err == nil {
		t.Error("Close after a write failure succeeded")
	}
	if _, err := writer.New(&failWriter{}, nil, tensors, 0); err == nil || !strings.Contains(err.Error(), "header") {
		t.Errorf("header write failure: %v", err)
	}
}

type failWriter struct{ left int }

func (f *failWriter) Write(p []byte) (int, error) {
	if len(p) > f.left {
		return 0, errors.New("disk full")
	}
	f.left -= len(p)
	return len(p), nil
}

// TestDeterministic: the same input gives the same bytes.
func TestDeterministic(t *testing.T) {
	kvs := []gguf.KV{{Key: "general.architecture", Value: gguf.String("bitnet")}, {Key: "s", Value: gguf.Float32s([]float32{1, 2})}}
	tensors := []gguf.TensorInfo{{Name: "x", Type: gguf.TypeTL2, Ne: []uint64{512, 256}}}
	data := [][]byte{bytes.Repeat([]byte{9}, 30080)}
	a := writeFile(t, kvs, tensors, data, 0)
	b := writeFile(t, kvs, tensors, data, 0)
	if !bytes.Equal(a, b) {
		t.Error("two writes differ")
	}
}

// TestWriteTensorChunks: pieces of any size give the bytes of WriteTensor;
// too many bytes, too few (io.EOF) and an error of next are reported naming
// the tensor, and stick.
func TestWriteTensorChunks(t *testing.T) {
	tensors := []gguf.TensorInfo{
		{Name: "first", Type: gguf.TypeF32, Ne: []uint64{5}},
		{Name: "second", Type: gguf.TypeF16, Ne: []uint64{3}},
	}
	data := [][]byte{[]byte("0123456789abcdefghij"), []byte("ABCDEF")}
	var want bytes.Buffer
	w, err := writer.New(&want, nil, tensors, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range data {
		if err := w.WriteTensor(i, d); err != nil {
			t.Fatal(err)
		}
	}
	pieces := func(b []byte, sizes ...int) func() ([]byte, error) {
		return func() ([]byte, error) {
			if len(b) == 0 {
				return nil, io.EOF
			}
			k := min(len(b), sizes[0])
			if len(sizes) > 1 {
				sizes = sizes[1:]
			}
			p := b[:k]
			b = b[k:]
			return p, nil
		}
	}
	var got bytes.Buffer
	w, _ = writer.New(&got, nil, tensors, 0)
	if err := w.WriteTensorChunks(0, pieces(data[0], 1, 0, 7, 100)); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteTensorChunks(1, pieces(data[1], 6)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil || !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Fatalf("chunked file differs from WriteTensor's (close: %v)", err)
	}
	bad := errors.New("source failed")
	for name, next := range map[string]func() ([]byte, error){
		"too long":  pieces(append([]byte("x"), data[0]...), 21),
		"too short": pieces(data[0][:19], 4),
		"error":     func() ([]byte, error) { return nil, bad },
	} {
		w, _ := writer.New(io.Discard, nil, tensors, 0)
		err := w.WriteTensorChunks(0, next)
		if err == nil || !strings.Contains(err.Error(), "first") || name != "error" && !errors.Is(err, writer.ErrTensorSize) || name == "error" && !errors.Is(err, bad) {
			t.Errorf("%s: %v", name, err)
		}
		if w.WriteTensor(1, data[1]) == nil {
			t.Errorf("%s: the failure did not stick", name)
		}
	}
	fw := &failWriter{left: 200}
	w, _ = writer.New(fw, nil, tensors, 0)
	fw.left = 3
	if err := w.WriteTensorChunks(0, pieces(data[0], 20)); err == nil || !strings.Contains(err.Error(), "first") || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("write failure: %v", err)
	}
}
