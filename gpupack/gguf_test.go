package gpupack

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/convert"
	"github.com/bitnet-convert/bitnet-convert/dummy"
	"github.com/bitnet-convert/bitnet-convert/format"
	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
	"github.com/bitnet-convert/bitnet-convert/quantize"
	"github.com/bitnet-convert/bitnet-convert/torchpt"
)

func tinyDummy(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("../testdata/gpu/tiny/config.json")
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := json.Unmarshal(data, &cfg); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := dummy.Generate(context.Background(), dir, dummy.Options{Config: cfg, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// checkFromGGUF converts dir to an I2_S GGUF with hf2gguf's code, packs the
// GGUF and checks both checkpoints against the GGUF itself (acceptance b):
// int2 codes decode (UnpackInt2) to the GGUF's codes (q and k rows permuted
// for the GPU), weight_scale entries are the GGUF scales rounded once to
// bf16 in main's layout, the fp16 weights are t·ws with +0 zeros, and every
// float tensor is the GGUF's value rounded to bf16.
func checkFromGGUF(t *testing.T, dir string, opts Options) {
	t.Helper()
	gg := filepath.Join(t.TempDir(), "m-i2_s.gguf")
	if _, err := convert.ConvertDir(context.Background(), dir, gg, false, false, convert.Options{NoVocab: true}); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if _, err := Pack(context.Background(), gg, out, opts); err != nil {
		t.Fatal(err)
	}
	g, err := reader.Open(gg)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	heads, _ := g.Uint(g.Arch() + ".attention.head_count")
	kvHeads, _ := g.Uint(g.Arch() + ".attention.head_count_kv")
	layers, _ := g.Uint(g.Arch() + ".block_count")
	fp, err := torchpt.Open(filepath.Join(out, FP16File))
	if err != nil {
		t.Fatal(err)
	}
	defer fp.Close()
	i2, err := torchpt.Open(filepath.Join(out, Int2File))
	if err != nil {
		t.Fatal(err)
	}
	defer i2.Close()

	// gguf returns the codes (GPU row order) and bf16 scale of a projection
	gguf := func(name string, h int) ([]int8, int, int, uint16) {
		ti, _ := g.Tensor(name)
		k, m := int(ti.Ne[0]), int(ti.Ne[1])
		data, err := g.TensorData(name)
		if err != nil {
			t.Fatal(err)
		}
		fm, _ := format.ForType(ti.Type, format.LayoutX86, nil)
		codes := make([]int8, k*m)
		sc, err := fm.Decode(codes, data, k, m)
		if err != nil {
			t.Fatal(err)
		}
		if h > 0 {
			codes, _ = permuteRows(codes, m, k, h)
		}
		return codes, m, k, quantize.F32ToBF16(sc[0])
	}
	for l := range int(layers) {
		b := "blk." + itoa(l) + "."
		for _, f := range []struct {
			key   string
			parts []string
		}{
			{"attention.wqkv", []string{"attn_q", "attn_k", "attn_v"}},
			{"attention.wo", []string{"attn_output"}},
			{"feed_forward.w13", []string{"ffn_gate", "ffn_up"}},
			{"feed_forward.w2", []string{"ffn_down"}},
		} {
			key := "layers." + itoa(l) + "." + f.key
			var codes []int8
			var scales []uint16
			var fp16 []byte
			n, k := 0, 0
			for _, p := range f.parts {
				h := 0
				switch p {
				case "attn_q":
					h = int(heads)
				case "attn_k":
					h = int(kvHeads)
				}
				c, m, kk, ws := gguf(b+p+".weight", h)
				codes, scales = append(codes, c...), append(scales, ws)
				fp16 = (&Ternary{Rows: m, Cols: kk, Codes: c, Scale: ws}).appendFP16(fp16)
				n, k = n+m, kk
			}
			raw, err := i2.TensorData(key + ".weight")
			if err != nil {
				t.Fatal(err)
			}
			got := make([]int8, n*k)
			if err := UnpackInt2(got, raw, n, k); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, codes) {
				t.Errorf("%s: int2 codes differ from the GGUF's", key)
			}
			sraw, _ := i2.TensorData(key + ".weight_scale")
			want := append(slices.Clone(scales), make([]uint16, 4-len(scales))...)
			for i, w := range want {
				if v := binary.LittleEndian.Uint16(sraw[2*i:]); v != w {
					t.Errorf("%s.weight_scale[%d] = %#04x, want bf16(GGUF scale) %#04x", key, i, v, w)
				}
			}
			if fraw, _ := fp.TensorData(key + ".weight"); !bytes.Equal(fraw, fp16) {
				t.Errorf("%s: fp16 weight is not t·ws", key)
			}
		}
	}
	// float tensors: the GGUF values rounded to bf16, in both files
	floats := map[string]string{"tok_embeddings.weight": "token_embd.weight", "output.weight": "token_embd.weight", "norm.weight": "output_norm.weight"}
	for l := range int(layers) {
		p, b := "layers."+itoa(l)+".", "blk."+itoa(l)+"."
		floats[p+"attention_norm.weight"] = b + "attn_norm.weight"
		floats[p+"ffn_norm.weight"] = b + "ffn_norm.weight"
		floats[p+"attention.attn_sub_norm.weight"] = b + "attn_sub_norm.weight"
		floats[p+"feed_forward.ffn_sub_norm.weight"] = b + "ffn_sub_norm.weight"
	}
	for key, name := range floats {
		ti, _ := g.Tensor(name)
		data, _ := g.TensorData(name)
		n := 1
		for _, d := range ti.Ne {
			n *= int(d)
		}
		f := make([]float32, n)
		if err := convert.DecodeFloats(f, ti.Type, data); err != nil {
			t.Fatal(err)
		}
		want := bf16Bytes(nil, f)
		for _, file := range []*torchpt.File{fp, i2} {
			got, err := file.TensorData(key)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s %s: not bf16 of the GGUF's %s (%s)", file.Archive, key, name, ti.Type)
			}
		}
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// TestFromGGUF (acceptance b, small shape).
func TestFromGGUF(t *testing.T) {
	checkFromGGUF(t, tinyDummy(t), Options{AllowUnsupportedShape: true})
}

// TestFromGGUF2B4T (acceptance b; heavy): the 2-layer 2B-4T dummy through
// hf2gguf's I2_S and gpu-pack.
func TestFromGGUF2B4T(t *testing.T) {
	heavy(t)
	checkFromGGUF(t, dummy2B4T(t), Options{})
}
