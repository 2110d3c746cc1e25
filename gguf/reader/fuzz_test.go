package reader

import (
	"bytes"
	"encoding/binary"
	"os"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/gguf/writer"
)

// FuzzParse feeds arbitrary bytes to Parse: it must never panic, and a file
// it accepts must be self-consistent (every tensor's data lies inside the
// input and is exactly NBytes long, or, for a tensor whose stored id fits
// none of its layouts, is its span and Layouts names it; every key is found
// again).
func FuzzParse(f *testing.F) {
	f.Add(smallFile(f))
	// Tensor b's F32 id replaced by 40 (NVFP4, 36 bytes per 64): its 16
	// bytes fit no layout of the id, so it is read as LayoutUnknown(40).
	f.Add(withTypeID(f, smallFile(f), "b", 40))
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
			// In the input, without wrapping: DataOffset ≤ len(data) holds
			// for a file with tensors.
			if room := uint64(len(data)) - file.DataOffset; file.DataOffset > uint64(len(data)) || ti.Offset > room || uint64(len(d)) > room-ti.Offset {
				t.Fatalf("tensor %s: %d bytes at %d+%d, past the input's %d bytes", ti.Name, len(d), file.DataOffset, ti.Offset, len(data))
			}
			if ti.Type.IsLayoutUnknown() {
				if file.Layouts[ti.Name] == "" {
					t.Fatalf("tensor %s: %s without a Layouts note", ti.Name, ti.Type)
				}
				continue
			}
			nb, err := ti.NBytes()
			if err != nil || uint64(len(d)) != nb {
				t.Fatalf("tensor %s: %d bytes, NBytes %d (%v)", ti.Name, len(d), nb, err)
			}
		}
	})
}

// withTypeID returns a copy of the GGUF file b with the stored type id of
// tensor name set to id. The tensor info is name (u64 length + bytes),
// n_dims (u32), ne (u64 each), type (u32); the name must occur once.
func withTypeID(t testing.TB, b []byte, name string, id uint32) []byte {
	t.Helper()
	key := binary.LittleEndian.AppendUint64(nil, uint64(len(name)))
	key = append(key, name...)
	at := bytes.Index(b, key)
	if at < 0 || bytes.Count(b, key) != 1 {
		t.Fatalf("tensor name %q found %d times", name, bytes.Count(b, key))
	}
	out := bytes.Clone(b)
	p := at + len(key)
	nd := int(binary.LittleEndian.Uint32(out[p:]))
	p += 4 + 8*nd
	binary.LittleEndian.PutUint32(out[p:], id)
	return out
}
