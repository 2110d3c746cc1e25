package dummy_test

import (
	"fmt"

	"github.com/bitnet-convert/bitnet-convert/dummy"
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
