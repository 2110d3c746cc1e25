package reader_test

import (
	"encoding/binary"
	"fmt"
	"log"
	"math"

	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
)

// Open a GGUF written by bitnet.cpp's pipeline and read an I2_S tensor's
// per-tensor scale.
func Example() {
	f, err := reader.Open("../../testdata/golden/tiny-bitnet/gguf/ggml-model-i2_s.gguf")
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	fmt.Println("arch:", f.Arch(), "version:", f.Version, "tensors:", len(f.Tensors))
	ft, _ := f.Uint("general.file_type")
	fmt.Println("file type:", ft)

	ti, _ := f.Tensor("blk.0.attn_q.weight")
	data, err := f.TensorData(ti.Name)
	if err != nil {
		log.Fatal(err)
	}
	off, _ := gguf.ScaleOffset(ti.Type, ti.Ne)
	scale := math.Float32frombits(binary.LittleEndian.Uint32(data[off:]))
	fmt.Printf("%s %s(%d) ne=%v bytes=%d scale>0=%v\n", ti.Name, ti.Type, uint32(ti.Type), ti.Ne, len(data), scale > 0)
	// Output:
	// arch: bitnet version: 3 tensors: 24
	// file type: 40
	// blk.0.attn_q.weight I2_S(36) ne=[256 256] bytes=16416 scale>0=true
}
