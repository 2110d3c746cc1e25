package writer_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"log"
	"math"

	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/gguf/writer"
)

// Give the metadata in order (a duplicate key fails in New), the tensor
// infos in GGUF ne order, then stream each tensor's bytes in order.
func Example() {
	kvs := []gguf.KV{
		{Key: "general.architecture", Value: gguf.String("bitnet")},
		{Key: "bitnet.block_count", Value: gguf.Uint32(1)},
	}
	_, err := writer.New(io.Discard, append(kvs, gguf.KV{Key: "general.architecture", Value: gguf.String("llama")}), nil, 0)
	fmt.Println(err)

	tensors := []gguf.TensorInfo{
		{Name: "output_norm.weight", Type: gguf.TypeF32, Ne: []uint64{3}},       // 12 bytes, padded to 32
		{Name: "blk.0.attn_q.weight", Type: gguf.TypeI2S, Ne: []uint64{128, 4}}, // 128*4/4 + 32 bytes
	}
	var out bytes.Buffer // usually an atomicfile.File
	w, err := writer.New(&out, kvs, tensors, 0)
	if err != nil {
		log.Fatal(err)
	}
	for _, ti := range w.Tensors() {
		fmt.Printf("%s offset %d\n", ti.Name, ti.Offset)
	}
	norm := make([]byte, 0, 12)
	for _, v := range []float32{1, 1, 1} {
		norm = binary.LittleEndian.AppendUint32(norm, math.Float32bits(v))
	}
	if err := w.WriteTensor(0, norm); err != nil {
		log.Fatal(err)
	}
	if err := w.WriteTensor(1, make([]byte, 160)); err != nil {
		log.Fatal(err)
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}
	fmt.Println("header", w.HeaderSize(), "data", w.DataSize(), "file", out.Len())
	// Output:
	// gguf writer: kv "general.architecture": duplicate metadata key
	// output_norm.weight offset 0
	// blk.0.attn_q.weight offset 32
	// header 224 data 192 file 416
}
