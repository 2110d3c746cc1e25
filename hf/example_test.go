package hf_test

import (
	"fmt"
	"log"

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
