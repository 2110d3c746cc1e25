package reader

import (
	"bytes"
	"os"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/gguf/writer"
)

// FuzzParse feeds arbitrary bytes to Parse: it must never panic, and a file
// it accepts must be self-consistent (every tensor's data is exactly NBytes
// long and lies inside the input; every key is found again).
func FuzzParse(f *testing.F) {
	f.Add(smallFile(f))
	// A file with an I2_S tensor, a non-default alignment and arrays of
	// several widths.
	var buf bytes.Buffer
	w, err := writer.New(&buf, []gguf.KV{
		{Key: "general.architecture", Value: gguf.String("bitnet")},
		{Key: "a.u16", Value: gguf.Value{Type: gguf.ValueArray, Elem: gguf.ValueUint16, V: []uint16{1, 2}}},
		{Key: "a.f64", Value: gguf.Value{Type: gguf.ValueArray, Elem: gguf.ValueFloat64, V: []float64{0.5}}},
		{Key: "b", Value: gguf.Bool(true)},
	}, []gguf.TensorInfo{{Name: "q", Type: gguf.TypeI2S, Ne: []uint64{128, 1}}, {Name: "n", Type: gguf.TypeF16, Ne: []uint64{2}}}, 64)
	if err != nil {
		f.Fatal(err)
	}
	if err := w.WriteTensor(0, make([]byte, 64)); err != nil {
		f.Fatal(err)
	}
	if err := w.WriteTensor(1, []byte{1, 2, 3, 4}); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	if vocab, err := os.ReadFile("../../testdata/gguf-samples/ggml-vocab-llama-spm.gguf"); err == nil {
		f.Add(vocab[:4096])
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Parse(data)
		if err != nil {
			return
		}
		for _, kv := range file.KVs {
			if _, ok := file.Get(kv.Key); !ok {
				t.Fatalf("key %q not found", kv.Key)
			}
		}
		for _, ti := range file.Tensors {
			d, err := file.TensorData(ti.Name)
			if err != nil {
				t.Fatal(err)
			}
			nb, err := ti.NBytes()
			if err != nil || uint64(len(d)) != nb {
				t.Fatalf("tensor %s: %d bytes, NBytes %d (%v)", ti.Name, len(d), nb, err)
			}
		}
	})
}
