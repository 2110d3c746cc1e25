package runtime

import "github.com/bitnet-convert/bitnet-convert/gguf/reader"

// LoadFile is Load on an opened GGUF file. The Model keeps slices of f's
// mmapped data (I2_S and Q8_0 tensors), so f must stay open while the
// Model is used.
func LoadFile(f *reader.File, opts Options) (*Model, error) {
	return Load(File{KVs: f.KVs, Tensors: f.Tensors, Data: f.TensorData}, opts)
}
