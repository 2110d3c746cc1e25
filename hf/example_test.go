package hf_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/bitnet-convert/bitnet-convert/hf"
)

func ExampleOpen() {
	ck, err := hf.Open("../testdata/golden/tiny-bitnet/hf")
	if err != nil {
		log.Fatal(err)
	}
	defer ck.Close()
	layers, _, _ := ck.Config.Int("n_layers", "num_hidden_layers", "n_layer")
	fmt.Println(len(ck.Tensors), "tensors,", layers, "layers")
	for _, t := range ck.Tensors[:3] {
		fmt.Println(t.Name, t.DType, t.Shape)
	}
	// Output:
	// 24 tensors, 2 layers
	// model.embed_tokens.weight BF16 [512 256]
	// model.layers.0.input_layernorm.weight BF16 [256]
	// model.layers.0.mlp.down_proj.weight BF16 [256 512]
}

func ExampleCheckpoint_Read() {
	ck, err := hf.Open("../testdata/golden/tiny-bitnet/hf")
	if err != nil {
		log.Fatal(err)
	}
	defer ck.Close()
	ref, _ := ck.Lookup("model.norm.weight")
	data, err := ck.Read(ref)
	if err != nil {
		log.Fatal(err)
	}
	defer data.Release()
	x, err := data.Float32s(nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(data.Raw), "bytes,", len(x), "values, last", x[len(x)-1])
	// Output: 512 bytes, 256 values, last 1.1171875
}

func ExampleWriteSafetensors() {
	dir, err := os.MkdirTemp("", "hf-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "model.safetensors")
	err = hf.WriteSafetensors(path, []hf.WriteTensor{
		// A packed ternary weight and its 0-d bf16 scale (BR-06 shape).
		{Name: "w.weight", DType: hf.U8, Shape: []uint64{2, 4}, Data: hf.RawData([]byte{0x55, 0x55, 0x55, 0x55, 0xaa, 0xaa, 0xaa, 0xaa})},
		{Name: "w.weight_scale", DType: hf.BF16, Shape: []uint64{}, Data: hf.RawData([]byte{0x80, 0x3f})},
	}, map[string]string{"format": "pt"})
	if err != nil {
		log.Fatal(err)
	}
	h, err := hf.ReadHeader(path)
	if err != nil {
		log.Fatal(err)
	}
	for _, t := range h.Tensors {
		fmt.Println(t.Name, t.DType, t.Shape, t.NElements(), "elements at byte", t.Offset)
	}
	fmt.Println("header padded to 8:", (h.DataStart-8)%8 == 0)
	// Output:
	// w.weight U8 [2 4] 8 elements at byte 168
	// w.weight_scale BF16 [] 1 elements at byte 176
	// header padded to 8: true
}
