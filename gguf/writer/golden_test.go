package writer_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
	"github.com/bitnet-convert/bitnet-convert/gguf/writer"
)

// TestRewriteGoldenBytes reads each GGUF made by the reference pipeline
// (gguf-py for F32/TL1/TL2, llama-quantize's C++ gguf writer for I2_S) and
// writes its KVs, tensor infos and tensor bytes back with our writer: the
// output must be the same file byte for byte, so our layout, value encoding,
// offsets and padding match both reference writers.
func TestRewriteGoldenBytes(t *testing.T) {
	files, err := filepath.Glob("../../testdata/golden/*/gguf/*.gguf")
	// ollama's test file (written by llama.cpp's gguf-py) too.
	files = append(files, "../../testdata/gguf-samples/llama-2-tiny-random.gguf")
	if err != nil || len(files) < 7 {
		t.Fatalf("golden files: %v %v", files, err)
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			t.Parallel()
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			f, err := reader.Parse(want)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			w, err := writer.New(&buf, f.KVs, f.Tensors, f.Alignment)
			if err != nil {
				t.Fatal(err)
			}
			for i, ti := range w.Tensors() {
				if ti.Offset != f.Tensors[i].Offset {
					t.Errorf("tensor %s: offset %d, reference %d", ti.Name, ti.Offset, f.Tensors[i].Offset)
				}
				data, err := f.TensorData(ti.Name)
				if err != nil {
					t.Fatal(err)
				}
				if err := w.WriteTensor(i, data); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if w.HeaderSize() != f.DataOffset {
				t.Errorf("header size %d, reference data offset %d", w.HeaderSize(), f.DataOffset)
			}
			got := buf.Bytes()
			if !bytes.Equal(got, want) {
				i := 0
				for i < len(got) && i < len(want) && got[i] == want[i] {
					i++
				}
				t.Errorf("rewritten file (%d bytes) differs from the reference (%d bytes) first at byte %d", len(got), len(want), i)
			}
		})
	}
}
