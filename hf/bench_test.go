package hf_test

import (
	"path/filepath"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/hf"
)

// BenchmarkFloat32sBF16 decodes a 2560×6912 bf16 tensor read through the
// mmap (MB/s of bf16 input).
func BenchmarkFloat32sBF16(b *testing.B) {
	dir := b.TempDir()
	const n = 2560 * 6912
	raw := make([]byte, 2*n)
	for i := 0; i < n; i++ {
		raw[2*i], raw[2*i+1] = byte(i), 0x3c
	}
	if err := hf.WriteSafetensors(filepath.Join(dir, "model.safetensors"), []hf.WriteTensor{
		{Name: "w", DType: hf.BF16, Shape: []uint64{6912, 2560}, Data: hf.RawData(raw)},
	}, nil); err != nil {
		b.Fatal(err)
	}
	writeFileB(b, filepath.Join(dir, "config.json"), []byte(tinyConfig))
	c, err := hf.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	d, err := c.Read(c.Tensors[0])
	if err != nil {
		b.Fatal(err)
	}
	dst := make([]float32, n)
	b.SetBytes(2 * n)
	b.ResetTimer()
	for b.Loop() {
		if _, err := d.Float32s(dst); err != nil {
			b.Fatal(err)
		}
	}
}
