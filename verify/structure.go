package verify

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"

	"github.com/bitnet-convert/bitnet-convert/convert"
	"github.com/bitnet-convert/bitnet-convert/format"
	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
	"github.com/bitnet-convert/bitnet-convert/quantize"
	"github.com/bitnet-convert/bitnet-convert/runtime"
	"github.com/bitnet-convert/bitnet-convert/tensormap"
)

// checkStructure compares every GGUF tensor with its HF source, one tensor
// at a time (the file's and the checkpoint's pages released after each). It
// returns false when the two differ in structure (a tensor missing on either
// side, or of another shape), so that no numeric comparison is attempted.
func checkStructure(rep *Report, f *reader.File, src *convert.Source, opts Options) bool {
	same := true
	w, err := openSourceWeights(src, opts.HF)
	if err != nil {
		rep.fail("checkpoint %s: %v", opts.HF, err)
		return false
	}
	defer w.Close()
	var kernels []format.Kernel
	var codes []int8 // compareTernary's decode buffer
	seen := map[string]bool{}
	for _, ti := range f.Tensors {
		seen[ti.Name] = true
		tc := TensorCheck{Name: ti.Name, Type: ti.Type.String(), OK: true}
		detail := func() string {
			pt, ok := src.Tensor(ti.Name)
			if !ok {
				same = false
				return "no source tensor in the checkpoint"
			}
			data, err := f.TensorData(ti.Name)
			if err != nil {
				return err.Error()
			}
			defer releasePages(f, data)
			if ne := reverseShape(pt.HFShape); !reflect.DeepEqual(ne, ti.Ne) && !(len(pt.HFShape) == 0 && reflect.DeepEqual(ti.Ne, []uint64{1})) {
				same = false
				return fmt.Sprintf("ne %v, source implies %v", ti.Ne, ne)
			}
			if format.IsTernary(ti.Type) {
				if pt.Class != tensormap.Projection {
					return "ternary type on a non-projection"
				}
				if (ti.Type == gguf.TypeTL1 || ti.Type == gguf.TypeTL2) && kernels == nil {
					ks, err := tlKernels(f, opts.KernelConfig)
					if err != nil {
						return err.Error()
					}
					kernels = ks
				}
				detail := compareTernary(ti, data, src, kernels, fileLayout(f), opts.Threads, &codes)
				if strings.HasPrefix(detail, "ternary code") && ti.Type == gguf.TypeI2S {
					detail += layoutHint(ti, data, src, fileLayout(f), opts.GGUF)
				}
				return detail
			}
			return compareFloat(ti, data, w, func(b []byte) { releasePages(f, b) })
		}()
		if detail != "" {
			tc.OK, tc.Detail = false, detail
			rep.fail("tensor %s: %s", ti.Name, detail)
		}
		rep.Tensors = append(rep.Tensors, tc)
	}
	for _, pt := range src.Plan().Tensors {
		if !seen[pt.GGUFName] {
			same = false
			rep.fail("tensor %s (from %s) is missing from the GGUF", pt.GGUFName, pt.HFName)
		}
	}
	return same
}

func reverseShape(s []uint64) []uint64 {
	out := make([]uint64, len(s))
	for i, v := range s {
		out[len(s)-1-i] = v
	}
	return out
}

// tlKernels returns the kernel configuration of a TL file: the given
// kernel_config.ini, or the one hf2gguf stored in the file.
func tlKernels(f *reader.File, ini []byte) ([]format.Kernel, error) {
	if ini != nil {
		return format.ParseKernelConfig(ini)
	}
	ks, ok, err := runtime.StoredKernelConfig(f.KVs)
	if err == nil && !ok {
		err = fmt.Errorf("the file does not record its TL kernel configuration: pass the kernel_config.ini it was converted with (--kernel-config)")
	}
	return ks, err
}

// compareTernary decodes codes and scales through the format layer (the
// I2_S layout from the file's format.LayoutKey, x86 without it; row ranges
// on up to threads goroutines, format.DecodeParallel) and compares them with
// the source: codes exactly, each scale within one ulp of the source scale
// stored the way the format stores it (Format.StoredScale: f16 for TQ and
// IQ1_BN; 0 for a group whose source codes are all zero, format.Regroup).
// buf is the decode buffer, reused from one tensor to the next (grown when
// too small), so that a model's projections leave no garbage.
func compareTernary(ti gguf.TensorInfo, data []byte, src *convert.Source, kernels []format.Kernel, layout format.Layout, threads int, buf *[]int8) string {
	k, m := int(ti.Ne[0]), int(ti.Ne[1])
	f, _ := format.ForType(ti.Type, layout, kernels)
	if err := f.Check(k, m); err != nil && (ti.Type == gguf.TypeTL1 || ti.Type == gguf.TypeTL2) {
		return err.Error() + " (pass --kernel-config)"
	}
	if cap(*buf) < k*m {
		*buf = make([]int8, k*m)
	}
	got := (*buf)[:k*m]
	scales, err := format.DecodeParallel(f, got, data, k, m, threads)
	if err != nil {
		return err.Error()
	}
	want, wantScales, wantGroup, err := src.TernaryGroupsView(ti.Name)
	if err != nil {
		return err.Error()
	}
	wantScale := wantScales[0] // the per-tensor scale (group 0), for messages
	if d := firstDiff(got, want); d >= 0 && wantGroup > 0 {
		wantScale = wantScales[d/wantGroup]
	}
	if d := firstDiff(got, want); d >= 0 {
		// Decode gives 0 codes for a group whose scale is 0: name the
		// scale, not a code the file may hold intact
		g := 0
		if sg := f.ScaleGroup(k); sg > 0 {
			g = d / sg
		}
		if got[d] == 0 && g < len(scales) && scales[g] == 0 {
			unit := "the tensor scale"
			switch sg := f.ScaleGroup(k); {
			case sg == k:
				unit = fmt.Sprintf("the scale of row %d", g)
			case sg > 0:
				unit = fmt.Sprintf("scale %d (row %d)", g, g*sg/k)
			}
			return fmt.Sprintf("%s is 0, so its codes read as 0 (ternary code %d, row %d, column %d: 0, source %d); source scale %v", unit, d, d/k, d%k, want[d], f.StoredScale(wantScale))
		}
		return codeMismatch(d, k, got[d], want[d])
	}
	exp, err := format.Regroup(want, wantScales, wantGroup, f.ScaleGroup(k))
	if err != nil {
		var conflict *format.ScaleConflictError
		if errors.As(err, &conflict) {
			return fmt.Sprintf("%v: the checkpoint is group-scaled (one scale per %d inputs) and %s cannot hold that; if hf2gguf --ternarize wrote this file, pass --ternarize", err, wantGroup, ti.Type)
		}
		return err.Error()
	}
	for g := range scales {
		if e := f.StoredScale(exp[g]); ulps(scales[g], e) > 1 {
			return fmt.Sprintf("scale %d of %d is %v, source %v%s", g, len(scales), scales[g], e, f16RoundingNote(scales[g], exp[g], "`verify --ref-gguf` against the file it was requantized from checks it"))
		}
	}
	return ""
}

// f16RoundingNote explains a scale got that differs from want only by
// rounding want to f16 (quantize.F32ToF16, round to nearest even), which is
// what a requant through a type with f16 scales (format.F16ScaleTypeNames)
// leaves in an f32-scale file: it returns ": the scale rounded to f16 …"
// ending with what proves such a file, or "" when got is not that value.
func f16RoundingNote(got, want float32, proof string) string {
	if got == want || got != quantize.F16ToF32(quantize.F32ToF16(want)) {
		return ""
	}
	return " (exactly that scale rounded to f16, as a requant through " + strings.Join(format.F16ScaleTypeNames(), ", ") + " leaves it; " + proof + ")"
}

// layoutHint is added to an I2_S code mismatch: when the data decodes to
// the source's codes in another layout of format.Layouts (bitnet.cpp's ARM
// builds since 112f853 write QK_I2_S = 64 blocks, x86 builds without
// ACT_PARALLEL the 1×4 interleave; GGUF records neither), it names that
// layout and the requant command that rewrites the file; else "".
func layoutHint(ti gguf.TensorInfo, data []byte, src *convert.Source, read format.Layout, path string) string {
	k, m := int(ti.Ne[0]), int(ti.Ne[1])
	want, _, err := src.Ternary(ti.Name)
	if err != nil {
		return ""
	}
	got := make([]int8, k*m)
	for _, l := range format.Layouts {
		f := format.I2S{Layout: l}
		if l == read || f.Check(k, m) != nil {
			continue
		}
		if _, err := f.Decode(got, data, k, m); err != nil || firstDiff(got, want) >= 0 {
			continue
		}
		return fmt.Sprintf("; read as the %s layout, but the data matches the %s layout (written by %s): `bitnet-convert requant %s --from-layout %s --outtype i2_s` rewrites it in the x86 layout (add --i2s-layout %s to keep the layout, recorded in the file; run and perplexity take --from-layout %s to run it as it is)", read, l, layoutWriter(l), path, l, l, l)
	}
	return ""
}

// layoutWriter names the bitnet.cpp build that writes I2_S layout l.
func layoutWriter(l format.Layout) string {
	switch l {
	case format.LayoutARM:
		return "an ARM (NEON) build of bitnet.cpp since 112f853"
	case format.LayoutX86_1x4:
		return "an x86 build of bitnet.cpp without ACT_PARALLEL"
	}
	return "an x86 build of bitnet.cpp, or this tool by default"
}

func firstDiff(a, b []int8) int {
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return -1
}

func codeMismatch(i, k int, got, want int8) string {
	return fmt.Sprintf("ternary code %d (row %d, column %d) is %d, source %d", i, i/k, i%k, got, want)
}

// compareFloat compares a float (or Q8_0, Q6_K, Q4_K) tensor with the source values
// rounded to the stored type, in row blocks (sourceWeights.floatRows), so
// that a large embedding is never held whole; release drops the file pages
// of each block once compared.
func compareFloat(ti gguf.TensorInfo, data []byte, w *sourceWeights, release func([]byte)) string {
	switch ti.Type {
	case gguf.TypeF32, gguf.TypeF16, gguf.TypeBF16, gguf.TypeQ8_0, gguf.TypeQ6_K, gguf.TypeQ4_K:
	default:
		return "type " + ti.Type.String() + " cannot be compared"
	}
	rowElems, rowBytes := 1, len(data)
	if len(ti.Ne) > 0 {
		rowElems = int(ti.Ne[0])
	}
	if len(ti.Ne) == 2 && ti.Ne[1] > 0 {
		rowBytes = len(data) / int(ti.Ne[1])
	}
	detail := ""
	err := w.floatRows(ti.Name, refBlockElems, func(lo, hi int, want []float32) error {
		base := lo * rowElems
		if ti.Type == gguf.TypeQ6_K || ti.Type == gguf.TypeQ4_K {
			cmp := compareQ6K
			if ti.Type == gguf.TypeQ4_K {
				cmp = compareQ4K
			}
			if d := cmp(data, base, want); d != "" {
				detail = d
				return errStop
			}
			release(data[lo*rowBytes : hi*rowBytes])
			return nil
		}
		for j, x := range want {
			if sameStoredBits(ti.Type, data, base+j, x) {
				continue // equal bits pass compareFloatAt
			}
			if d := compareFloatAt(ti.Type, data, base+j, x); d != "" {
				detail = d
				return errStop
			}
		}
		if len(ti.Ne) == 2 {
			release(data[lo*rowBytes : hi*rowBytes])
		}
		return nil
	})
	if err != nil && err != errStop {
		return err.Error()
	}
	return detail
}

// compareQ6K compares the Q6_K blocks holding elements base… of data
// (base a multiple of 256) with the source values want: each dequantized
// value (quantize.DequantizeQ6K, ggml's dequantize_row_q6_K) within two
// steps d·scale of its 16-element group of the source. Half a step is the
// rounding; the levels quantize_row_q6_K_ref's scale search clamps to
// [−32, 31] can move a value by up to about 1.9 steps (bitnet.cpp's and our
// files of the golden model stay within 0.71). Another build's FMA
// contraction gives other bytes within the same bound.
func compareQ6K(data []byte, base int, want []float32) string {
	var got [quantize.QKK]float32
	for off := 0; off < len(want); off += quantize.QKK {
		b := (base + off) / quantize.QKK
		blk := data[b*quantize.Q6KBytes : (b+1)*quantize.Q6KBytes]
		quantize.DequantizeQ6K(got[:], blk)
		d := quantize.F16ToF32(binary.LittleEndian.Uint16(blk[208:]))
		if !finite32(d) {
			return fmt.Sprintf("block %d (elements %d…%d): the Q6_K scale d is %v", b, b*quantize.QKK, (b+1)*quantize.QKK-1, d)
		}
		for j, g := range got {
			step := math.Abs(float64(d * float32(int8(blk[192+j/16]))))
			// !(≤) so that a NaN difference fails too
			if x := want[off+j]; !(math.Abs(float64(g-x)) <= 2*step+1e-7) {
				return fmt.Sprintf("element %d is %v, source %v (Q6_K step %v)", base+off+j, g, x, step)
			}
		}
	}
	return ""
}

// compareQ4K compares the Q4_K blocks holding elements base… of data (base
// a multiple of 256) with the source values want: each dequantized value
// (quantize.DequantizeQ4K, ggml's dequantize_row_q4_K) within two level
// steps d·sc of its 32-element sub-block plus one min step dmin of the
// source. Half a step is the rounding and half a dmin the 6-bit min's;
// quantize_row_q4_K_ref's make_qkx2_quants search may pick a scale and min
// that clip a sub-block's extremes. bitnet.cpp's llama-quantize file of
// the golden model (testdata/golden/q4k-embd) stays within 0.75 of
// step + dmin (0.90 of the step alone).
func compareQ4K(data []byte, base int, want []float32) string {
	var got [quantize.QKK]float32
	for off := 0; off < len(want); off += quantize.QKK {
		b := (base + off) / quantize.QKK
		blk := data[b*quantize.Q4KBytes : (b+1)*quantize.Q4KBytes]
		quantize.DequantizeQ4K(got[:], blk)
		steps, dmin := quantize.Q4KStep(blk)
		if d := quantize.F16ToF32(binary.LittleEndian.Uint16(blk[0:])); !finite32(d) {
			return fmt.Sprintf("block %d (elements %d…%d): the Q4_K scale d is %v", b, b*quantize.QKK, (b+1)*quantize.QKK-1, d)
		}
		if !finite32(dmin) {
			return fmt.Sprintf("block %d (elements %d…%d): the Q4_K min scale dmin is %v", b, b*quantize.QKK, (b+1)*quantize.QKK-1, dmin)
		}
		for j, g := range got {
			step := math.Abs(float64(steps[j/32]))
			// !(≤) so that a NaN difference fails too
			if x := want[off+j]; !(math.Abs(float64(g-x)) <= 2*step+math.Abs(float64(dmin))+1e-7) {
				return fmt.Sprintf("element %d is %v, source %v (Q4_K step %v, min step %v)", base+off+j, g, x, step, dmin)
			}
		}
	}
	return ""
}

// errStop ends a row-block walk early.
var errStop = errors.New("stop")

// sameStoredBits reports whether element i of data (stored as t) has the
// bits of want rounded to t: the common case of compareFloat, decided
// without widening both sides. False means compareFloatAt must judge (it
// also accepts one ulp, ±0, and Q8_0 within its step).
func sameStoredBits(t gguf.Type, data []byte, i int, want float32) bool {
	switch t {
	case gguf.TypeF32:
		return binary.LittleEndian.Uint32(data[4*i:]) == math.Float32bits(want)
	case gguf.TypeF16:
		return binary.LittleEndian.Uint16(data[2*i:]) == quantize.F32ToF16(want)
	case gguf.TypeBF16:
		return binary.LittleEndian.Uint16(data[2*i:]) == quantize.F32ToBF16(want)
	}
	return false
}

// compareFloatAt compares element i of data (stored as t) with the source
// value want rounded to t ("" when equal, else the difference in words).
func compareFloatAt(t gguf.Type, data []byte, i int, want float32) string {
	var got, exp float32
	switch t {
	case gguf.TypeF32:
		got, exp = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:])), want
	case gguf.TypeF16:
		got, exp = quantize.F16ToF32(binary.LittleEndian.Uint16(data[2*i:])), quantize.F16ToF32(quantize.F32ToF16(want))
	case gguf.TypeBF16:
		got, exp = quantize.BF16ToF32(binary.LittleEndian.Uint16(data[2*i:])), quantize.BF16ToF32(quantize.F32ToBF16(want))
	case gguf.TypeQ8_0:
		blk := data[(i/32)*34:]
		d := quantize.F16ToF32(binary.LittleEndian.Uint16(blk))
		if !finite32(d) {
			return fmt.Sprintf("block %d (elements %d…%d): the Q8_0 scale d is %v", i/32, i/32*32, i/32*32+31, d)
		}
		got = d * float32(int8(blk[2+i%32]))
		// half a step, plus what the f16 rounding of d moves the largest
		// quant (127·|d − f16(d)| ≤ 127·d·2⁻¹¹); !(≤) so that NaN fails
		if !(math.Abs(float64(got-want)) <= math.Abs(float64(d))*(0.5+127.0/2048)+1e-7) {
			return fmt.Sprintf("element %d is %v, source %v (Q8_0 step %v)", i, got, want, d)
		}
		return ""
	}
	if got != exp && ulps(got, exp) > 1 && !(got == 0 && exp == 0) {
		return fmt.Sprintf("element %d is %v, source %v", i, got, exp)
	}
	return ""
}

// finite32 reports whether x is neither NaN nor ±Inf.
func finite32(x float32) bool {
	return !math.IsNaN(float64(x)) && !math.IsInf(float64(x), 0)
}

func ulps(a, b float32) uint32 {
	x, y := math.Float32bits(a), math.Float32bits(b)
	if x > y {
		return x - y
	}
	return y - x
}

// fileLayout is the I2_S layout a file records under format.LayoutKey, or
// x86 (what every bitnet.cpp x86 build and Python converter writes).
func fileLayout(f *reader.File) format.Layout {
	if s, ok := f.String(format.LayoutKey); ok {
		if l, err := format.ParseLayout(s); err == nil {
			return l
		}
	}
	return format.LayoutX86
}
