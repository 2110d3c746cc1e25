package format

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/quantize"
)

func randTernary(r *rand.Rand, n int) []int8 {
	t := make([]int8, n)
	for i := range t {
		t[i] = int8(r.IntN(3)) - 1
	}
	return t
}

func TestTL1RoundTrip(t *testing.T) {
	cases := []struct{ m, k, BM, BK, bm int }{
		{32, 16, 32, 8, 32},
		{64, 32, 64, 16, 64},
		{512, 256, 256, 128, 32},
		{256, 256, 128, 64, 64},
		{128, 256, 128, 128, 32},
		{256, 512, 256, 64, 64},
		{320, 192, 160, 64, 32},
	}
	r := rand.New(rand.NewPCG(1, 2))
	for _, c := range cases {
		t.Run(fmt.Sprintf("%dx%d_%d_%d_%d", c.m, c.k, c.BM, c.BK, c.bm), func(t *testing.T) {
			w := randTernary(r, c.m*c.k)
			data, err := TransformTL1(w, c.m, c.k, c.BM, c.BK, c.bm, 0.375)
			if err != nil {
				t.Fatal(err)
			}
			nb, _ := gguf.NBytes(gguf.TypeTL1, []uint64{uint64(c.k), uint64(c.m)})
			if uint64(len(data)) != nb {
				t.Fatalf("len %d, want NBytes %d", len(data), nb)
			}
			back := make([]int8, len(w))
			s, err := UntransformTL1(back, data, c.m, c.k, c.BM, c.BK, c.bm)
			if err != nil {
				t.Fatal(err)
			}
			if s != 0.375 || !bytes.Equal(i8b(back), i8b(w)) {
				t.Fatalf("round trip differs (scale %v)", s)
			}
		})
	}
}

func TestTL2RoundTrip(t *testing.T) {
	cases := []struct{ m, k, BM, BK int }{
		{32, 96, 32, 96},    // two_k = 0
		{64, 288, 32, 96},   // two_k = 0, 3 blocks
		{512, 256, 256, 96}, // two_k = 64
		{128, 256, 128, 96},
		{256, 512, 256, 96}, // two_k = 32
		{320, 3200, 320, 96},
		{64, 1536, 64, 192},
	}
	r := rand.New(rand.NewPCG(3, 4))
	for _, c := range cases {
		t.Run(fmt.Sprintf("%dx%d_%d_%d", c.m, c.k, c.BM, c.BK), func(t *testing.T) {
			w := randTernary(r, c.m*c.k)
			data, err := TransformTL2(w, c.m, c.k, c.BM, c.BK, -1.5)
			if err != nil {
				t.Fatal(err)
			}
			nb, _ := gguf.NBytes(gguf.TypeTL2, []uint64{uint64(c.k), uint64(c.m)})
			if uint64(len(data)) != nb {
				t.Fatalf("len %d, want NBytes %d", len(data), nb)
			}
			back := make([]int8, len(w))
			s, err := UntransformTL2(back, data, c.m, c.k, c.BM, c.BK)
			if err != nil {
				t.Fatal(err)
			}
			if s != -1.5 || !bytes.Equal(i8b(back), i8b(w)) {
				t.Fatalf("round trip differs (scale %v)", s)
			}
		})
	}
}

// TestTL2KnownBytes pins the layout on a hand-checked case: one 32×96 tile,
// row 0 = (1,1,1, -1,-1,-1, 0,...), other rows 0.
func TestTL2KnownBytes(t *testing.T) {
	w := make([]int8, 32*96)
	copy(w, []int8{1, 1, 1, -1, -1, -1})
	w[16*96] = 1 // row 16, triple 0: v = 9
	data, err := TransformTL2(w, 32, 96, 32, 96, 1)
	if err != nil {
		t.Fatal(err)
	}
	// Triples 0 and 1 of row 0: |13|<<4 | |−13| = 0xDD at byte 0.
	if data[0] != 0xDD {
		t.Errorf("byte 0 = %#x, want 0xdd", data[0])
	}
	// Row 16 sits in source group 2, which goes to output group 1 (bytes 8..15).
	if data[8] != 0x90 {
		t.Errorf("byte 8 = %#x, want 0x90", data[8])
	}
	// Signs start after 96·32/6 = 512 nibble bytes; word 0 bit 13 = triple 1, row 0.
	if w0 := binary.LittleEndian.Uint16(data[512:]); w0 != 1<<13 {
		t.Errorf("sign word 0 = %#x, want %#x", w0, 1<<13)
	}
}

func TestTLErrors(t *testing.T) {
	w := make([]int8, 64*64)
	if _, err := TransformTL1(w, 64, 64, 64, 64, 16, 1); err == nil || !strings.Contains(err.Error(), "bm=16") {
		t.Errorf("bm=16: %v", err)
	}
	if _, err := TransformTL1(w, 64, 64, 48, 64, 32, 1); err == nil {
		t.Error("M % BM != 0 accepted")
	}
	if _, err := TransformTL2(w, 64, 64, 64, 100, 1); err == nil {
		t.Error("BK=100 accepted")
	}
	w[5] = 2
	if _, err := TransformTL1(w, 64, 64, 64, 64, 32, 1); err == nil || !strings.Contains(err.Error(), "row 0") {
		t.Errorf("value 2: %v", err)
	}
	bad := make([]byte, 64*64/4+32)
	bad[0] = 0xF0
	if _, err := UntransformTL1(make([]int8, 64*64), bad, 64, 64, 64, 64, 32); err == nil {
		t.Error("nibble 15 accepted")
	}
	if _, err := UntransformTL1(make([]int8, 64*64), bad[:10], 64, 64, 64, 64, 32); err == nil {
		t.Error("short data accepted")
	}
}

func FuzzUntransformTL2(f *testing.F) {
	f.Add([]byte{0xDD, 0x12}, uint8(1))
	f.Fuzz(func(t *testing.T, seed []byte, sel uint8) {
		m, k, BM, BK := 32, 128, 32, 96 // two_k = 32
		nb, _ := gguf.NBytes(gguf.TypeTL2, []uint64{uint64(k), uint64(m)})
		data := make([]byte, nb)
		for i := range data {
			if len(seed) > 0 {
				data[i] = seed[i%len(seed)] ^ byte(i*int(sel))
			}
		}
		dst := make([]int8, m*k)
		s, err := UntransformTL2(dst, data, m, k, BM, BK)
		if err != nil {
			return
		}
		// Anything that decodes must re-encode to the same ternary values.
		again, err := TransformTL2(dst, m, k, BM, BK, s)
		if err != nil {
			t.Fatal(err)
		}
		dst2 := make([]int8, m*k)
		if _, err := UntransformTL2(dst2, again, m, k, BM, BK); err != nil || !bytes.Equal(i8b(dst), i8b(dst2)) {
			t.Fatalf("re-encode differs: %v", err)
		}
	})
}

func i8b(v []int8) []byte {
	b := make([]byte, len(v))
	for i, x := range v {
		b[i] = byte(x)
	}
	return b
}

// --- acceptance d: golden tiny checkpoint ---

const tinyDir = "../testdata/golden/tiny-bitnet"

type stEntry struct {
	Dtype   string   `json:"dtype"`
	Shape   []int    `json:"shape"`
	Offsets [2]int64 `json:"data_offsets"`
}

// readBF16Tensors reads every BF16 tensor of a safetensors file as float32.
func readBF16Tensors(t *testing.T, path string) map[string]struct {
	shape []int
	data  []float32
} {
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := binary.LittleEndian.Uint64(raw)
	var hdr map[string]json.RawMessage
	if err := json.Unmarshal(raw[8:8+n], &hdr); err != nil {
		t.Fatal(err)
	}
	body := raw[8+n:]
	out := map[string]struct {
		shape []int
		data  []float32
	}{}
	for name, msg := range hdr {
		if name == "__metadata__" {
			continue
		}
		var e stEntry
		if err := json.Unmarshal(msg, &e); err != nil {
			t.Fatal(err)
		}
		if e.Dtype != "BF16" {
			t.Fatalf("%s: dtype %s", name, e.Dtype)
		}
		b := body[e.Offsets[0]:e.Offsets[1]]
		f := make([]float32, len(b)/2)
		for i := range f {
			f[i] = quantize.BF16ToF32(binary.LittleEndian.Uint16(b[2*i:]))
		}
		out[name] = struct {
			shape []int
			data  []float32
		}{e.Shape, f}
	}
	return out
}

// goldenTensors reads name → (offset, size) from an outputs/gguf_list_*.txt
// listing and returns the data bytes from the GGUF file.
func goldenTensors(t *testing.T, list, file string) map[string][]byte {
	fdata, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lf, err := os.Open(list)
	if err != nil {
		t.Fatal(err)
	}
	defer lf.Close()
	out := map[string][]byte{}
	var start int
	sc := bufio.NewScanner(lf)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "data_start" {
			start, _ = strconv.Atoi(f[1])
		}
		if len(f) > 10 && strings.HasPrefix(f[0], "blk.") && f[1] == "type" {
			var off, size int
			for i := range f {
				switch f[i] {
				case "offset":
					off, _ = strconv.Atoi(f[i+1])
				case "stored":
					size, _ = strconv.Atoi(f[i+1])
				}
			}
			out[f[0]] = fdata[start+off : start+off+size]
		}
	}
	if start == 0 || len(out) == 0 {
		t.Fatalf("%s: no tensors parsed", list)
	}
	return out
}

var tinyProj = map[string]string{
	"self_attn.q_proj": "attn_q", "self_attn.k_proj": "attn_k", "self_attn.v_proj": "attn_v",
	"self_attn.o_proj": "attn_output", "mlp.gate_proj": "ffn_gate", "mlp.up_proj": "ffn_up", "mlp.down_proj": "ffn_down",
}

// tinyKernels are the golden kernel_config_tl{1,2}.ini entries ([M, K] → BM, BK, bm).
var tinyKernels = map[string]map[[2]int][3]int{
	"tl1": {{512, 256}: {256, 128, 32}, {256, 256}: {128, 64, 64}, {128, 256}: {128, 128, 32}, {256, 512}: {256, 64, 64}},
	"tl2": {{512, 256}: {256, 96, 32}, {256, 256}: {256, 96, 32}, {128, 256}: {128, 96, 32}, {256, 512}: {256, 96, 32}},
}

func ulpDiff(a, b float32) int64 {
	d := int64(math.Float32bits(a)) - int64(math.Float32bits(b))
	if d < 0 {
		d = -d
	}
	return d
}

func TestGoldenTinyTL(t *testing.T) {
	st := readBF16Tensors(t, filepath.Join(tinyDir, "hf", "model.safetensors"))
	for _, arch := range []string{"tl1", "tl2"} {
		t.Run(arch, func(t *testing.T) {
			gold := goldenTensors(t, filepath.Join(tinyDir, "outputs", "gguf_list_"+arch+".txt"),
				filepath.Join(tinyDir, "gguf", "ggml-model-"+arch+".gguf"))
			checked := 0
			for layer := 0; layer < 2; layer++ {
				for hfName, gName := range tinyProj {
					src := st[fmt.Sprintf("model.layers.%d.%s.weight", layer, hfName)]
					name := fmt.Sprintf("blk.%d.%s.weight", layer, gName)
					m, k := src.shape[0], src.shape[1]
					tern := make([]int8, len(src.data))
					scale, _ := quantize.Ternarize(tern, src.data)
					kc := tinyKernels[arch][[2]int{m, k}]
					var got []byte
					var err error
					if arch == "tl1" {
						got, err = TransformTL1(tern, m, k, kc[0], kc[1], kc[2], scale)
					} else {
						got, err = TransformTL2(tern, m, k, kc[0], kc[1], scale)
					}
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					want := gold[name]
					if len(got) != len(want) {
						t.Fatalf("%s: %d bytes, golden %d", name, len(got), len(want))
					}
					so := len(got) - TLTailBytes
					if !bytes.Equal(got[:so], want[:so]) {
						i := 0
						for got[i] == want[i] {
							i++
						}
						t.Errorf("%s: packed bytes differ first at %d (got %#x want %#x)", name, i, got[i], want[i])
					}
					gs := math.Float32frombits(binary.LittleEndian.Uint32(got[so:]))
					ws := math.Float32frombits(binary.LittleEndian.Uint32(want[so:]))
					if ulpDiff(gs, ws) > 1 {
						t.Errorf("%s: scale %v, golden %v (more than 1 ulp apart)", name, gs, ws)
					}
					checked++
				}
			}
			if checked != 14 {
				t.Fatalf("checked %d tensors, want 14", checked)
			}
		})
	}
}

func FuzzUntransformTL1(f *testing.F) {
	f.Add([]byte{0x64, 0x88, 0x00}, uint8(3))
	f.Fuzz(func(t *testing.T, seed []byte, sel uint8) {
		m, k, BM, BK, bm := 64, 32, 64, 16, 64
		data := make([]byte, m*k/4+TLTailBytes)
		for i := range data {
			if len(seed) > 0 {
				data[i] = seed[i%len(seed)] ^ byte(i*int(sel))
			}
		}
		dst := make([]int8, m*k)
		s, err := UntransformTL1(dst, data, m, k, BM, BK, bm)
		if err != nil {
			return
		}
		// Every nibble was ≤ 8, so the layout is a bijection: re-encoding
		// gives the same packed bytes.
		again, err := TransformTL1(dst, m, k, BM, BK, bm, s)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(again[:m*k/4], data[:m*k/4]) {
			t.Fatal("re-encoded bytes differ")
		}
	})
}
