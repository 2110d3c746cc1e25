package format

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/presets"
)

// TestKernelConfigMD5 is acceptance a: the six setup_env argument sets of
// spec codegen.md §5 give the reference's kernel_config.ini byte for byte.
func TestKernelConfigMD5(t *testing.T) {
	want := map[string]map[string]string{
		"bitnet_b1_58-large":         {TL1Arch: "c63787f65d28e0c236bbbdac7b7a5b05", TL2Arch: "2f9eabbae513c05ad1b2df9ff620fdae"},
		"bitnet_b1_58-3B":            {TL1Arch: "f87876264a46ec16ede68a906fae864b", TL2Arch: "2c573a76a2f15b3312db1a534560016d"},
		"Llama3-8B-1.58-100B-tokens": {TL1Arch: "b8da571a81ac81b05dde05fda21872fb", TL2Arch: "4e1d0269e53d6f9aadfdc4ff546781ba"},
	}
	for model, archs := range want {
		for arch, sum := range archs {
			t.Run(model+"/"+arch, func(t *testing.T) {
				m, err := presets.Get(model)
				if err != nil {
					t.Fatal(err)
				}
				ks := presetKernels(t, m, arch)
				if err := Validate(arch, ks); err != nil {
					t.Fatal(err)
				}
				h := md5.Sum(KernelConfig(ks))
				if got := hex.EncodeToString(h[:]); got != sum {
					t.Errorf("ini md5 %s, want %s\n%s", got, sum, KernelConfig(ks))
				}
			})
		}
	}
}

func TestKernelConfigExample(t *testing.T) {
	// spec codegen.md §3.1: TL2 3B, 171 bytes.
	ks, _ := Kernels([][2]int{{3200, 8640}, {3200, 3200}, {8640, 3200}}, []int{160, 320, 320}, []int{96, 96, 96}, []int{32, 32, 32})
	got := KernelConfig(ks)
	want := "[Kernels_0]\nm = 3200\nk = 8640\nbm = 160\nbk = 96\nbmm = 32\n\n" +
		"[Kernels_1]\nm = 3200\nk = 3200\nbm = 320\nbk = 96\nbmm = 32\n\n" +
		"[Kernels_2]\nm = 8640\nk = 3200\nbm = 320\nbk = 96\nbmm = 32\n\n"
	if string(got) != want || len(got) != 171 {
		t.Errorf("got %d bytes:\n%s", len(got), got)
	}
	back, err := ParseKernelConfig(got)
	if err != nil || !reflect.DeepEqual(back, ks) {
		t.Errorf("round trip: %v %+v", err, back)
	}
}

func TestParseKernelConfig(t *testing.T) {
	// The golden tiny TL1 ini: bm is BM, bmm is bm.
	data, err := os.ReadFile(filepath.Join("..", "testdata", "golden", "tiny-bitnet", "gguf", "kernel_config_tl1.ini"))
	if err != nil {
		t.Fatal(err)
	}
	ks, err := ParseKernelConfig(data)
	if err != nil {
		t.Fatal(err)
	}
	want := []Kernel{{512, 256, 256, 128, 32}, {256, 256, 128, 64, 64}, {128, 256, 128, 128, 32}, {256, 512, 256, 64, 64}}
	if !reflect.DeepEqual(ks, want) {
		t.Errorf("got %+v", ks)
	}
	if !bytes.Equal(KernelConfig(ks), data) {
		t.Error("re-rendered ini differs from the golden file")
	}
	lenient := "; comment\n[Kernels_0]\nM: 64\n  k=32 \nBM = 32\nbk = 16\nbmm = 32\nextra = 1\n"
	if ks, err := ParseKernelConfig([]byte(lenient)); err != nil || ks[0] != (Kernel{64, 32, 32, 16, 32}) {
		t.Errorf("lenient: %v %+v", err, ks)
	}
	bad := map[string]string{
		"empty":       "",
		"outside":     "m = 1\n",
		"missing key": "[a]\nm = 1\nk = 2\nbm = 1\nbk = 1\n",
		"dup key":     "[a]\nm = 1\nm = 2\nk = 2\nbm = 1\nbk = 1\nbmm = 1\n",
		"dup section": "[a]\nm = 1\nk = 2\nbm = 1\nbk = 1\nbmm = 1\n[a]\n",
		"not int":     "[a]\nm = x\n",
		"negative":    "[a]\nm = -1\n",
		"no equals":   "[a]\nm 1\n",
		"bad header":  "[a\n",
	}
	for name, in := range bad {
		if _, err := ParseKernelConfig([]byte(in)); err == nil {
			t.Errorf("%s: accepted %q", name, in)
		}
	}
}

func FuzzKernelConfig(f *testing.F) {
	f.Add([]byte("[Kernels_0]\nm = 1536\nk = 4096\nbm = 256\nbk = 96\nbmm = 32\n\n"))
	f.Add([]byte("[x]\nM:1\nk=2\nbm=3\nbk=4\nbmm=5\n[y]\n"))
	f.Add([]byte("[]\n=\n;\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ks, err := ParseKernelConfig(data)
		if err != nil {
			return
		}
		// Whatever parses re-renders to an ini that parses to the same kernels.
		back, err := ParseKernelConfig(KernelConfig(ks))
		if err != nil || !reflect.DeepEqual(back, ks) {
			t.Fatalf("round trip: %v", err)
		}
		for _, arch := range []string{TL1Arch, TL2Arch} {
			_ = Validate(arch, ks)
		}
	})
}

func violations(t *testing.T, err error) []string {
	t.Helper()
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("want *ValidationError, got %v", err)
	}
	var out []string
	for _, v := range ve.Violations {
		out = append(out, v.String())
	}
	return out
}

func mustKernels(t *testing.T, model string, bms, bks, sms []int) []Kernel {
	t.Helper()
	m, err := presets.Get(model)
	if err != nil {
		t.Fatal(err)
	}
	ks, err := Kernels(m.Codegen[TL1Arch].Shapes, bms, bks, sms)
	if err != nil {
		t.Fatal(err)
	}
	return ks
}

// TestValidate covers every rule and BR-12 / BR-13 (a)–(c), (e).
func TestValidate(t *testing.T) {
	cases := []struct {
		name  string
		arch  string
		model string
		BM    []int
		BK    []int
		bm    []int
		want  []string // exact violation lines; nil = valid
	}{
		{"BR-12 tl1 bm=16", TL1Arch, "bitnet_b1_58-large", []int{256, 128, 256}, []int{128, 64, 128}, []int{16, 16, 16}, []string{
			"kernel 0 (M=1536, K=4096): bm=16 not allowed for TL1 (allowed: 32, 64)",
			"kernel 1 (M=1536, K=1536): bm=16 not allowed for TL1 (allowed: 32, 64)",
			"kernel 2 (M=4096, K=1536): bm=16 not allowed for TL1 (allowed: 32, 64)",
		}},
		{"BR-12 tl2 bm=16", TL2Arch, "bitnet_b1_58-large", []int{256, 128, 256}, []int{96, 192, 96}, []int{16, 32, 32}, []string{
			"kernel 0 (M=1536, K=4096): bm=16 not allowed for TL2 (allowed: 32)",
		}},
		{"BR-13a M%BM", TL1Arch, "bitnet_b1_58-3B", []int{160, 320, 300}, []int{64, 128, 64}, []int{32, 64, 32}, []string{
			"kernel 2 (M=8640, K=3200): BM=300 does not divide M (M % BM = 240, must be 0)",
			"kernel 2 (M=8640, K=3200): BM=300 is not a multiple of bm=32 (BM % bm must be 0)",
		}},
		{"BR-13b K%BK", TL1Arch, "bitnet_b1_58-3B", []int{160, 320, 320}, []int{64, 128, 96}, []int{32, 64, 32}, []string{
			"kernel 2 (M=8640, K=3200): BK=96 does not divide K (K % BK = 32, must be 0)",
		}},
		{"BR-13c BM%bm", TL1Arch, "bitnet_b1_58-3B", []int{160, 320, 320}, []int{64, 128, 64}, []int{64, 64, 32}, []string{
			"kernel 0 (M=3200, K=8640): BM=160 is not a multiple of bm=64 (BM % bm must be 0)",
		}},
		{"BR-13e valid tl2 3B", TL2Arch, "bitnet_b1_58-3B", []int{160, 320, 320}, []int{96, 96, 96}, []int{32, 32, 32}, nil},
		{"BR-13f valid tl2 large", TL2Arch, "bitnet_b1_58-large", []int{256, 128, 256}, []int{96, 192, 96}, []int{32, 32, 32}, nil},
		{"tl1 BK % by", TL1Arch, "bitnet_b1_58-large", []int{256, 128, 256}, []int{128, 64, 4}, []int{32, 64, 32}, []string{
			"kernel 2 (M=4096, K=1536): BK=4 is not a multiple of 256/bm=8 (whole compute blocks)",
		}},
		{"BK > 256", TL1Arch, "bitnet_b1_58-large", []int{256, 128, 256}, []int{512, 64, 128}, []int{32, 64, 32}, []string{
			"kernel 0 (M=1536, K=4096): BK=512 exceeds 256 (int16 block sums would overflow)",
		}},
		{"tl2 BK%24 and C'", TL2Arch, "bitnet_b1_58-large", []int{256, 128, 256}, []int{128, 100, 96}, []int{32, 32, 32}, []string{
			"kernel 0 (M=1536, K=4096): BK=128 is not a multiple of 24 (TL2 packs 8 triples per sign word)",
			"kernel 1 (M=1536, K=1536): BK=100 leaves K % BK = 36, not a multiple of 32 ((K % BK) % 32 must be 0)",
			"kernel 1 (M=1536, K=1536): BK=100 is not a multiple of 24 (TL2 packs 8 triples per sign word)",
		}},
		{"positivity", TL2Arch, "bitnet_b1_58-large", []int{-256, 128, 256}, []int{96, 0, 96}, []int{32, 32, 32}, []string{
			"kernel 0 (M=1536, K=4096): BM=-256 must be positive",
			"kernel 1 (M=1536, K=1536): BK=0 must be positive",
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ks := mustKernels(t, c.model, c.BM, c.BK, c.bm)
			err := Validate(c.arch, ks)
			if c.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if got := violations(t, err); !reflect.DeepEqual(got, c.want) {
				t.Errorf("got\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(c.want, "\n  "))
			}
		})
	}
	// two_k > 256 (TL2Arch): K=1000, BK=264 is > 256 too; use K=600 with BK=... no
	// multiple of 24 ≤ 256 leaves > 256, so check it through a large BK.
	ks := []Kernel{{M: 64, K: 800, BM: 64, BK: 480, Bm: 32}}
	got := violations(t, Validate(TL2Arch, ks))
	if !strings.Contains(strings.Join(got, "|"), "two_k = K % BK = 320 exceeds 256") {
		t.Errorf("two_k rule: %v", got)
	}
	dup := []Kernel{{64, 64, 64, 64, 32}, {64, 64, 64, 64, 32}}
	if got := violations(t, Validate(TL1Arch, dup)); len(got) != 1 || !strings.Contains(got[0], "already listed as kernel 0") {
		t.Errorf("duplicate: %v", got)
	}
}

// TestBR13d: list lengths (rule A) fail with the counts.
func TestBR13d(t *testing.T) {
	m, _ := presets.Get("bitnet_b1_58-large")
	_, err := Kernels(m.Codegen[TL1Arch].Shapes, []int{256, 128}, []int{128, 64, 128}, []int{32, 64, 32})
	if err == nil || err.Error() != "got 2 BM values for 3 shapes: give one BM, BK and bm per shape" {
		t.Errorf("got %v", err)
	}
}

// TestTL2Split checks spec codegen.md §2.3's table (BR-13 e/f numbers).
func TestTL2Split(t *testing.T) {
	for _, c := range []struct{ k, bk, three, two int }{
		{4096, 96, 4032, 64}, {1536, 192, 1536, 0}, {1536, 96, 1536, 0}, {8640, 96, 8640, 0},
		{3200, 96, 3168, 32}, {14336, 96, 14304, 32},
	} {
		kk := Kernel{K: c.k, BK: c.bk}
		if kk.ThreeK() != c.three || kk.TwoK() != c.two {
			t.Errorf("K=%d BK=%d: three_k %d two_k %d, want %d %d", c.k, c.bk, kk.ThreeK(), kk.TwoK(), c.three, c.two)
		}
	}
}

// TestShapesFromConfig is BR-14 plus the other presets and the tiny model.
func TestShapesFromConfig(t *testing.T) {
	want := map[string][][2]int{
		"Falcon3-1B-Instruct-1.58bit": {{2048, 2048}, {1024, 2048}, {8192, 2048}, {2048, 8192}},
		"Falcon3-7B-Instruct-1.58bit": {{3072, 3072}, {1024, 3072}, {23040, 3072}, {3072, 23040}},
		"BitNet-b1.58-2B-4T":          {{2560, 2560}, {640, 2560}, {6912, 2560}, {2560, 6912}},
		"bitnet-embedding-0.6b":       {{2048, 1024}, {1024, 1024}, {1024, 2048}, {3072, 1024}, {1024, 3072}},
		"bitnet_b1_58-large":          {{1536, 1536}, {4096, 1536}, {1536, 4096}},
	}
	for name, w := range want {
		m, err := presets.Get(name)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ShapesFromConfig(m.Config)
		if err != nil || !reflect.DeepEqual(got, w) {
			t.Errorf("%s: got %v (%v), want %v", name, got, err, w)
		}
	}
	cfg, err := ReadConfigDir(filepath.Join("..", "testdata", "golden", "tiny-bitnet", "hf"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := ShapesFromConfig(cfg)
	if w := [][2]int{{256, 256}, {128, 256}, {512, 256}, {256, 512}}; err != nil || !reflect.DeepEqual(got, w) {
		t.Errorf("tiny: %v %v", got, err)
	}
	// head_dim null falls back to hidden/heads.
	got, err = ShapesFromConfig(map[string]any{"hidden_size": 64.0, "intermediate_size": 128.0, "num_attention_heads": 4.0, "head_dim": nil})
	if w := [][2]int{{64, 64}, {128, 64}, {64, 128}}; err != nil || !reflect.DeepEqual(got, w) {
		t.Errorf("null head_dim: %v %v", got, err)
	}
	if _, err := ShapesFromConfig(map[string]any{"hidden_size": 64.0}); err == nil || !strings.Contains(err.Error(), "intermediate_size") {
		t.Errorf("missing key: %v", err)
	}
	if _, err := ShapesFromConfig(map[string]any{"hidden_size": "x"}); err == nil {
		t.Error("string hidden_size accepted")
	}
}

// TestConfigFor checks the documented tiling rule, BR-14 and BR-25.
func TestConfigFor(t *testing.T) {
	f7 := [][2]int{{3072, 3072}, {1024, 3072}, {23040, 3072}, {3072, 23040}}
	ks, err := ConfigFor(TL2Arch, f7)
	if err != nil {
		t.Fatal(err)
	}
	want := []Kernel{{3072, 3072, 256, 96, 32}, {1024, 3072, 256, 96, 32}, {23040, 3072, 256, 96, 32}, {3072, 23040, 256, 96, 32}}
	if !reflect.DeepEqual(ks, want) {
		t.Errorf("Falcon3-7B TL2Arch: %+v", ks)
	}
	ks, err = ConfigFor(TL1Arch, [][2]int{{3200, 8640}, {640, 2560}, {8640, 3200}})
	want = []Kernel{{3200, 8640, 160, 96, 32}, {640, 2560, 160, 128, 32}, {8640, 3200, 192, 128, 32}}
	if err != nil || !reflect.DeepEqual(ks, want) {
		t.Errorf("TL1: %+v %v", ks, err)
	}
	// TL2 falls back from 96 when K % 96 is not a multiple of 32.
	ks, err = ConfigFor(TL2Arch, [][2]int{{64, 240}})
	if err != nil || ks[0].BK != 240 {
		t.Errorf("K=240: %+v %v", ks, err)
	}
	// BR-25: K = 5460 has no TL2 BK and no TL1 BK (5460 % 16 = 4).
	for _, arch := range []string{TL2Arch, TL1Arch} {
		_, err = ConfigFor(arch, [][2]int{{5460, 2048}, {2048, 5460}})
		var se *ShapeError
		// gate/up [5460, 2048] fail too: no BM that is a multiple of 32 divides 5460.
		if !errors.As(err, &se) || len(se.Reasons) != 2 || !strings.HasPrefix(se.Reasons[0], "(M=5460, K=2048): M % 32 = 20") ||
			!strings.HasPrefix(se.Reasons[1], "(M=2048, K=5460): ") || !strings.Contains(se.Reasons[1], "K % ") {
			t.Errorf("%s BR-25: %v", arch, err)
		}
	}
	// Every preset gets a valid set for both arches.
	for _, m := range presets.All() {
		shapes, err := ShapesFromConfig(m.Config)
		if err != nil {
			t.Fatal(err)
		}
		for _, arch := range []string{TL1Arch, TL2Arch} {
			if _, err := ConfigFor(arch, shapes); err != nil {
				t.Errorf("%s %s: %v", m.Name, arch, err)
			}
		}
	}
}

func ExampleConfigFor() {
	ks, err := ConfigFor(TL2Arch, [][2]int{{2048, 2048}, {1024, 2048}, {8192, 2048}, {2048, 8192}})
	if err != nil {
		panic(err)
	}
	for _, k := range ks {
		fmt.Printf("M=%d K=%d BM=%d BK=%d bm=%d three_k=%d two_k=%d\n", k.M, k.K, k.BM, k.BK, k.Bm, k.ThreeK(), k.TwoK())
	}
	// Output:
	// M=2048 K=2048 BM=256 BK=96 bm=32 three_k=2016 two_k=32
	// M=1024 K=2048 BM=256 BK=96 bm=32 three_k=2016 two_k=32
	// M=8192 K=2048 BM=256 BK=96 bm=32 three_k=2016 two_k=32
	// M=2048 K=8192 BM=256 BK=96 bm=32 three_k=8160 two_k=32
}

func ExampleParseKernelConfig() {
	ks, err := ParseKernelConfig([]byte("[Kernels_0]\nm = 1536\nk = 4096\nbm = 256\nbk = 96\nbmm = 32\n\n"))
	if err != nil {
		panic(err)
	}
	k, ok := LookupKernel(ks, 1536, 4096)
	fmt.Println(ok, k.BM, k.BK, k.Bm)
	// Output: true 256 96 32
}

// presetKernels returns a preset's kernel set for arch: setup_env's table
// when it has one, else ConfigFor over the shapes of its config.
func presetKernels(t *testing.T, m presets.Model, arch string) []Kernel {
	if k, ok := m.Codegen[arch]; ok {
		ks, err := Kernels(k.Shapes, k.BM, k.BK, k.Bm)
		if err != nil {
			t.Fatal(err)
		}
		return ks
	}
	shapes, err := ShapesFromConfig(m.Config)
	if err != nil {
		t.Fatalf("%s: %v", m.Name, err)
	}
	ks, err := ConfigFor(arch, shapes)
	if err != nil {
		t.Fatalf("%s: %v", m.Name, err)
	}
	return ks
}
