//go:build !purego

package kernels

import "golang.org/x/sys/cpu"

//go:generate sh -c "cd _asm && go run ./prompt -out ../prompt_amd64.s -stubs ../prompt_stubs_amd64.go -pkg kernels"

// useVNNI selects the AVX-512 batched I2_S kernel (dotI2SBatchVNNI) and
// the 16-lane exponential: AVX-512 F and BW with VNNI's VPDPBUSD, the OS
// saving the ZMM state (golang.org/x/sys/cpu checks it). Tests switch it
// off to check the fallbacks on such CPUs too.
var useVNNI = useAVX512 && cpu.X86.HasAVX512VL && cpu.X86.HasAVX512VNNI

// hasGFNI: the CPU has GFNI with EVEX encodings (VGF2P8AFFINEQB on ZMM
// registers), which dotQ2_0RowsAVX512 and accTQ2_0RowsVNNI need besides
// useVNNI.
var hasGFNI = cpu.X86.HasAVX512GFNI

func i2sBatchAccelerated() bool { return useVNNI }

func dotI2SBatch(sums []int32, rows []byte, rowB, nb int, xt []int8) {
	if useVNNI {
		dotI2SBatchVNNI(sums, rows, rowB, nb, xt)
		return
	}
	dotI2SBatchRef(sums, rows, rowB, nb, xt)
}

func expSub(dst, src []float32, m float32) {
	n := len(src) &^ 15
	i := 0
	if useVNNI {
		for i < n {
			i += expSubGroupsAVX512(dst[i:n], src[i:n], m)
			if i < n {
				expSubRef(dst[i:i+16], src[i:i+16], m)
				i += 16
			}
		}
	}
	expSubRef(dst[i:len(src)], src[i:], m)
}
