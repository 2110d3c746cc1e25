package hf_test

import (
	"bufio"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/hf"
)

// mappedRSS returns the resident kB of this process's mappings of path,
// from /proc/self/smaps.
func mappedRSS(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skip("no /proc/self/smaps:", err)
	}
	defer f.Close()
	abs, _ := filepath.Abs(path)
	total, in := 0, false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		fields := strings.Fields(line)
		if len(fields) >= 5 && strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":") {
			in = strings.HasSuffix(line, " "+abs)
			continue
		}
		if in && len(fields) >= 2 && fields[0] == "Rss:" {
			kb, _ := strconv.Atoi(fields[1])
			total += kb
		}
	}
	return total
}

// TestReleaseDropsPages: after Release the tensor's pages no longer count
// in this process's resident set (BR-23: RSS must not grow with the model).
func TestReleaseDropsPages(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "config.json"), []byte(tinyConfig))
	const n = 1 << 20 // 4 MiB of F32
	vals := make([]float32, n)
	for i := range vals {
		vals[i] = float32(i)
	}
	p := filepath.Join(dir, "model.safetensors")
	if err := hf.WriteSafetensors(p, []hf.WriteTensor{f32Tensor("w", []uint64{n}, vals...)}, nil); err != nil {
		t.Fatal(err)
	}
	c, err := hf.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ref, _ := c.Lookup("w")
	d, err := c.Read(ref)
	if err != nil {
		t.Fatal(err)
	}
	x, err := d.Float32s(nil)
	if err != nil || x[n-1] != n-1 {
		t.Fatalf("read %v", err)
	}
	before := mappedRSS(t, p)
	if before < 3000 {
		t.Skipf("mapping shows %d kB resident after a full read; cannot measure here", before)
	}
	d.Release()
	after := mappedRSS(t, p)
	if after > 16 { // at most the two partial edge pages and the header page
		t.Errorf("after Release %d kB still resident (was %d kB)", after, before)
	}
	// The data is still readable.
	y, _ := d.Float32s(x)
	if y[12345] != 12345 || math.IsNaN(float64(y[0])) {
		t.Error("data changed after Release")
	}
}

// TestBF16EdgeValues is the input side of BR-22: bf16 decode is exact for
// 70000 (stored as 70144), -1e-8, 3e38, +Inf, NaN and a subnormal.
func TestBF16EdgeValues(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "config.json"), []byte(tinyConfig))
	bits := []uint16{0x4789, 0xb22c, 0x7f62, 0x7f80, 0x7fc1, 0x0001}
	raw := make([]byte, 2*len(bits))
	for i, b := range bits {
		raw[2*i], raw[2*i+1] = byte(b), byte(b>>8)
	}
	if err := hf.WriteSafetensors(filepath.Join(dir, "model.safetensors"), []hf.WriteTensor{
		{Name: "edge", DType: hf.BF16, Shape: []uint64{uint64(len(bits))}, Data: hf.RawData(raw)},
	}, nil); err != nil {
		t.Fatal(err)
	}
	c, err := hf.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	d, _ := c.Read(c.Tensors[0])
	x, err := d.Float32s(nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, b := range bits {
		if got := math.Float32bits(x[i]); got != uint32(b)<<16 {
			t.Errorf("value %d: bits %#08x, want %#08x", i, got, uint32(b)<<16)
		}
	}
	if x[0] != 70144 || !math.IsInf(float64(x[3]), 1) || !math.IsNaN(float64(x[4])) || x[5] != math.Float32frombits(0x00010000) {
		t.Errorf("decoded %v", x)
	}
}
