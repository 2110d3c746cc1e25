package codegen

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/format"
	"github.com/bitnet-convert/bitnet-convert/presets"
)

// tinyShapes reads the golden tiny model's kernel_config for arch.
func tinyKernels(t *testing.T, arch string) []format.Kernel {
	data, err := os.ReadFile(filepath.Join("..", "testdata", "golden", "tiny-bitnet", "gguf", "kernel_config_"+arch+".ini"))
	if err != nil {
		t.Fatal(err)
	}
	ks, err := format.ParseKernelConfig(data)
	if err != nil {
		t.Fatal(err)
	}
	return ks
}

// presetKernels returns a preset's kernel set for arch: setup_env's table
// when it has one, else format.ConfigFor over the shapes of its config.
func presetKernels(t *testing.T, m presets.Model, arch string) []format.Kernel {
	if k, ok := m.Codegen[arch]; ok {
		ks, err := format.Kernels(k.Shapes, k.BM, k.BK, k.Bm)
		if err != nil {
			t.Fatal(err)
		}
		return ks
	}
	shapes, err := format.ShapesFromConfig(m.Config)
	if err != nil {
		t.Fatalf("%s: %v", m.Name, err)
	}
	ks, err := format.ConfigFor(arch, shapes)
	if err != nil {
		t.Fatalf("%s: %v", m.Name, err)
	}
	return ks
}

// edgeKernels are valid corner cases: TL2 with BK > K (three_k = 0, only
// the pair part) and with a large two_k (224); TL1 with one compute
// block per K block and bm = 64 tiles of one row block.
var edgeKernels = map[string][]format.Kernel{
	format.TL2Arch: {{M: 64, K: 128, BM: 64, BK: 144, Bm: 32}, {M: 96, K: 464, BM: 32, BK: 240, Bm: 32}},
	format.TL1Arch: {{M: 64, K: 48, BM: 64, BK: 48, Bm: 32}, {M: 128, K: 32, BM: 64, BK: 32, Bm: 64}},
}

// allKernels is the union of every preset's kernels and the tiny golden
// ones; with short it keeps only the tiny and bitnet_b1_58-large shapes. A
// shape shared by two sets must have the same tiling in both (it does: the
// derived sets all come from format.ConfigFor), so every preset's tiling is tested.
func allKernels(t *testing.T, arch string, short bool) []format.Kernel {
	ks := append(tinyKernels(t, arch), edgeKernels[arch]...)
	for _, m := range presets.All() {
		if short && m.Name != "bitnet_b1_58-large" {
			continue
		}
		for _, k := range presetKernels(t, m, arch) {
			prev, dup := format.LookupKernel(ks, k.M, k.K)
			if !dup {
				ks = append(ks, k)
			} else if prev != k {
				t.Fatalf("%s %s: kernel %+v shadowed by %+v from another set", m.Name, arch, k, prev)
			}
		}
	}
	return ks
}

// scalarReference is spec codegen.md §4.1: per activation row, lut_scale =
// 127/max|b|, q = round-half-even(b·lut_scale), y = f32(f32(Σ t·q) / lut_scale) · w_scale.
func scalarReference(tern []int8, m, k int, acts []float32, bs int, wScale float32) []float32 {
	out := make([]float32, bs*m)
	q := make([]int32, k)
	for b := 0; b < bs; b++ {
		row := acts[b*k : (b+1)*k]
		var mx float32
		for _, x := range row {
			mx = max(mx, float32(math.Abs(float64(x))))
		}
		s := float32(127) / mx
		for j, x := range row {
			if mx == 0 {
				q[j] = 0
				continue
			}
			q[j] = int32(math.RoundToEven(float64(float32(x * s))))
		}
		for i := 0; i < m; i++ {
			w := tern[i*k : (i+1)*k]
			var sum int32
			for j, t := range w {
				sum += int32(t) * q[j]
			}
			out[b*m+i] = float32(float32(sum)/s) * wScale
		}
	}
	return out
}

func f32bytes(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func hostHasAVX2() bool {
	data, err := os.ReadFile("/proc/cpuinfo")
	return err == nil && bytes.Contains(data, []byte(" avx2"))
}

// variant is one way of building and running the harness.
type variant struct {
	name   string
	arch   string
	cxx    string
	flags  []string
	run    []string // prefix for running the binary (qemu)
	canRun func() bool
	short  bool // always use the short kernel set (the scalar fallbacks)
}

func hostOnly() bool { return true }

func qemuPresent() bool {
	_, err := exec.LookPath("qemu-aarch64")
	return err == nil
}

// variants: TL2 with AVX2 and TL1 with NEON (under qemu-user) over every
// kernel, plus both scalar fallbacks (no -mavx2; TL1 built for the host)
// over the short set.
func variants() []variant {
	x86, arm := "g++", "aarch64-linux-gnu-g++"
	var armRun []string
	armCanRun := qemuPresent
	switch runtime.GOARCH {
	case "arm64":
		x86, arm = "x86_64-linux-gnu-g++", "g++"
		armCanRun = hostOnly
	default:
		armRun = []string{"qemu-aarch64", "-L", "/usr/aarch64-linux-gnu"}
	}
	x86Run := hostHasAVX2
	if runtime.GOARCH != "amd64" {
		x86Run = func() bool { return false }
	}
	return []variant{
		{name: "tl2-avx2", arch: format.TL2Arch, cxx: x86, flags: []string{"-mavx2", "-DGGML_BITNET_X86_TL2"}, canRun: x86Run},
		{name: "tl1-neon", arch: format.TL1Arch, cxx: arm, flags: []string{"-DGGML_BITNET_ARM_TL1"}, run: armRun, canRun: armCanRun},
		{name: "tl2-scalar", arch: format.TL2Arch, cxx: "g++", flags: []string{"-mno-avx2", "-DGGML_BITNET_X86_TL2"}, canRun: hostOnly, short: true},
		{name: "tl1-scalar", arch: format.TL1Arch, cxx: "g++", flags: []string{"-DGGML_BITNET_ARM_TL1"}, canRun: func() bool { return runtime.GOARCH != "arm64" }, short: true},
	}
}

// needTool fails (CI) or skips (elsewhere) when name is not installed.
func needTool(t *testing.T, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s not found; CI must install it (g++, g++-aarch64-linux-gnu, qemu-user)", name)
		}
		t.Skipf("%s not installed", name)
	}
}

// TestCompiledKernels is acceptance b and c: the generated header for every
// preset shape (and the tiny golden shapes) compiles against our
// ggml-bitnet.h stand-in, and the compiled kernels, fed weights packed by
// format.TransformTL1/TransformTL2, equal the §4 scalar reference bit for bit (TL2
// with batch sizes 1 and 8; TL1 batch 1 under qemu-user).
func TestCompiledKernels(t *testing.T) {
	for _, tc := range variants() {
		arch := tc.arch
		t.Run(tc.name, func(t *testing.T) {
			needTool(t, tc.cxx)
			ks := allKernels(t, arch, testing.Short() || tc.short)
			dir := t.TempDir()
			if err := Generate(arch, ks, dir); err != nil {
				t.Fatal(err)
			}
			bin := filepath.Join(dir, "harness")
			args := append([]string{"-std=c++17", "-O2", "-Wall", "-Wextra", "-Werror",
				"-I", filepath.Join(dir, "include"), "-I", filepath.Join("testdata", "cpp")}, tc.flags...)
			args = append(args, filepath.Join("testdata", "cpp", "harness.cpp"), "-o", bin)
			if out, err := exec.Command(tc.cxx, args...).CombinedOutput(); err != nil {
				t.Fatalf("%s %s: %v\n%s", tc.cxx, strings.Join(args, " "), err, out)
			}
			if !tc.canRun() {
				if os.Getenv("CI") != "" && tc.name == "tl1-neon" {
					t.Fatal("qemu-aarch64 not found; CI must install qemu-user")
				}
				t.Skip("compiled; cannot run the kernels on this host")
			}
			batches := []int{1, 8}
			if arch == format.TL1Arch {
				batches = []int{1}
			}
			r := rand.New(rand.NewPCG(uint64(len(arch)), 7))
			var manifest strings.Builder
			want := map[string][]float32{}
			for i, k := range ks {
				tern := make([]int8, k.M*k.K)
				for j := 0; j < len(tern); j += 32 {
					bits := r.Uint64()
					for b := 0; b < 32 && j+b < len(tern); b++ {
						tern[j+b] = int8(bits>>(2*b)&3%3) - 1
					}
				}
				wScale := float32(0.25 + r.Float64())
				var data []byte
				var err error
				if arch == format.TL1Arch {
					data, err = format.TransformTL1(tern, k.M, k.K, k.BM, k.BK, k.Bm, wScale)
				} else {
					data, err = format.TransformTL2(tern, k.M, k.K, k.BM, k.BK, wScale)
				}
				if err != nil {
					t.Fatalf("kernel %d %v: %v", i, k, err)
				}
				wpath := filepath.Join(dir, fmt.Sprintf("w%d.bin", i))
				if err := os.WriteFile(wpath, data, 0o644); err != nil {
					t.Fatal(err)
				}
				for _, bs := range batches {
					acts := make([]float32, bs*k.K)
					for j := range acts {
						acts[j] = float32(r.NormFloat64())
					}
					// Row 0: max |b| = 127 makes lut_scale exactly 1, so the
					// x.5 entries are rounding ties (half to even).
					acts[0] = 127
					for j := 1; j < 17; j++ {
						acts[j] = float32(r.IntN(200)-100) + 0.5
					}
					apath := filepath.Join(dir, fmt.Sprintf("a%d_%d.bin", i, bs))
					opath := filepath.Join(dir, fmt.Sprintf("o%d_%d.bin", i, bs))
					if err := os.WriteFile(apath, f32bytes(acts), 0o644); err != nil {
						t.Fatal(err)
					}
					fmt.Fprintf(&manifest, "%d %d %d %s %s %s\n", k.M, k.K, bs, wpath, apath, opath)
					want[opath] = scalarReference(tern, k.M, k.K, acts, bs, wScale)
				}
			}
			mpath := filepath.Join(dir, "manifest.txt")
			if err := os.WriteFile(mpath, []byte(manifest.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			cmdArgs := append(append([]string{}, tc.run...), bin, mpath)
			if out, err := exec.Command(cmdArgs[0], cmdArgs[1:]...).CombinedOutput(); err != nil {
				t.Fatalf("harness: %v\n%s", err, out)
			}
			for opath, w := range want {
				got, err := os.ReadFile(opath)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, f32bytes(w)) {
					n := 0
					for j := 0; j < len(w) && 4*j+4 <= len(got); j++ {
						g := math.Float32frombits(binary.LittleEndian.Uint32(got[4*j:]))
						if math.Float32bits(g) != math.Float32bits(w[j]) {
							if n < 3 {
								t.Errorf("%s: output %d = %v, reference %v", filepath.Base(opath), j, g, w[j])
							}
							n++
						}
					}
					t.Errorf("%s: %d of %d outputs differ", filepath.Base(opath), n, len(w))
				}
			}
			t.Logf("%s: %d kernels checked bit for bit", tc.name, len(ks))
		})
	}
}
