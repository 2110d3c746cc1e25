package format

import (
	"encoding/json"
	"fmt"
	"github.com/bitnet-convert/bitnet-convert/hf"
	"path/filepath"
	"strings"

	"github.com/bitnet-convert/bitnet-convert/internal/fsutil"
)

// ShapesFromConfig derives the ternary weight shapes [M, K] (HF [out, in])
// of a Llama-style decoder from its config.json: hidden H = hidden_size,
// intermediate I = intermediate_size, heads n = num_attention_heads, kv heads
// n_kv = num_key_value_heads (default n), head_dim d = head_dim when present
// and not null, else H/n (BR-15): hf.Config.HeadGeometry, the rule the
// converter uses. The list is q [n·d, H], k and v
// [n_kv·d, H], o [H, n·d], gate and up [I, H], down [H, I], in that order
// with duplicates dropped (first occurrence kept). Errors name the missing
// or bad key.
func ShapesFromConfig(cfg map[string]any) ([][2]int, error) {
	g, err := (&hf.Config{Raw: cfg, Path: "config.json"}).HeadGeometry()
	if err != nil {
		return nil, err
	}
	h, inter, heads, kv, hd := g.Hidden, g.FF, g.Heads, g.HeadsKV, g.HeadDim
	all := [][2]int{
		{heads * hd, h}, // q
		{kv * hd, h},    // k
		{kv * hd, h},    // v
		{h, heads * hd}, // o
		{inter, h},      // gate
		{inter, h},      // up
		{h, inter},      // down
	}
	var out [][2]int
	for _, s := range all {
		dup := false
		for _, o := range out {
			if o == s {
				dup = true
			}
		}
		if !dup {
			out = append(out, s)
		}
	}
	return out, nil
}

// ReadConfigDir reads and decodes dir/config.json.
func ReadConfigDir(dir string) (map[string]any, error) {
	return ReadConfigFile(filepath.Join(dir, "config.json"))
}

// ReadConfigFile reads a config.json at path (any name) as ReadConfigDir
// does.
func ReadConfigFile(path string) (map[string]any, error) {
	data, err := fsutil.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var cfg map[string]any
	if err := json.Unmarshal(data, &cfg); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if cfg == nil {
		return nil, fmt.Errorf("%s: not a JSON object", path)
	}
	return cfg, nil
}

// ShapeError reports shapes for which no valid tiling exists.
type ShapeError struct {
	Arch    string
	Reasons []string // one per failing shape, "(M=…, K=…): reason"
}

// Error joins every failing shape's reason into one line.
func (e *ShapeError) Error() string {
	return fmt.Sprintf("no valid %s tiling: %s", strings.ToUpper(e.Arch), strings.Join(e.Reasons, "; "))
}

// tl2BKPreference is the order in which ConfigFor tries TL2 block widths:
// 96 (what setup_env.py uses everywhere) first, then the other multiples of
// 24 up to 240, largest first.
var tl2BKPreference = []int{96, 240, 216, 192, 168, 144, 120, 72, 48, 24}

// ConfigFor chooses a tiling for every [M, K] shape (HF order) by this rule,
// the one `codegen --from-config` and the converter use:
//
//   - bm = 32 (allowed by both arches; TL1 compute blocks are then 8 columns).
//   - BM = the largest multiple of 32 not above 256 that divides M (M must be
//     a multiple of 32).
//   - TL1: BK = the largest multiple of 16 not above 128 that divides K
//     (K must be a multiple of 16).
//   - TL2: BK = the first of 96, 240, 216, …, 24 (multiples of 24, ≤ 256)
//     for which K % BK is a multiple of 32 and at most 256; when none exists
//     (e.g. K % 8 ≠ 0, BR-25 K = 5460) the shape is not supported by TL2.
//
// The result always passes Validate. Shapes without a valid tiling are all
// reported in one *ShapeError.
func ConfigFor(arch string, shapes [][2]int) ([]Kernel, error) {
	if err := CheckArch(arch); err != nil {
		return nil, err
	}
	var ks []Kernel
	var reasons []string
	for _, s := range shapes {
		m, k := s[0], s[1]
		kern := Kernel{M: m, K: k, Bm: 32}
		var why []string
		if m <= 0 || k <= 0 {
			reasons = append(reasons, fmt.Sprintf("(M=%d, K=%d): dimensions must be positive", m, k))
			continue
		}
		for bm := 256; bm >= 32; bm -= 32 {
			if m%bm == 0 {
				kern.BM = bm
				break
			}
		}
		if kern.BM == 0 {
			why = append(why, fmt.Sprintf("M %% 32 = %d, so no tile height BM (a multiple of bm=32) divides M", m%32))
		}
		switch arch {
		case TL1Arch:
			if k%16 != 0 {
				why = append(why, fmt.Sprintf("K %% 16 = %d, but TL1 needs K a multiple of 16", k%16))
				break
			}
			for bk := 128; bk >= 16; bk -= 16 {
				if k%bk == 0 {
					kern.BK = bk
					break
				}
			}
		case TL2Arch:
			for _, bk := range tl2BKPreference {
				if two := k % bk; two%32 == 0 && two <= 256 && checkTL2Size(Kernel{M: m, K: k, BK: bk}) == nil {
					kern.BK = bk
					break
				}
			}
			if kern.BK == 0 {
				why = append(why, fmt.Sprintf("no BK (a multiple of 24 up to 240) leaves K %% BK a multiple of 32 (K %% 8 = %d)", k%8))
			}
		}
		if len(why) > 0 {
			reasons = append(reasons, fmt.Sprintf("(M=%d, K=%d): %s", m, k, strings.Join(why, "; ")))
			continue
		}
		ks = append(ks, kern)
	}
	if len(reasons) > 0 {
		return nil, &ShapeError{Arch: arch, Reasons: reasons}
	}
	if err := Validate(arch, ks); err != nil {
		return nil, err
	}
	return ks, nil
}
