package dummy_test

import (
	"context"
	"fmt"
	"os"

	"github.com/bitnet-convert/bitnet-convert/dummy"
	"github.com/bitnet-convert/bitnet-convert/hf"
	"github.com/bitnet-convert/bitnet-convert/presets"
)

// Layout lists the tensors of the real 2B-4T checkpoint: packed U8
// projections [out/4, in], each followed by its 0-d bf16 weight_scale.
func ExampleLayout() {
	m, _ := presets.Get("BitNet-b1.58-2B-4T")
	cfg := map[string]any{}
	for k, v := range m.Config {
		cfg[k] = v
	}
	cfg["num_hidden_layers"] = 1
	ts, err := dummy.Layout(cfg, m.Packed)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, t := range ts[:6] {
		fmt.Println(t.Name, t.DType, t.Shape, t.Role)
	}
	fmt.Println(len(ts), "tensors")
	// Output:
	// model.embed_tokens.weight BF16 [128256 2560] embedding
	// model.layers.0.self_attn.q_proj.weight U8 [640 2560] projection
	// model.layers.0.self_attn.q_proj.weight_scale BF16 [] weight_scale
	// model.layers.0.self_attn.k_proj.weight U8 [160 2560] projection
	// model.layers.0.self_attn.k_proj.weight_scale BF16 [] weight_scale
	// model.layers.0.self_attn.v_proj.weight U8 [160 2560] projection
	// 20 tensors
}

// Generate writes a one-layer 2B-4T-shaped checkpoint (vocabulary cut to
// 256 tokens) that hf.Open reads back.
func ExampleGenerate() {
	m, _ := presets.Get("BitNet-b1.58-2B-4T")
	dir, err := os.MkdirTemp("", "dummy-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	res, err := dummy.Generate(context.Background(), dir, dummy.Options{Config: m.Config, Packed: m.Packed, Layers: 1, VocabSize: 256, Seed: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	ck, err := hf.Open(dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ck.Close()
	ref, _ := ck.Lookup("model.layers.0.mlp.down_proj.weight")
	fmt.Println(res.Files, len(ck.Tensors), "tensors,", res.Bytes, "bytes")
	fmt.Println(ref.Name, ref.DType, ref.Shape)
	// Output:
	// [model.safetensors] 20 tensors, 18712078 bytes
	// model.layers.0.mlp.down_proj.weight U8 [640 6912]
}
