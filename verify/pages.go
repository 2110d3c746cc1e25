package verify

import (
	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
	"github.com/bitnet-convert/bitnet-convert/runtime"
)

// releasePages tells the kernel that b, a sub-slice of f's tensor data, is
// not needed for now: its resident pages are dropped and read from the file
// again if touched (reader.File.Release; only page-aligned interior pages).
// It used to go through a zero hf.TensorData, whose Release does nothing
// without a mapping, so no GGUF page was ever released and the whole file
// stayed resident (TestReleasePages).
func releasePages(f *reader.File, b []byte) { f.Release(b) }

// runtimeCopies are the tensor types runtime.LoadFile may decode into its
// own memory: F32/F16/BF16 vectors (decodeVector), and matrices on a
// big-endian host or at an unaligned offset; otherwise the runtime uses them
// in place in the mapping like I2_S, TL1, TL2 and Q8_0 (runtime.NewMatrix),
// and releasing their pages after loading only means they are read again
// from the page cache when the prompt touches them.
var runtimeCopies = map[gguf.Type]bool{gguf.TypeF32: true, gguf.TypeF16: true, gguf.TypeBF16: true}

// releaseFile releases the mapped pages of every tensor of f for which
// which reports true.
func releaseFile(f *reader.File, which func(gguf.TensorInfo) bool) {
	for _, t := range f.Tensors {
		if !which(t) {
			continue
		}
		if data, err := f.TensorData(t.Name); err == nil {
			releasePages(f, data)
		}
	}
}

// loadModel is runtime.LoadFile, except that the file's pages of each
// tensor the runtime decodes into its own memory (runtimeCopies) are
// released once the next tensor is asked for, and the last after loading:
// where the runtime copies (see runtimeCopies), an 8B model's F16 embedding
// and head would otherwise be resident twice, as the mapped file and as the
// copy, while it loads.
func loadModel(f *reader.File, opts runtime.Options) (*runtime.Model, error) {
	var prev []byte
	release := func() {
		if prev != nil {
			releasePages(f, prev)
			prev = nil
		}
	}
	m, err := runtime.Load(runtime.File{KVs: f.KVs, Tensors: f.Tensors, Data: func(name string) ([]byte, error) {
		release()
		data, err := f.TensorData(name)
		if t, ok := f.Tensor(name); ok && err == nil && runtimeCopies[t.Type] {
			prev = data
		}
		return data, err
	}}, opts)
	release()
	return m, err
}
