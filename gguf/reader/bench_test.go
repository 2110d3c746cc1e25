package reader

import (
	"os"
	"testing"
)

// BenchmarkParse parses a real 32000-token vocabulary file (1.7 MB header
// and data) from memory.
func BenchmarkParse(b *testing.B) {
	data, err := os.ReadFile("../../testdata/gguf-samples/llama-2-tiny-random.gguf")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(data); err != nil {
			b.Fatal(err)
		}
	}
}
