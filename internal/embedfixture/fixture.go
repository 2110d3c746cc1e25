// Package embedfixture writes tiny BitNet sentence-embedding checkpoints
// (Qwen3-style and Gemma3-style, as microsoft/bitnet-embedding-0.6b and -270m
// are laid out) for the tests of convert, runtime, verify and the embed
// command. Weights are seeded N(0, 0.02²) bf16 master weights; the seven
// per-projection input norms per layer are near 1; Qwen3 norms are near 1 and
// Gemma3 norms near 0 (Gemma stores w and applies 1 + w). Names carry no
// "model." prefix, as in the real checkpoints. head_dim differs from
// hidden/heads in both shapes. Every row length is a multiple of 128, so the
// projections pack as I2_S.
package embedfixture

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/bitnet-convert/bitnet-convert/hf"
)

// Shape is the geometry of a fixture (HF config.json values).
type Shape struct {
	Arch                                               string // "qwen3" or "gemma3"
	Hidden, FF, Heads, HeadsKV, HeadDim, Vocab, Layers int
	// QueryPreAttnScalar is Gemma3's query_pre_attn_scalar (0: omitted).
	QueryPreAttnScalar int
}

// Qwen3 is the Qwen3-style shape: hidden 128, 4 heads of 64 (≠ 128/4), 2 KV
// heads, FFN 256, 2 layers and the real Qwen3 vocabulary size (151936).
var Qwen3 = Shape{Arch: "qwen3", Hidden: 128, FF: 256, Heads: 4, HeadsKV: 2, HeadDim: 64, Vocab: 151936, Layers: 2}

// Gemma3 is the Gemma3-style shape: hidden 128, 2 heads of 128 (≠ 128/2), 1
// KV head, FFN 384, 2 layers, query_pre_attn_scalar 64 (≠ head_dim, so the
// attention scale is 1/8, not 1/√128) and the real Gemma3 vocabulary size
// (262144).
var Gemma3 = Shape{Arch: "gemma3", Hidden: 128, FF: 384, Heads: 2, HeadsKV: 1, HeadDim: 128, Vocab: 262144, Layers: 2, QueryPreAttnScalar: 64}

// Options select the side files written next to the weights.
type Options struct {
	// Tokenizer copies the real tokenizer files of the architecture from
	// tokenizersDir/<qwen3|gemma3> (tokenizer.json.gz is decompressed).
	Tokenizer     bool
	TokenizersDir string
	// Pooling, when not "", writes modules.json and 1_Pooling/config.json
	// (sentence-transformers) with pooling_mode_<Pooling> true:
	// "mean_tokens", "cls_token", "lasttoken", "max_tokens", ….
	Pooling string
	// Extra tensors are appended to the checkpoint (e.g. an unmapped name).
	Extra []hf.WriteTensor
	// Config entries are set in config.json after the shape's (nil values
	// are written as JSON null).
	Config map[string]any
}

// Write writes config.json, model.safetensors and the selected side files of
// a fixture with shape s into dir.
func Write(dir string, s Shape, opts Options) error {
	cfg := map[string]any{
		"hidden_size": s.Hidden, "intermediate_size": s.FF, "num_hidden_layers": s.Layers,
		"num_attention_heads": s.Heads, "num_key_value_heads": s.HeadsKV, "head_dim": s.HeadDim,
		"rms_norm_eps": 1e-6, "vocab_size": s.Vocab, "tie_word_embeddings": true, "max_position_embeddings": 32768,
	}
	gemma := s.Arch == "gemma3"
	if gemma {
		cfg["architectures"] = []string{"Gemma3TextModel"}
		cfg["model_type"] = "gemma3_text"
		cfg["hidden_activation"] = "gelu_pytorch_tanh"
		cfg["rope_theta"] = 10000.0
		if s.QueryPreAttnScalar > 0 {
			cfg["query_pre_attn_scalar"] = s.QueryPreAttnScalar
		}
	} else {
		cfg["architectures"] = []string{"Qwen3Model"}
		cfg["model_type"] = "qwen3"
		cfg["hidden_act"] = "silu"
		cfg["rope_theta"] = 1000000.0
	}
	for k, v := range opts.Config {
		cfg[k] = v
	}
	if err := writeJSON(filepath.Join(dir, "config.json"), cfg); err != nil {
		return err
	}
	h, ff, q, kv, hd := uint64(s.Hidden), uint64(s.FF), uint64(s.Heads*s.HeadDim), uint64(s.HeadsKV*s.HeadDim), uint64(s.HeadDim)
	normCenter := 1.0
	if gemma {
		normCenter = 0
	}
	ts := []hf.WriteTensor{Random("embed_tokens.weight", 1, 0, 0.02, uint64(s.Vocab), h)}
	for b := 0; b < s.Layers; b++ {
		p := "layers." + strconv.Itoa(b) + "."
		seed := uint64(100 * (b + 1))
		ts = append(ts,
			Random(p+"input_layernorm.weight", seed+1, normCenter, 0.1, h),
			Random(p+"post_attention_layernorm.weight", seed+2, normCenter, 0.1, h),
			Random(p+"self_attn.q_norm.weight", seed+3, normCenter, 0.1, hd),
			Random(p+"self_attn.k_norm.weight", seed+4, normCenter, 0.1, hd),
			Random(p+"self_attn.q_proj.weight", seed+5, 0, 0.02, q, h),
			Random(p+"self_attn.q_proj.norm.weight", seed+6, 1, 0.1, h),
			Random(p+"self_attn.k_proj.weight", seed+7, 0, 0.02, kv, h),
			Random(p+"self_attn.k_proj.norm.weight", seed+8, 1, 0.1, h),
			Random(p+"self_attn.v_proj.weight", seed+9, 0, 0.02, kv, h),
			Random(p+"self_attn.v_proj.norm.weight", seed+10, 1, 0.1, h),
			Random(p+"self_attn.o_proj.weight", seed+11, 0, 0.02, h, q),
			Random(p+"self_attn.o_proj.norm.weight", seed+12, 1, 0.1, q),
			Random(p+"mlp.gate_proj.weight", seed+13, 0, 0.02, ff, h),
			Random(p+"mlp.gate_proj.norm.weight", seed+14, 1, 0.1, h),
			Random(p+"mlp.up_proj.weight", seed+15, 0, 0.02, ff, h),
			Random(p+"mlp.up_proj.norm.weight", seed+16, 1, 0.1, h),
			Random(p+"mlp.down_proj.weight", seed+17, 0, 0.02, h, ff),
			Random(p+"mlp.down_proj.norm.weight", seed+18, 1, 0.1, ff),
		)
		if gemma {
			ts = append(ts,
				Random(p+"pre_feedforward_layernorm.weight", seed+19, 0, 0.1, h),
				Random(p+"post_feedforward_layernorm.weight", seed+20, 0, 0.1, h))
		}
	}
	ts = append(ts, Random("norm.weight", 7, normCenter, 0.1, h))
	ts = append(ts, opts.Extra...)
	if err := hf.WriteSafetensors(filepath.Join(dir, "model.safetensors"), ts, map[string]string{"format": "pt"}); err != nil {
		return err
	}
	if opts.Tokenizer {
		if err := copyTokenizer(filepath.Join(opts.TokenizersDir, s.Arch), dir); err != nil {
			return err
		}
	}
	if opts.Pooling != "" {
		mods := []map[string]any{
			{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
			{"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
			{"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"},
		}
		if err := writeJSON(filepath.Join(dir, "modules.json"), mods); err != nil {
			return err
		}
		pc := map[string]any{"word_embedding_dimension": s.Hidden}
		for _, m := range []string{"mean_tokens", "cls_token", "max_tokens", "mean_sqrt_len_tokens", "weightedmean_tokens", "lasttoken"} {
			pc["pooling_mode_"+m] = m == opts.Pooling
		}
		if err := os.MkdirAll(filepath.Join(dir, "1_Pooling"), 0o755); err != nil {
			return err
		}
		if err := writeJSON(filepath.Join(dir, "1_Pooling", "config.json"), pc); err != nil {
			return err
		}
	}
	return nil
}

// Random is a seeded bf16 tensor of N(center, sd²) values.
func Random(name string, seed uint64, center, sd float64, shape ...uint64) hf.WriteTensor {
	n := uint64(1)
	for _, d := range shape {
		n *= d
	}
	return hf.WriteTensor{Name: name, DType: hf.BF16, Shape: shape, Data: func(w io.Writer) error {
		r := rand.New(rand.NewPCG(seed, n))
		buf := make([]byte, 2*8192)
		for done := uint64(0); done < n; {
			k := min(uint64(len(buf)/2), n-done)
			for i := uint64(0); i < k; i++ {
				f := float32(center + r.NormFloat64()*sd)
				binary.LittleEndian.PutUint16(buf[2*i:], bf16(f))
			}
			if _, err := w.Write(buf[:2*k]); err != nil {
				return err
			}
			done += k
		}
		return nil
	}}
}

// bf16 rounds f to bfloat16 (nearest, ties to even; f is finite).
func bf16(f float32) uint16 {
	b := math.Float32bits(f)
	b += 0x7fff + (b>>16)&1
	return uint16(b >> 16)
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// copyTokenizer copies every tokenizer file of src into dst, decompressing
// *.gz.
func copyTokenizer(src, dst string) error {
	ents, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	for _, e := range ents {
		name := e.Name()
		if !strings.HasPrefix(name, "tokenizer") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			return err
		}
		if strings.HasSuffix(name, ".gz") {
			zr, err := gzip.NewReader(bytes.NewReader(data))
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			if data, err = io.ReadAll(zr); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			name = strings.TrimSuffix(name, ".gz")
		}
		if err := os.WriteFile(filepath.Join(dst, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
