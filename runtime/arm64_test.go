package runtime

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"testing"
)

// logitDigest runs the hello prompt plus 6 greedy tokens through the three
// tiny golden GGUFs (I2_S, F32, Q8_0 embedding: every kernel the b158 file
// uses is among them) and returns the sha256 of all logits (float32 bits, little
// endian) and generated ids. Equal digests mean bit-identical numbers.
func logitDigest(t testing.TB) string {
	prompt, _ := goldenIDs(t, filepath.Join(tinyDir, "outputs/i2s_hello_seq_t1.txt"))
	return digestFiles(t, prompt, 6,
		filepath.Join(tinyDir, "gguf/ggml-model-i2_s.gguf"),
		filepath.Join(tinyDir, "gguf/ggml-model-f32.gguf"),
		filepath.Join(tinyDir, "gguf/ggml-model-i2_s-q8embd.gguf"))
}

// typesDigest is logitDigest over the golden files of the other weight
// types, whose products run in internal/kernels' ternary kernels (NEON on
// arm64, AVX2 on amd64, their pure-Go twins otherwise): TQ1_0, TQ2_0,
// IQ1_BN, IQ2_BN, Q2_0 and a Q6_K embedding and head. Several of these
// goldens only bound the distance to their home runtime, so equal digests
// are what proves the architectures give the same bits.
func typesDigest(t testing.TB) string {
	prompt := []int32{1, 100, 200, 300, 400, 7, 8}
	return digestFiles(t, prompt, 4,
		filepath.Join(ecoDir, "tiny-bitnet-tq1_0.gguf"),
		filepath.Join(ecoDir, "tiny-bitnet-tq2_0.gguf"),
		filepath.Join(ecoDir, "tiny-b158-h512-iq1_bn.gguf"),
		filepath.Join(ecoDir, "tiny-b158-h512-iq2_bn.gguf"),
		"../testdata/golden/q2_0/tiny-q2_0.gguf",
		"../testdata/golden/q6k-embd/tiny-bitnet-i2_s-q6k-llamaquantize.gguf")
}

// digestFiles runs prompt plus n greedy tokens through each file (two
// threads) and returns the sha256 of all logits (float32 bits, little
// endian) and generated ids.
func digestFiles(t testing.TB, prompt []int32, n int, files ...string) string {
	h := sha256.New()
	var b [4]byte
	for _, file := range files {
		m := openModel(t, file, 2)
		p, g, ids := runSeq(t, m, prompt, n)
		for _, row := range append(p, g...) {
			for _, v := range row {
				binary.LittleEndian.PutUint32(b[:], math.Float32bits(v))
				h.Write(b[:])
			}
		}
		fmt.Fprint(h, ids)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// TestLogitDigest prints the digest; TestArm64SameNumbers runs it under
// qemu-aarch64 and compares.
func TestLogitDigest(t *testing.T) {
	fmt.Printf("logit-digest: %s\n", logitDigest(t))
	fmt.Printf("types-digest: %s\n", typesDigest(t))
}

// TestArm64SameNumbers cross-compiles this package's tests for GOARCH=arm64,
// runs the golden-logit tests and the logit digest under qemu-aarch64 (Debian
// package qemu-user), and requires the same bits as the native run: the
// float code must not be fused into FMA on arm64 and the I2_S layout must
// not depend on the CPU. Skipped when qemu-aarch64 is absent, unless the
// environment variable CI is set, in which case a missing qemu or a failed
// cross build fails the test.
func TestArm64SameNumbers(t *testing.T) {
	if testing.Short() {
		t.Skip("cross build and emulation")
	}
	if goruntime.GOARCH == "arm64" {
		t.Skip("already running on arm64")
	}
	ci := os.Getenv("CI") != ""
	qemu, err := exec.LookPath("qemu-aarch64")
	if err != nil {
		if ci {
			t.Fatal("qemu-aarch64 not found: install Debian package qemu-user (CI is set, so this check may not be skipped)")
		}
		t.Skip("qemu-aarch64 not found (apt-get install qemu-user); set CI to make this fatal")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is not on PATH: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "runtime.arm64.test")
	build := exec.Command(goTool, "test", "-c", "-o", bin, ".")
	build.Env = append(os.Environ(), "GOARCH=arm64", "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("GOARCH=arm64 go test -c: %v\n%s", err, out)
	}
	// The digest covers the three tiny golden files (33 tokens each) and must
	// equal the native one, which TestGoldenLogits ties to the reference;
	// one golden case, BR-09, the batched kernels and the TQ1_0/TQ2_0
	// goldens of one prompt also run as they are.
	// The whole golden suite under emulation would take most of the
	// package's time budget.
	run := exec.Command(qemu, bin, "-test.run", "^(TestLogitDigest|TestGoldenLogits|TestBR09BatchSizes|TestDotI2SLUTEqualsDotI2S|TestDotI2SLUT1EqualsDotI2S|TestMatMulI2SEqualsMatVec|TestGoldenTQ|TestQuantizeQ8K)$/^(i2s_ids_seq_t1|tq1_0_ids_seq|tq2_0_ids_seq)$", "-test.v")
	run.Env = append(os.Environ(), "GOMAXPROCS=2")
	out, err := run.CombinedOutput()
	if err != nil {
		t.Fatalf("arm64 tests under qemu failed: %v\n%s", err, out)
	}
	var got, gotTypes string
	for _, line := range strings.Split(string(out), "\n") {
		if d, ok := strings.CutPrefix(line, "logit-digest: "); ok {
			got = strings.TrimSpace(d)
		}
		if d, ok := strings.CutPrefix(line, "types-digest: "); ok {
			gotTypes = strings.TrimSpace(d)
		}
	}
	// The TQ goldens (Q8_K activations) must have run, bit for bit.
	for _, sub := range []string{"TestGoldenTQ/tq1_0_ids_seq", "TestGoldenTQ/tq2_0_ids_seq", "TestQuantizeQ8K"} {
		if !strings.Contains(string(out), "--- PASS: "+sub+" ") {
			t.Errorf("arm64 under qemu: %s did not pass\n%s", sub, out)
		}
	}
	want := logitDigest(t)
	if got != want {
		t.Fatalf("arm64 logit digest %q, native %q: the numbers differ\n%s", got, want, out)
	}
	if wantTypes := typesDigest(t); gotTypes != wantTypes {
		t.Fatalf("arm64 digest of the TQ/IQ/Q2_0/Q6_K files %q, native %q: the numbers differ\n%s", gotTypes, wantTypes, out)
	}
	t.Logf("arm64 under qemu: same logit digests %s", want)
}
