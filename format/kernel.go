package format

import (
	"fmt"
	"slices"
	"strings"

	"github.com/bitnet-convert/bitnet-convert/gguf"
)

// Arch names accepted by this package: "tl1" (ARM, bitnet.cpp
// codegen_tl1.py) and "tl2" (x86 AVX2, codegen_tl2.py).
const (
	TL1Arch = "tl1"
	TL2Arch = "tl2"
)

// Kernel is the tiling of one weight shape. M and K are the weight's rows and
// columns (HF [out, in] order; ggml ne[1], ne[0]). BM is the rows per tile
// (M is cut into M/BM tiles), BK the K columns per block inside a tile and Bm
// the rows of one compute block (TL2 accepts only 32). In kernel_config.ini
// BM is written as "bm" and Bm as "bmm" (spec codegen.md §3.1, quirk 11).
type Kernel struct {
	M, K, BM, BK, Bm int
}

// ThreeK returns the TL2 "three" part length floor(K/BK)·BK: columns
// [0, ThreeK) are packed as triples (spec codegen.md §2.3). BK must be > 0.
func (k Kernel) ThreeK() int { return k.K / k.BK * k.BK }

// TwoK returns the TL2 "two" part length K − ThreeK: columns [ThreeK, K) are
// packed as pairs in 32-column blocks (spec codegen.md §2.3).
func (k Kernel) TwoK() int { return k.K - k.ThreeK() }

// String formats the shape as "(M=…, K=…)".
func (k Kernel) String() string {
	return fmt.Sprintf("(M=%d, K=%d)", k.M, k.K)
}

// allowedBm lists the compute-block heights each arch supports (rule D).
var allowedBm = map[string][]int{TL1Arch: {32, 64}, TL2Arch: {32}}

// maxBK bounds BK: the kernels' per-block partial sums must stay within int16
// (|q| ≤ 127, 127·256 < 32768; spec codegen.md §2.2, §4.1).
const maxBK = 256

// Violation is one broken tiling rule for one kernel.
type Violation struct {
	Index int    // kernel index in list order
	M, K  int    // the kernel's shape
	Msg   string // e.g. "bm=16 not allowed for TL1 (allowed: 32, 64)"
}

// String formats the violation as "kernel i (M=…, K=…): message".
func (v Violation) String() string {
	return fmt.Sprintf("kernel %d (M=%d, K=%d): %s", v.Index, v.M, v.K, v.Msg)
}

// ValidationError lists every rule violation of a kernel set. Error joins
// them with "; " into one line.
type ValidationError struct {
	Arch       string
	Violations []Violation
}

// Error joins every violation into one line.
func (e *ValidationError) Error() string {
	parts := make([]string, len(e.Violations))
	for i, v := range e.Violations {
		parts[i] = v.String()
	}
	return fmt.Sprintf("invalid %s kernel configuration: %s", strings.ToUpper(e.Arch), strings.Join(parts, "; "))
}

// CheckArch returns an error unless arch is TL1 or TL2.
func CheckArch(arch string) error {
	if arch != TL1Arch && arch != TL2Arch {
		return fmt.Errorf("unknown arch %q (want tl1 or tl2)", arch)
	}
	return nil
}

// Kernels zips a shape list ([M, K] pairs, HF order) with the BM, BK and bm
// lists (one entry per shape, rule A of spec codegen.md §2.1). A length
// mismatch returns an error naming the lists and the expected count.
func Kernels(shapes [][2]int, bms, bks, sms []int) ([]Kernel, error) {
	n := len(shapes)
	var bad []string
	for _, l := range []struct {
		name string
		v    []int
	}{{"BM", bms}, {"BK", bks}, {"bm", sms}} {
		if len(l.v) != n {
			bad = append(bad, fmt.Sprintf("%d %s values", len(l.v), l.name))
		}
	}
	if len(bad) > 0 {
		return nil, fmt.Errorf("got %s for %d shapes: give one BM, BK and bm per shape", strings.Join(bad, ", "), n)
	}
	ks := make([]Kernel, n)
	for i, s := range shapes {
		ks[i] = Kernel{M: s[0], K: s[1], BM: bms[i], BK: bks[i], Bm: sms[i]}
	}
	return ks, nil
}

// Validate checks every rule of spec codegen.md §2.1 and §2.2 for arch and
// returns a *ValidationError listing all violations, or nil. Rules, per kernel:
//
//   - all of M, K, BM, BK, bm are > 0 (the other rules are skipped otherwise);
//   - B: M % BM == 0;
//   - D: bm ∈ {32, 64} (TL1) or bm == 32 (TL2);
//   - BM % bm == 0 (TL2: BM % 32, its fixed row block);
//   - BK ≤ 256 (int16 block sums);
//   - TL1: C: K % BK == 0; BK % (256/bm) == 0 (whole compute blocks); K % 16
//     == 0 (LUT builder step);
//   - TL2: C': (K % BK) % 32 == 0; BK % 24 == 0 (8 triples per sign word);
//     two_k = K % BK ≤ 256 and the packed stream fits the reference's size
//     formula gguf.TL2DataBytes (the scale offset the runtime reads).
//
// Shapes must also be unique (the dispatch chains pick the first match).
func Validate(arch string, ks []Kernel) error {
	if err := CheckArch(arch); err != nil {
		panic("format: " + err.Error())
	}
	var vs []Violation
	add := func(i int, k Kernel, format string, args ...any) {
		vs = append(vs, Violation{Index: i, M: k.M, K: k.K, Msg: fmt.Sprintf(format, args...)})
	}
	name := strings.ToUpper(arch)
	for i, k := range ks {
		pos := true
		for _, f := range []struct {
			n string
			v int
		}{{"M", k.M}, {"K", k.K}, {"BM", k.BM}, {"BK", k.BK}, {"bm", k.Bm}} {
			if f.v <= 0 {
				add(i, k, "%s=%d must be positive", f.n, f.v)
				pos = false
			}
		}
		if !pos {
			continue
		}
		for j := 0; j < i; j++ {
			if ks[j].M == k.M && ks[j].K == k.K {
				add(i, k, "shape already listed as kernel %d (shapes must be unique)", j)
			}
		}
		if k.M%k.BM != 0 {
			add(i, k, "BM=%d does not divide M (M %% BM = %d, must be 0)", k.BM, k.M%k.BM)
		}
		okBm := slices.Contains(allowedBm[arch], k.Bm)
		if !okBm {
			add(i, k, "bm=%d not allowed for %s (allowed: %s)", k.Bm, name, joinInts(allowedBm[arch]))
		}
		if k.BK > maxBK {
			add(i, k, "BK=%d exceeds %d (int16 block sums would overflow)", k.BK, maxBK)
		}
		switch arch {
		case TL1Arch:
			if okBm && k.BM%k.Bm != 0 {
				add(i, k, "BM=%d is not a multiple of bm=%d (BM %% bm must be 0)", k.BM, k.Bm)
			}
			if k.K%k.BK != 0 {
				add(i, k, "BK=%d does not divide K (K %% BK = %d, must be 0)", k.BK, k.K%k.BK)
			}
			if okBm {
				by := 256 / k.Bm
				if k.BK%by != 0 {
					add(i, k, "BK=%d is not a multiple of 256/bm=%d (whole compute blocks)", k.BK, by)
				}
			}
			if k.K%16 != 0 {
				add(i, k, "K %% 16 = %d, must be 0 (TL1 LUT builder works on 16 columns)", k.K%16)
			}
		case TL2Arch:
			if k.BM%32 != 0 {
				add(i, k, "BM=%d is not a multiple of the TL2 row block 32 (BM %% bm must be 0)", k.BM)
			}
			two := k.K % k.BK
			if two%32 != 0 {
				add(i, k, "BK=%d leaves K %% BK = %d, not a multiple of 32 ((K %% BK) %% 32 must be 0)", k.BK, two)
			}
			if k.BK%24 != 0 {
				add(i, k, "BK=%d is not a multiple of 24 (TL2 packs 8 triples per sign word)", k.BK)
			}
			if two > 256 {
				add(i, k, "two_k = K %% BK = %d exceeds 256 (the TL2 size formula assumes at most 256)", two)
			} else if two%32 == 0 && k.BK%24 == 0 {
				if err := checkTL2Size(k); err != nil {
					add(i, k, "%v", err)
				}
			}
		}
	}
	if len(vs) > 0 {
		return &ValidationError{Arch: arch, Violations: vs}
	}
	return nil
}

// TL2StreamBytes is the length of the TL2 packed stream without padding:
// three_k·M/6 nibble bytes + three_k·M/24 sign bytes + two_k·M/4 two-part
// bytes (spec conversion.md §7.2).
func TL2StreamBytes(m, k, bk int) int {
	three := k / bk * bk
	two := k - three
	return three*m/6 + three*m/24 + two*m/4
}

func checkTL2Size(k Kernel) error {
	n, err := gguf.TL2DataBytes(uint64(k.K), uint64(k.M))
	if err != nil {
		return err
	}
	if s := TL2StreamBytes(k.M, k.K, k.BK); uint64(s) > n {
		return fmt.Errorf("packed TL2 stream (%d bytes) exceeds the reference size formula (%d bytes)", s, n)
	}
	return nil
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}

// LookupKernel returns the first kernel whose shape is (m, k), as the
// converter's kernel_config.ini lookup does (spec codegen.md §3.1).
func LookupKernel(ks []Kernel, m, k int) (Kernel, bool) {
	for _, x := range ks {
		if x.M == m && x.K == k {
			return x, true
		}
	}
	return Kernel{}, false
}
