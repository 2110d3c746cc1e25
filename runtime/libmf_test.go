package runtime

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"sort"
	"strconv"
	"testing"

	"golang.org/x/sys/cpu"

	"github.com/bitnet-convert/bitnet-convert/presets"
)

// libmHarness is the C side of TestGlibcSinCosf. Built with -O0
// -fno-builtin so that every sinf, cosf and powf is a call into the C
// library (no constant folding, no merging of sinf+cosf into sincosf).
//
//	harness rope BASE HEADDIM NPOS: writes powf(BASE, -2.0f/HEADDIM), then
//	  for pos in [0, NPOS), pair i: theta (starting at (float)pos and
//	  multiplied by the scale once per pair, as ggml_rope_cache_init does),
//	  sinf(theta), cosf(theta); float32 little-endian.
//	harness list: reads float32 values on stdin, writes sinf, cosf of each.
const libmHarness = `#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv) {
	if (argc == 5 && strcmp(argv[1], "rope") == 0) {
		float base = strtof(argv[2], 0);
		int hd = atoi(argv[3]), npos = atoi(argv[4]);
		float scale = powf(base, -2.0f / (float) hd);
		fwrite(&scale, 4, 1, stdout);
		for (int p = 0; p < npos; p++) {
			float theta = (float) p;
			for (int i = 0; i < hd / 2; i++) {
				float r[3] = {theta, sinf(theta), cosf(theta)};
				fwrite(r, 4, 3, stdout);
				theta *= scale;
			}
		}
		return 0;
	}
	if (argc == 2 && strcmp(argv[1], "list") == 0) {
		float x;
		while (fread(&x, 4, 1, stdin) == 1) {
			float r[2] = {sinf(x), cosf(x)};
			fwrite(r, 4, 2, stdout);
		}
		return 0;
	}
	return 2;
}
`

// buildLibmHarness compiles libmHarness with the system C compiler. It
// skips the test on hosts where the comparison has no meaning (not
// linux/amd64: glibcSinf models glibc's x86-64 build) or no C compiler is
// installed, and fails instead under CI=true.
func buildLibmHarness(t *testing.T) string {
	t.Helper()
	ci := os.Getenv("CI") == "true"
	if goruntime.GOOS != "linux" || goruntime.GOARCH != "amd64" {
		t.Skipf("the sinf/cosf model is glibc's x86-64 build; host is %s/%s", goruntime.GOOS, goruntime.GOARCH)
	}
	var cc string
	for _, name := range []string{os.Getenv("CC"), "cc", "gcc", "clang"} {
		if name == "" {
			continue
		}
		if p, err := exec.LookPath(name); err == nil {
			cc = p
			break
		}
	}
	if cc == "" {
		if ci {
			t.Fatal("no C compiler (cc, gcc, clang) to build the libm harness; CI must install one (.ci/run installs g++)")
		}
		t.Skip("no C compiler to build the libm harness")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "libm.c")
	if err := os.WriteFile(src, []byte(libmHarness), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "libm")
	if out, err := exec.Command(cc, "-O0", "-fno-builtin", "-o", bin, src, "-lm").CombinedOutput(); err != nil {
		t.Fatalf("build libm harness: %v\n%s", err, out)
	}
	return bin
}

// ropeConfig is one (freq_base, head_dim, positions) of a supported model.
type ropeConfig struct {
	base  float32
	hd    int
	nPos  int
	model string
}

// presetRopeConfigs lists the rope of every preset (its rope_theta, head
// dimension and max_position_embeddings, 32768 when the preset has none),
// plus head_dim 64 with each preset theta, deduplicated.
func presetRopeConfigs(t *testing.T) []ropeConfig {
	t.Helper()
	num := func(c map[string]any, key string) (float64, bool) {
		switch v := c[key].(type) {
		case int64:
			return float64(v), true
		case float64:
			return v, true
		}
		return 0, false
	}
	seen := map[[3]float64]bool{}
	var out []ropeConfig
	add := func(c ropeConfig) {
		k := [3]float64{float64(c.base), float64(c.hd), float64(c.nPos)}
		if !seen[k] {
			seen[k] = true
			out = append(out, c)
		}
	}
	maxPos := 0
	thetas := map[float32]int{}
	for _, m := range presets.All() {
		theta, ok := num(m.Config, "rope_theta")
		if !ok {
			theta = 10000
		}
		hidden, _ := num(m.Config, "hidden_size")
		heads, _ := num(m.Config, "num_attention_heads")
		hd, ok := num(m.Config, "head_dim")
		if !ok && heads > 0 {
			hd = hidden / heads
		}
		npos, ok := num(m.Config, "max_position_embeddings")
		if !ok {
			npos = 32768
		}
		if hd <= 0 {
			t.Fatalf("preset %s: no head dimension", m.Name)
		}
		add(ropeConfig{float32(theta), int(hd), int(npos), m.Name})
		maxPos = max(maxPos, int(npos))
		thetas[float32(theta)] = max(thetas[float32(theta)], int(npos))
	}
	var bases []float32
	for b := range thetas {
		bases = append(bases, b)
	}
	sort.Slice(bases, func(i, j int) bool { return bases[i] < bases[j] })
	for _, b := range bases {
		add(ropeConfig{b, 64, thetas[b], "head_dim 64"})
	}
	return out
}

// TestGlibcSinCosf compares glibcSinf/glibcCosf (and the rope's theta scale
// and angles) bit for bit with the system C library over every angle the
// rope of the presets computes: every position up to the context length,
// every pair. On a CPU with FMA and AVX2 glibc runs its FMA build, otherwise
// its SSE2 build; the matching variant of our code is compared.
func TestGlibcSinCosf(t *testing.T) {
	bin := buildLibmHarness(t)
	fma := fmaFunc(math.FMA)
	variant := "FMA"
	if !cpu.X86.HasFMA || !cpu.X86.HasAVX2 {
		fma, variant = unfusedFMA, "SSE2"
	}
	t.Logf("glibc variant on this CPU: %s", variant)
	total, fmaMatters := 0, 0
	for _, c := range presetRopeConfigs(t) {
		cmd := exec.Command(bin, "rope", strconv.FormatFloat(float64(c.base), 'g', -1, 32), strconv.Itoa(c.hd), strconv.Itoa(c.nPos))
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		r := bufio.NewReaderSize(stdout, 1<<16)
		var b [12]byte
		if _, err := io.ReadFull(r, b[:4]); err != nil {
			t.Fatal(err)
		}
		cScale := math.Float32frombits(binary.LittleEndian.Uint32(b[:]))
		if got := ropeThetaScale(c.base, c.hd); got != cScale {
			t.Errorf("%s: theta scale powf(%g, -2/%d): got %v, libm %v", c.model, c.base, c.hd, got, cScale)
		}
		bad := 0
		for p := 0; p < c.nPos; p++ {
			theta := float32(p)
			for i := 0; i < c.hd/2; i++ {
				if _, err := io.ReadFull(r, b[:]); err != nil {
					t.Fatalf("%s: harness output ends at position %d: %v", c.model, p, err)
				}
				th := math.Float32frombits(binary.LittleEndian.Uint32(b[0:]))
				ws := math.Float32frombits(binary.LittleEndian.Uint32(b[4:]))
				wc := math.Float32frombits(binary.LittleEndian.Uint32(b[8:]))
				if th != theta {
					t.Fatalf("%s: position %d pair %d: angle %v, libm side %v", c.model, p, i, theta, th)
				}
				gs, gc := sinfGlibc(theta, fma), cosfGlibc(theta, fma)
				if gs != ws || gc != wc {
					if bad++; bad <= 5 {
						t.Errorf("%s: position %d pair %d angle %v (%#08x): sin got %v want %v, cos got %v want %v", c.model, p, i, theta, math.Float32bits(theta), gs, ws, gc, wc)
					}
				}
				if sinfGlibc(theta, unfusedFMA) != gs || cosfGlibc(theta, unfusedFMA) != gc {
					fmaMatters++
				}
				total++
				theta *= cScale
			}
		}
		if err := cmd.Wait(); err != nil {
			t.Fatal(err)
		}
		if bad > 0 {
			t.Errorf("%s (theta %g, head_dim %d, %d positions): %d angles differ from libm", c.model, c.base, c.hd, c.nPos, bad)
		}
	}
	t.Logf("%d rope angles equal to libm; the FMA and SSE2 builds differ on %d of them", total, fmaMatters)
}

// TestGlibcSinCosfBothBuilds checks both variants on angles of every range
// (tiny, below π/4, the fast reduction below 120, the large reduction,
// negative, random bit patterns): the FMA variant against the C library as
// the CPU selects it, and the SSE2 variant with glibc's FMA selection
// switched off through GLIBC_TUNABLES.
func TestGlibcSinCosfBothBuilds(t *testing.T) {
	bin := buildLibmHarness(t)
	rng := rand.New(rand.NewPCG(14, 1))
	var xs []float32
	for _, v := range []float32{0, 1e-30, 0x1p-12, 0.5, 0.785, 0.79, 1, 2, 3.14159, 100, 119.99, 120, 121, 1000, 4095, 1e6, 1e10, 3.4e38} {
		xs = append(xs, v, -v)
	}
	// Angles of the presets' rope where the FMA and SSE2 builds differ
	// (a cosine near zero after the fast reduction): they make the SSE2
	// comparison below fail if GLIBC_TUNABLES did not switch the build.
	for _, b := range []uint32{0x4280ce28, 0x42687a55, 0x418a3adb} {
		x := math.Float32frombits(b)
		if cosfGlibc(x, math.FMA) == cosfGlibc(x, unfusedFMA) {
			t.Fatalf("%v: the two variants agree; pick another angle", x)
		}
		xs = append(xs, x, -x)
	}
	for range 200000 {
		xs = append(xs, math.Float32frombits(rng.Uint32()&0x7f7fffff|rng.Uint32()&0x80000000))
		xs = append(xs, float32(rng.Float64()*4096))
	}
	var in bytes.Buffer
	for _, x := range xs {
		binary.Write(&in, binary.LittleEndian, x)
	}
	run := func(env []string) []float32 {
		cmd := exec.Command(bin, "list")
		cmd.Env = append(os.Environ(), env...)
		cmd.Stdin = bytes.NewReader(in.Bytes())
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		if len(out) != 8*len(xs) {
			t.Fatalf("harness wrote %d bytes, want %d", len(out), 8*len(xs))
		}
		v := make([]float32, 2*len(xs))
		for i := range v {
			v[i] = math.Float32frombits(binary.LittleEndian.Uint32(out[4*i:]))
		}
		return v
	}
	check := func(name string, fma fmaFunc, want []float32) {
		bad := 0
		for i, x := range xs {
			gs, gc := sinfGlibc(x, fma), cosfGlibc(x, fma)
			if !sameFloat(gs, want[2*i]) || !sameFloat(gc, want[2*i+1]) {
				if bad++; bad <= 5 {
					t.Errorf("%s: x %v (%#08x): sin got %v want %v, cos got %v want %v", name, x, math.Float32bits(x), gs, want[2*i], gc, want[2*i+1])
				}
			}
		}
		if bad > 0 {
			t.Errorf("%s: %d of %d arguments differ", name, bad, len(xs))
		}
	}
	if cpu.X86.HasFMA && cpu.X86.HasAVX2 {
		check("FMA build", math.FMA, run(nil))
	}
	check("SSE2 build", unfusedFMA, run([]string{"GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX2_Usable,-FMA_Usable,-AVX2,-FMA"}))
}

// sameFloat is bitwise equality, any NaN equal to any NaN.
func sameFloat(a, b float32) bool {
	if a != a && b != b {
		return true
	}
	return math.Float32bits(a) == math.Float32bits(b)
}
