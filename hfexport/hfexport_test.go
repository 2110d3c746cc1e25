package hfexport

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/format"
	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/hf"
	"github.com/bitnet-convert/bitnet-convert/internal/osx"
)

// TestOneScale: one scale per tensor is accepted; all-zero groups are
// ignored whatever their scale; two scales and a non-finite scale are
// refused naming the tensor, and so is a code outside −1…+1 (what a Q2_0
// decoder gives for its code 3, +2; nonTernary, which the packing calls).
func TestOneScale(t *testing.T) {
	ti := gguf.TensorInfo{Name: "blk.0.attn_q.weight", Type: gguf.TypeTQ2_0}
	tq := format.TQ2_0{}
	k := 256
	codes := make([]int8, 3*k)
	codes[0], codes[2*k+5] = 1, -1 // blocks 0 and 2 non-zero, block 1 all zero
	if s, err := oneScale(ti, tq, codes, []float32{0.5, 0, 0.5}, k); err != nil || s != 0.5 {
		t.Fatalf("one scale with an all-zero block: %v, %v", s, err)
	}
	if s, err := oneScale(ti, tq, codes, []float32{0.5, 7, 0.5}, k); err != nil || s != 0.5 {
		t.Fatalf("an all-zero block's scale must be ignored: %v, %v", s, err)
	}
	for _, c := range []struct {
		name   string
		codes  func([]int8)
		scales []float32
		want   string
	}{
		{"two scales", nil, []float32{0.5, 0, 0.25}, "block 2 (row 2) is 0.25 but the scale of block 0 (row 0) is 0.5"},
		{"NaN", nil, []float32{0.5, 0, float32(nan())}, "scale 2 is NaN"},
		{"code 3", func(c []int8) { c[k+3] = 2 }, []float32{0.5, 0.5, 0.5}, "element 259 (row 1, column 3) has code 2 (stored code 3)"},
	} {
		cs := slices.Clone(codes)
		if c.codes != nil {
			c.codes(cs)
		}
		_, err := oneScale(ti, tq, cs, c.scales, k)
		if c.codes != nil {
			err = nonTernary(ti, cs, k)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "tensor blk.0.attn_q.weight: ") {
			t.Errorf("%s: %v, want an error naming the tensor with %q", c.name, err, c.want)
		}
	}
}

func nan() float64 { var z float64; return z / z }

// TestSplitShards: huggingface_hub's rule: a tensor that would overflow the
// shard starts the next one; a tensor larger than the limit is alone.
func TestSplitShards(t *testing.T) {
	mk := func(sizes ...uint64) []Tensor {
		var ts []Tensor
		for _, s := range sizes {
			ts = append(ts, Tensor{DType: hf.U8, Shape: []uint64{s}})
		}
		return ts
	}
	for _, c := range []struct {
		sizes []uint64
		max   uint64
		want  [][]int
	}{
		{[]uint64{4, 4, 4}, 10, [][]int{{0, 1}, {2}}},
		{[]uint64{4, 20, 4}, 10, [][]int{{0}, {1}, {2}}},
		{[]uint64{4, 4, 2}, 10, [][]int{{0, 1, 2}}},
		{[]uint64{4}, 0, [][]int{{0}}},
	} {
		got := splitShards(mk(c.sizes...), c.max)
		if !slices.EqualFunc(got, c.want, slices.Equal[[]int]) {
			t.Errorf("sizes %v max %d: %v, want %v", c.sizes, c.max, got, c.want)
		}
	}
	if ShardName(0, 1) != "model.safetensors" || ShardName(1, 3) != "model-00002-of-00003.safetensors" {
		t.Errorf("shard names %q %q", ShardName(0, 1), ShardName(1, 3))
	}
}

// TestRemoveStale: a temporary export directory whose process is gone is
// removed; one of a live process is kept, and so are other names.
func TestRemoveStale(t *testing.T) {
	if osx.ProcessAlive(4194303) {
		t.Skip("this platform cannot tell whether a process is alive")
	}
	dir := t.TempDir()
	dead := filepath.Join(dir, ".out.partial-4194303-1")
	live := filepath.Join(dir, ".out.partial-"+strconv.Itoa(os.Getppid())+"-2")
	other := filepath.Join(dir, ".other.partial-4194303-3")
	for _, d := range []string{dead, live, other} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	removeStale(dir, "out")
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Errorf("%s (process gone) was kept", dead)
	}
	for _, d := range []string{live, other} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s was removed", d)
		}
	}
}

// TestPackRows: transformers' pack_weights layout (byte [p, c] holds row
// i·R + p in bits 2i..2i+1, code + 1), the llama rope un-permutation as the
// row map, and the refusal of a code outside −1…+1.
func TestPackRows(t *testing.T) {
	// 8 rows × 2 columns: row h has codes (h%3−1, −(h%3−1))
	codes := make([]int8, 16)
	for h := 0; h < 8; h++ {
		codes[2*h], codes[2*h+1] = int8(h%3-1), int8(-(h%3 - 1))
	}
	dst := make([]byte, 4)
	if !packRows(dst, codes, 2, 2, func(h int) int { return h }) {
		t.Fatal("ternary codes refused")
	}
	// byte [p, c] = Σ_i (code[i·2+p, c] + 1) << 2i, worked by hand:
	// [0,0]: rows 0,2,4,6 col 0 = −1,1,0,−1 → 0 | 2<<2 | 1<<4 | 0<<6 = 24
	want := []byte{24, 146, 97, 73}
	if !slices.Equal(dst, want) {
		t.Fatalf("packed %v, want %v", dst, want)
	}
	// llama's un-permutation as the row map (2 heads of 4 rows: HF row
	// h·4 + j·2 + i is GGUF row h·4 + 2i + j) reads rows 0,2,1,3,4,6,5,7
	perm := func(hr int) int { h, rem := hr/4, hr%4; return h*4 + 2*(rem%2) + rem/2 }
	if !packRows(dst, codes, 2, 2, perm) {
		t.Fatal("ternary codes refused")
	}
	// [0,0]: HF rows 0,2,4,6 = GGUF rows 0,1,4,5 col 0 = −1,0,0,1 → 0 | 1<<2 | 1<<4 | 2<<6 = 148
	if dst[0] != 148 {
		t.Fatalf("un-permuted byte [0,0] = %d, want 148", dst[0])
	}
	for _, bad := range []int8{2, -2, 3} {
		c := slices.Clone(codes)
		c[5] = bad
		if packRows(dst, c, 2, 2, func(h int) int { return h }) {
			t.Errorf("code %d accepted", bad)
		}
	}
}

// TestPackRowsLanes: the eight-column lanes and the byte tail (k = 27) give
// the bytes of the element-wise rule, and a bad code inside a lane is
// reported.
func TestPackRowsLanes(t *testing.T) {
	const k, r = 27, 3
	codes := make([]int8, 4*r*k)
	for i := range codes {
		codes[i] = int8((i*7+i/5)%3 - 1)
	}
	dst := make([]byte, r*k)
	if !packRows(dst, codes, k, r, func(h int) int { return h }) {
		t.Fatal("ternary codes refused")
	}
	for p := 0; p < r; p++ {
		for c := 0; c < k; c++ {
			var want byte
			for i := 0; i < 4; i++ {
				want |= byte(codes[(i*r+p)*k+c]+1) << (2 * i)
			}
			if dst[p*k+c] != want {
				t.Fatalf("byte [%d, %d] = %08b, want %08b", p, c, dst[p*k+c], want)
			}
		}
	}
	for _, bad := range []int8{2, -2, 127, -128} {
		c := slices.Clone(codes)
		c[2*k+3] = bad
		if packRows(dst, c, k, r, func(h int) int { return h }) {
			t.Errorf("code %d in a lane accepted", bad)
		}
	}
}

// TestCheckOut: --force never deletes the input or files an export does not
// write (a hostile run lost the input GGUF and an unrelated file with
// `gguf2hf d/in.gguf --out d --force`); an earlier export is replaced.
func TestCheckOut(t *testing.T) {
	root := t.TempDir()
	d := filepath.Join(root, "d")
	exp := filepath.Join(root, "exp")
	for _, dir := range []string{d, exp} {
		if err := os.Mkdir(dir, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	in := filepath.Join(d, "in.gguf")
	for name, dir := range map[string]string{"in.gguf": d, "config.json": exp, "model-00001-of-00002.safetensors": exp, "model.safetensors.index.json": exp} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o666); err != nil {
			t.Fatal(err)
		}
	}
	other := filepath.Join(root, "other")
	if err := os.Mkdir(other, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, "important.txt"), nil, 0o666); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		out   string
		force bool
		want  string // "" = accepted
	}{
		{d, true, "holds the input"},
		{root, true, "holds the input"},
		{d, false, "holds the input"},
		{other, true, "holds important.txt, which gguf2hf does not write"},
		{other, false, "pass --force"},
		{exp, false, "pass --force"},
		{exp, true, ""},
		{filepath.Join(root, "new"), false, ""},
		{in, true, "is not a directory"},
	} {
		err := checkOut(in, c.out, c.force)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("checkOut(%s, force %v) = %v, want %q", c.out, c.force, err, c.want)
		}
	}
}
