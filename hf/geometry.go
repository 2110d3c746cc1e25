package hf

import "fmt"

// Geometry is the shape-deciding part of a decoder's config.json: hidden
// size, FFN width, attention heads, KV heads, head dimension, vocabulary
// size and layer count. It is the one implementation of the geometry rule
// that convert, codegen and dummy use (verify's float reference reads it
// from convert's plan; the runtime reads the GGUF keys the converter wrote).
type Geometry struct {
	Hidden, FF, Heads, HeadsKV, HeadDim, Vocab, Layers int
}

// Geometry reads every Geometry field (spec conversion.md §1.2, BR-15):
// hidden_size (or n_embd), num_attention_heads (n_head), num_hidden_layers
// (n_layers, n_layer), vocab_size and intermediate_size (n_inner) are
// required and positive; see HeadGeometry for the head rule.
func (c *Config) Geometry() (Geometry, error) {
	g, err := c.headRule(true)
	if err != nil {
		return g, err
	}
	get := positiveInt(c, &err)
	get(&g.Layers, true, "num_hidden_layers", "n_layers", "n_layer")
	get(&g.Vocab, true, "vocab_size")
	return g, err
}

// Dims is Geometry without the checks only the converter needs: the same
// keys, aliases, defaults and head_dim precedence, but heads need not be a
// multiple of KV heads and num_hidden_layers may be 0. The dummy package
// sizes its tensors with it, so it writes checkpoints the converter refuses
// (to test those refusals); every size it returns is positive except Layers.
func (c *Config) Dims() (Geometry, error) {
	g, err := c.headRule(false)
	if err != nil {
		return g, err
	}
	n, ok, err := c.Int("num_hidden_layers", "n_layers", "n_layer")
	switch {
	case err != nil:
		return g, err
	case !ok:
		return g, fmt.Errorf("%s: missing %q", c.Path, "num_hidden_layers")
	case n < 0:
		return g, fmt.Errorf("%s: %q must not be negative, got %d", c.Path, "num_hidden_layers", n)
	}
	g.Layers = n
	get := positiveInt(c, &err)
	get(&g.Vocab, true, "vocab_size")
	return g, err
}

// HeadGeometry reads the fields that decide the projection shapes (Hidden,
// FF, Heads, HeadsKV, HeadDim; Vocab and Layers stay 0): num_key_value_heads
// defaults to num_attention_heads; head_dim is config.json's head_dim when
// present and not null, else hidden/heads (an error when that does not
// divide); heads must be a multiple of KV heads. Errors name the file and
// the key.
func (c *Config) HeadGeometry() (Geometry, error) { return c.headRule(true) }

// headRule is HeadGeometry; the heads-multiple-of-KV-heads check only when
// strict.
func (c *Config) headRule(strict bool) (Geometry, error) {
	var g Geometry
	var err error
	get := positiveInt(c, &err)
	get(&g.Hidden, true, "hidden_size", "n_embd")
	get(&g.FF, true, "intermediate_size", "n_inner")
	get(&g.Heads, true, "num_attention_heads", "n_head")
	get(&g.HeadsKV, false, "num_key_value_heads")
	if err != nil {
		return g, err
	}
	if g.HeadsKV == 0 {
		g.HeadsKV = g.Heads
	}
	if c.Has("head_dim") {
		get(&g.HeadDim, true, "head_dim")
		if err != nil {
			return g, err
		}
	} else {
		if g.Hidden%g.Heads != 0 {
			return g, fmt.Errorf("%s: hidden_size %d is not a multiple of num_attention_heads %d and no head_dim is given", c.Path, g.Hidden, g.Heads)
		}
		g.HeadDim = g.Hidden / g.Heads
	}
	if strict && g.Heads%g.HeadsKV != 0 {
		return g, fmt.Errorf("%s: num_attention_heads %d is not a multiple of num_key_value_heads %d", c.Path, g.Heads, g.HeadsKV)
	}
	return g, nil
}

// positiveInt returns a reader that stores the first present key of keys in
// dst, recording in *err the first missing required key or non-positive
// value (reads after an error do nothing).
func positiveInt(c *Config, err *error) func(dst *int, required bool, keys ...string) {
	return func(dst *int, required bool, keys ...string) {
		if *err != nil {
			return
		}
		v, ok, e := c.Int(keys...)
		switch {
		case e != nil:
			*err = e // names config.json and the key
		case !ok && required:
			*err = fmt.Errorf("%s: missing %q", c.Path, keys[0])
		case ok && v <= 0:
			*err = fmt.Errorf("%s: %q must be positive, got %d", c.Path, keys[0], v)
		case ok:
			*dst = v
		}
	}
}
