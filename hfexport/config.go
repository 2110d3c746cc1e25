package hfexport

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/bitnet-convert/bitnet-convert/format"
	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
	"github.com/bitnet-convert/bitnet-convert/hf"
	"github.com/bitnet-convert/bitnet-convert/tokenizer"
)

// geometry is what config.json needs from the {arch}.* keys.
type geometry struct {
	layers, hidden, ff, heads, headsKV int
	headDim, context, vocab            int
	eps, ropeBase, ropeScaleFactor     float32
	act, ropeScaleType                 string
	haveRopeScaling                    bool
}

// readGeometry reads the hyper-parameters from the {arch}.* keys (llama.cpp
// src/llama-model.cpp load_hparams names them): block_count,
// embedding_length, feed_forward_length, attention.head_count (required),
// attention.head_count_kv (default head_count), attention.key_length
// (default embedding_length / head_count), attention.layer_norm_rms_epsilon
// (required), rope.freq_base (default 10000), context_length (default
// 2048), the vocabulary size from token_embd's rows, and the activation
// from {arch}.hidden_activation (default format.ArchActivation, silu for
// llama).
func readGeometry(f *reader.File, path, arch string) (geometry, error) {
	var g geometry
	req := func(key string, dst *int) error {
		v, ok := f.Uint(arch + "." + key)
		if !ok || v == 0 || v > 1<<31 {
			return fmt.Errorf("%s: key %s.%s: missing or out of range; the file is not a complete %s model", path, arch, key, arch)
		}
		*dst = int(v)
		return nil
	}
	for _, r := range []struct {
		key string
		dst *int
	}{{"block_count", &g.layers}, {"embedding_length", &g.hidden}, {"feed_forward_length", &g.ff}, {"attention.head_count", &g.heads}} {
		if err := req(r.key, r.dst); err != nil {
			return g, err
		}
	}
	g.headsKV = g.heads
	if v, ok := f.Uint(arch + ".attention.head_count_kv"); ok && v > 0 && v <= 1<<31 {
		g.headsKV = int(v)
	}
	if g.hidden%g.heads != 0 {
		return g, fmt.Errorf("%s: key %s.embedding_length %d is not a multiple of attention.head_count %d", path, arch, g.hidden, g.heads)
	}
	g.headDim = g.hidden / g.heads
	if v, ok := f.Uint(arch + ".attention.key_length"); ok && v > 0 && v <= 1<<20 {
		g.headDim = int(v)
	}
	eps, ok := f.Float(arch + ".attention.layer_norm_rms_epsilon")
	if !ok {
		return g, fmt.Errorf("%s: key %s.attention.layer_norm_rms_epsilon: missing", path, arch)
	}
	g.eps = float32(eps)
	g.ropeBase = 10000
	if v, ok := f.Float(arch + ".rope.freq_base"); ok {
		g.ropeBase = float32(v)
	}
	g.context = 2048
	if v, ok := f.Uint(arch + ".context_length"); ok && v > 0 && v <= 1<<31 {
		g.context = int(v)
	}
	if t, ok := f.String(arch + ".rope.scaling.type"); ok && t != "none" {
		g.ropeScaleType, g.ropeScaleFactor = t, 1
		if v, ok := f.Float(arch + ".rope.scaling.factor"); ok {
			g.ropeScaleFactor = float32(v)
		}
		// linear by 1 is no scaling (config.json rope_scaling null)
		g.haveRopeScaling = t != "linear" || g.ropeScaleFactor != 1
	}
	g.act = "silu"
	if a, ok := format.ArchActivation[arch]; ok {
		g.act = a
	}
	if a, ok := f.String(arch + format.HiddenActivationSuffix); ok {
		g.act = a
	}
	if ti, ok := f.Tensor("token_embd.weight"); ok && len(ti.Ne) == 2 {
		g.vocab = int(ti.Ne[1])
	} else {
		return g, fmt.Errorf("%s: tensor token_embd.weight: missing or not 2-dimensional", path)
	}
	return g, nil
}

// jsonFloat32 is a float32 KV as config.json spells it: the shortest
// decimal that reads back as the same float32 (1e-05, not
// 9.999999747378752e-06).
func jsonFloat32(v float32) json.Number {
	s := strconv.FormatFloat(float64(v), 'g', -1, 32)
	if f, err := strconv.ParseFloat(s, 64); err == nil && f == float64(int64(f)) && len(s) < 16 {
		// torch/json write rope_theta 500000.0: keep a decimal point so the
		// value stays a float for Python readers
		return json.Number(strconv.FormatFloat(f, 'f', 1, 64))
	}
	return json.Number(s)
}

// marshalSorted writes v (maps) as transformers' to_json_string does:
// indent 2, keys sorted, a final newline; no HTML escaping.
func marshalSorted(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// QuantizationConfig is the quantization_config written into config.json:
// transformers' BitNetQuantConfig with linear_class autobitlinear and
// quantization_mode offline, so the stored weight_scale multiplies the
// unpacked codes (integrations/bitnet.py AutoBitLinear), as in
// microsoft/bitnet-b1.58-2B-4T.
var QuantizationConfig = map[string]any{
	"quant_method":      "bitnet",
	"linear_class":      "autobitlinear",
	"quantization_mode": "offline",
}

// sideFiles fills p.Files: config.json, generation_config.json and the
// tokenizer files.
func (p *Plan) sideFiles(g geometry, v *tokenizer.Vocab, tied bool) error {
	torchDtype := "bfloat16"
	if p.dtype == hf.F32 {
		torchDtype = "float32"
	}
	cfg := map[string]any{
		"architectures":           []string{p.Class},
		"model_type":              p.ModelType,
		"vocab_size":              g.vocab,
		"hidden_size":             g.hidden,
		"intermediate_size":       g.ff,
		"num_hidden_layers":       g.layers,
		"num_attention_heads":     g.heads,
		"num_key_value_heads":     g.headsKV,
		"head_dim":                g.headDim,
		"hidden_act":              g.act,
		"max_position_embeddings": g.context,
		"rms_norm_eps":            jsonFloat32(g.eps),
		"rope_theta":              jsonFloat32(g.ropeBase),
		"rope_scaling":            nil,
		"tie_word_embeddings":     tied,
		"attention_bias":          false,
		"attention_dropout":       0.0,
		"initializer_range":       0.02,
		"use_cache":               true,
		"torch_dtype":             torchDtype,
		"quantization_config":     QuantizationConfig,
	}
	if p.ModelType == "llama" {
		cfg["mlp_bias"] = false
		cfg["pretraining_tp"] = 1
	}
	if g.haveRopeScaling {
		cfg["rope_scaling"] = map[string]any{"type": g.ropeScaleType, "rope_type": g.ropeScaleType, "factor": jsonFloat32(g.ropeScaleFactor)}
	}
	gen := map[string]any{"_from_model_config": true}
	if v != nil {
		for _, s := range []struct {
			key string
			id  int32
		}{{"bos_token_id", v.BOS}, {"eos_token_id", v.EOS}, {"pad_token_id", v.PAD}} {
			if s.id >= 0 {
				cfg[s.key] = s.id
				gen[s.key] = s.id
			}
		}
		if err := p.tokenizerFiles(v, g); err != nil {
			// the weights and config are still a checkpoint; say why the
			// tokenizer is missing instead of refusing the export
			p.Warnings = append(p.Warnings, "no tokenizer files written: "+err.Error())
			for _, name := range []string{"tokenizer.model", "tokenizer.json", "tokenizer_config.json"} {
				delete(p.Files, name)
			}
		}
	}
	var err error
	if p.Files["config.json"], err = marshalSorted(cfg); err != nil {
		return err
	}
	if p.Files["generation_config.json"], err = marshalSorted(gen); err != nil {
		return err
	}
	return nil
}

// tokenizerFiles writes tokenizer.model (SentencePiece-style "llama"
// vocabularies) or tokenizer.json (byte-level BPE "gpt2"), and
// tokenizer_config.json: the special tokens by content, add_bos_token /
// add_eos_token when the GGUF says, the chat template, and
// added_tokens_decoder for the control, unknown and user-defined tokens.
func (p *Plan) tokenizerFiles(v *tokenizer.Vocab, g geometry) error {
	tc := map[string]any{
		"clean_up_tokenization_spaces": false,
		"model_max_length":             g.context,
	}
	switch v.Model {
	case "llama":
		b, err := v.SentencePieceModel()
		if err != nil {
			return fmt.Errorf("tokenizer.model: %w", err)
		}
		p.Files["tokenizer.model"] = b
		tc["tokenizer_class"] = "LlamaTokenizer"
		tc["legacy"] = false
		tc["add_prefix_space"] = v.AddSpacePrefix == nil || *v.AddSpacePrefix
	case "gpt2":
		b, err := v.HFTokenizerJSON()
		if err != nil {
			return fmt.Errorf("tokenizer.json: %w", err)
		}
		p.Files["tokenizer.json"] = b
		tc["tokenizer_class"] = "PreTrainedTokenizerFast"
	default:
		return fmt.Errorf("tokenizer.ggml.model %q: gguf2hf rebuilds llama (SentencePiece) and gpt2 (byte-level BPE) vocabularies", v.Model)
	}
	if v.AddBOS != nil {
		tc["add_bos_token"] = *v.AddBOS
	}
	if v.AddEOS != nil {
		tc["add_eos_token"] = *v.AddEOS
	}
	for _, s := range []struct {
		key string
		id  int32
	}{{"bos_token", v.BOS}, {"eos_token", v.EOS}, {"unk_token", v.UNK}, {"pad_token", v.PAD}} {
		if s.id >= 0 && int(s.id) < len(v.Tokens) {
			tc[s.key] = v.Tokens[s.id]
		}
	}
	if v.ChatTemplate != "" {
		tc["chat_template"] = v.ChatTemplate
	}
	dec := map[string]any{}
	for id, t := range v.Types {
		if t != tokenizer.TypeControl && t != tokenizer.TypeUserDefined && t != tokenizer.TypeUnknown {
			continue
		}
		special := t != tokenizer.TypeUserDefined
		dec[strconv.Itoa(id)] = map[string]any{"content": v.Tokens[id], "lstrip": false, "normalized": !special, "rstrip": false, "single_word": false, "special": special}
	}
	tc["added_tokens_decoder"] = dec
	b, err := marshalSorted(tc)
	if err != nil {
		return err
	}
	p.Files["tokenizer_config.json"] = b
	return nil
}
