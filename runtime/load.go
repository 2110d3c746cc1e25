package runtime

import (
	"fmt"

	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
)

// LoadFile is Load on an opened GGUF file. The Model uses the weight
// tensors in place in f's mapped data (no copy; on a big-endian host or at
// an unaligned offset F32/F16 weights are decoded into memory instead), so
// f must stay open while the Model is used.
func LoadFile(f *reader.File, opts Options) (*Model, error) {
	return Load(File{KVs: f.KVs, Tensors: f.Tensors, Data: f.TensorData}, opts)
}

// Open opens the GGUF file at path and loads its model. The returned file
// must be closed after the last use of the Model (it holds the mmap, or
// with Options.NoMmap the file's bytes). Errors name path.
func Open(path string, opts Options) (*Model, *reader.File, error) {
	f, err := openGGUF(path, opts)
	if err != nil {
		return nil, nil, fmt.Errorf("open model %s: %w", path, err)
	}
	m, err := LoadFile(f, opts)
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("load model %s: %w", path, err)
	}
	return m, f, nil
}

// openGGUF opens path as opts.NoMmap asks: mapped, or read into memory.
func openGGUF(path string, opts Options) (*reader.File, error) {
	if opts.NoMmap {
		return reader.OpenInMemory(path)
	}
	return reader.Open(path)
}
