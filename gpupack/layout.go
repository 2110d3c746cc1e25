package gpupack

import (
	"fmt"
	"strings"
)

// ScaleLayout is how weight_scale vectors are laid out in
// model_state_int2.pt.
type ScaleLayout string

const (
	// LayoutMain is microsoft/BitNet main's layout (gpu/convert_checkpoint.py,
	// model.py BitLinearKernel): 4 bf16 entries, wqkv [sq, sk, sv, 0], w13
	// [s_gate, s_up, 0, 0], wo and w2 [s, 0, 0, 0]. main's kernel indexes
	// the wqkv scale by row/(N/3), so with the 2B shape (q 2560 rows, k and
	// v 640) rows 1280–2559 of q use sk and the k rows use sv: the layout is
	// what main loads, its output is wrong (formats-2026.md §6).
	LayoutMain ScaleLayout = "main"
	// LayoutPR316 is the layout of open microsoft/BitNet PR #316, whose
	// kernel indexes the wqkv scale by row/(N/6): 6 entries, wqkv [sq, sq,
	// sq, sq, sk, sv] (q has 4 of the 6 equal row groups), w13 [s_gate, s_up,
	// 0, 0, 0, 0], wo and w2 [s, 0, 0, 0, 0, 0].
	LayoutPR316 ScaleLayout = "pr316"
)

// ParseScaleLayout validates --gpu-scale-layout.
func ParseScaleLayout(s string) (ScaleLayout, error) {
	switch ScaleLayout(strings.ToLower(s)) {
	case LayoutMain:
		return LayoutMain, nil
	case LayoutPR316:
		return LayoutPR316, nil
	}
	return "", fmt.Errorf("unknown scale layout %q (main, pr316)", s)
}

func (l ScaleLayout) entries() int {
	if l == LayoutPR316 {
		return 6
	}
	return 4
}

// scaleVector returns the weight_scale of a fused matrix whose parts have
// the given scales and row counts.
func (l ScaleLayout) scaleVector(scales []uint16, rows []int) ([]uint16, error) {
	v := make([]uint16, l.entries())
	if l == LayoutPR316 && len(scales) == 3 {
		// row groups of N/6: q must be 4 of them, k and v one each
		n := rows[0] + rows[1] + rows[2]
		if n%6 != 0 || rows[0] != 4*n/6 || rows[1] != n/6 || rows[2] != n/6 {
			return nil, fmt.Errorf("the pr316 scale layout needs q:k:v rows 4:1:1 (row groups of N/6), not %d:%d:%d", rows[0], rows[1], rows[2])
		}
		return []uint16{scales[0], scales[0], scales[0], scales[0], scales[1], scales[2]}, nil
	}
	copy(v, scales)
	return v, nil
}

// Shape is an (N, K) matrix shape of the W2A8 kernel: N output rows, K
// inputs.
type Shape struct{ N, K int }

// SupportedShapes is the (N, K) list microsoft/BitNet main's
// gpu/bitnet_kernels/bitnet_kernels.cu dispatches (formats-2026.md §6): the
// 2B-4T shapes first, then the ones of 3B-class and larger models. For any
// other shape the kernel prints "required ladder gemm kernel" and returns
// zeros.
var SupportedShapes = []Shape{
	{3840, 2560}, {2560, 2560}, {13824, 2560}, {2560, 6912},
	{4800, 3200}, {3200, 3200}, {20480, 3200}, {3200, 10240},
	{5120, 27648}, {55296, 5120},
}

// Supported reports whether the kernel has a dispatch for s.
func (s Shape) Supported() bool {
	for _, x := range SupportedShapes {
		if x == s {
			return true
		}
	}
	return false
}

func supportedList() string {
	var b []string
	for _, s := range SupportedShapes {
		b = append(b, fmt.Sprintf("(%d, %d)", s.N, s.K))
	}
	return strings.Join(b, ", ")
}
