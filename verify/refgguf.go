package verify

import (
	"fmt"
	"math"
	rtdebug "runtime/debug"
	"slices"

	"github.com/bitnet-convert/bitnet-convert/convert"
	"github.com/bitnet-convert/bitnet-convert/format"
	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
	"github.com/bitnet-convert/bitnet-convert/runtime"
)

// The --ref-gguf check proves that one GGUF (Options.GGUF, "B") holds the
// same model as another (Options.RefGGUF, "A"), as a `requant` must:
//
//   - the same tensor names and shapes (ne);
//   - ternary tensors (I2_S of any layout, TL1, TL2, TQ1_0, TQ2_0, IQ1_BN,
//     IQ2_BN) decode to the same codes, element by element, and every
//     non-zero code has the same scale within the rounding of the coarser
//     stored scale: exact between f32 scales (I2_S, TL1, TL2, IQ2_BN),
//     relative 2⁻¹¹ when either file stores it as f16 (TQ1_0, TQ2_0,
//     IQ1_BN; half an f16 ulp), with 2⁻²⁵ absolute for f16 subnormals;
//     a ternary tensor against a float one (a F32/F16/BF16 file of a
//     ternary model) compares code·scale with the float values the same
//     way (BF16: 2⁻⁸);
//   - float tensors (embedding, head, norms) of the same type are equal
//     byte for byte; of another type (--token-embedding-type) B's bytes are
//     what requant's encoder makes of A's decoded values;
//   - the runtime's logits of both files on the prompt: bit-identical when
//     every projection runs the same kernel in both files (I2_S of any
//     layout and TL1/TL2 all run the I2_S kernel; IQ1_BN/IQ2_BN the Q8_K64
//     one) with the same stored values and every float tensor is equal;
//     otherwise both within the limits verify --hf derives (thresholds.go)
//     against the float64 reference built from A, the looser of A's and
//     B's bounds.
//
// A file the runtime cannot run (a type it does not compute) gets a note
// and no logit comparison; the tensor checks still decide.

// refScaleTol is the relative tolerance for a scale (or value) stored in t
// (format.ScaleTolerance: the type table's scale storage).
func refScaleTol(t gguf.Type) float64 { return format.ScaleTolerance(t) }

// ternaryTensor is one decoded ternary or float tensor: codes with their
// per-element scale, or plain values (codes nil).
type ternaryTensor struct {
	codes  []int8
	scales []float32 // per scale group
	group  int       // elements per scale (0: one for the tensor)
	values []float32 // float tensors
}

func (t *ternaryTensor) scaleAt(e int) float32 {
	if t.group == 0 {
		return t.scales[0]
	}
	return t.scales[e/t.group]
}

// decodeRefTensor decodes tensor ti of f: ternary types through the format
// layer (layout and TL tiling of that file), float types widened.
func decodeRefTensor(f *reader.File, ti gguf.TensorInfo, kernels []format.Kernel) (*ternaryTensor, []byte, error) {
	data, err := f.TensorData(ti.Name)
	if err != nil {
		return nil, nil, err
	}
	n := 1
	for _, d := range ti.Ne {
		n *= int(d)
	}
	if fm, ok := format.ForType(ti.Type, fileLayout(f), kernels); ok {
		if len(ti.Ne) != 2 {
			return nil, nil, fmt.Errorf("%s tensor of %d dimensions", ti.Type, len(ti.Ne))
		}
		k, m := int(ti.Ne[0]), int(ti.Ne[1])
		if err := fm.Check(k, m); err != nil {
			return nil, nil, err
		}
		t := &ternaryTensor{codes: make([]int8, n), group: fm.ScaleGroup(k)}
		if t.scales, err = fm.Decode(t.codes, data, k, m); err != nil {
			return nil, nil, err
		}
		return t, data, nil
	}
	t := &ternaryTensor{values: make([]float32, n)}
	if err := convert.DecodeFloats(t.values, ti.Type, data); err != nil {
		return nil, nil, err
	}
	return t, data, nil
}

// within reports whether a and b agree within the relative tolerance tol
// (plus f16's subnormal half-step when tol is f16's).
func within(a, b float32, tol float64) bool {
	if a == b {
		return true
	}
	d := math.Abs(float64(a) - float64(b))
	abs := 0.0
	if tol > 0 {
		abs = 0x1p-25
	}
	return d <= tol*math.Max(math.Abs(float64(a)), math.Abs(float64(b)))+abs
}

// compareRefTensor compares tensor tb of B with ta of A and returns "" or
// the first difference; exact is cleared when the stored values differ at
// all (so the logits need not be bit-identical).
func compareRefTensor(fa, fb *reader.File, ta, tb gguf.TensorInfo, ka, kb []format.Kernel, exact *bool) string {
	if ta.Type == tb.Type && !format.IsTernary(ta.Type) {
		// Equal bytes need no widening (a 2B-4T embedding is 1.3 GB
		// as float32, twice); only a difference is decoded to name it.
		da, errA := fa.TensorData(ta.Name)
		db, errB := fb.TensorData(tb.Name)
		if errA == nil && errB == nil && slices.Equal(da, db) {
			return ""
		}
	}
	a, da, err := decodeRefTensor(fa, ta, ka)
	if err != nil {
		return "reference: " + err.Error()
	}
	b, db, err := decodeRefTensor(fb, tb, kb)
	if err != nil {
		return err.Error()
	}
	k := int(tb.Ne[0])
	tol := math.Max(refScaleTol(ta.Type), refScaleTol(tb.Type))
	switch {
	case a.codes != nil && b.codes != nil:
		if d := firstDiff(b.codes, a.codes); d >= 0 {
			return fmt.Sprintf("ternary code %d (row %d, column %d) is %d, reference %d", d, d/k, d%k, b.codes[d], a.codes[d])
		}
		for e, c := range b.codes {
			if c == 0 {
				continue
			}
			sa, sb := a.scaleAt(e), b.scaleAt(e)
			if sa != sb {
				*exact = false
			}
			if !within(sa, sb, tol) {
				return fmt.Sprintf("scale of element %d (row %d) is %v, reference %v (beyond the stored rounding %.3g)%s", e, e/k, sb, sa, tol, f16RoundingNote(sb, sa, "compare it with the f16-scale file it was requantized from"))
			}
		}
	case a.codes == nil && b.codes == nil:
		if ta.Type == tb.Type {
			if !slices.Equal(da, db) {
				for e := range a.values {
					if math.Float32bits(a.values[e]) != math.Float32bits(b.values[e]) {
						return fmt.Sprintf("element %d is %v, reference %v (same type %s)", e, b.values[e], a.values[e], tb.Type)
					}
				}
				return fmt.Sprintf("bytes differ from the reference (same type %s)", tb.Type)
			}
			return ""
		}
		*exact = false
		want := make([]byte, len(db))
		if err := convert.EncodeFloats(want, tb.Type, a.values); err != nil {
			return fmt.Sprintf("reference %s → %s: %v", ta.Type, tb.Type, err)
		}
		if !slices.Equal(want, db) {
			w := make([]float32, len(b.values))
			_ = convert.DecodeFloats(w, tb.Type, want)
			for e := range b.values {
				if math.Float32bits(w[e]) != math.Float32bits(b.values[e]) {
					return fmt.Sprintf("element %d is %v, the reference's %s value %v stored as %s gives %v", e, b.values[e], ta.Type, a.values[e], tb.Type, w[e])
				}
			}
			return fmt.Sprintf("bytes differ from the reference's %s values stored as %s", ta.Type, tb.Type)
		}
	default:
		// One ternary, one float tensor: code·scale against the value.
		*exact = false
		t, v := a, b.values
		if b.codes != nil {
			t, v = b, a.values
		}
		for e, c := range t.codes {
			want := float32(c) * t.scaleAt(e)
			if (v[e] == 0) != (c == 0) || (c != 0 && (v[e] < 0) != (c < 0)) || !within(float32(math.Abs(float64(v[e]))), float32(math.Abs(float64(want))), tol) {
				return fmt.Sprintf("element %d (row %d): %s holds code %d × scale %v, %s holds %v", e, e/k, ternaryName(t == b), c, t.scaleAt(e), ternaryName(t != b), v[e])
			}
		}
	}
	return ""
}

func ternaryName(isB bool) string {
	if isB {
		return "the file"
	}
	return "the reference"
}

// kernelClass is the runtime kernel a weight type runs on (refgguf's rule
// for bit-identical logits).
func kernelClass(t gguf.Type) string {
	switch t {
	case gguf.TypeI2S, gguf.TypeTL1, gguf.TypeTL2:
		return "I2_S"
	case gguf.TypeIQ1BN, gguf.TypeIQ2BN:
		return "Q8_K64"
	}
	return t.String()
}

// runRefGGUF is Run with Options.RefGGUF: f is Options.GGUF (B).
func runRefGGUF(f *reader.File, rep *Report, opts Options) (*Report, error) {
	fa, err := reader.Open(opts.RefGGUF)
	if err != nil {
		return nil, err
	}
	defer fa.Close()
	rep.Ref = opts.RefGGUF
	kb, _, _ := runtime.StoredKernelConfig(f.KVs)
	if opts.KernelConfig != nil {
		if kb, err = format.ParseKernelConfig(opts.KernelConfig); err != nil {
			return nil, fmt.Errorf("kernel configuration: %w", err)
		}
	}
	ka, _, _ := runtime.StoredKernelConfig(fa.KVs)

	opts.stage("compare the tensors with the reference")
	exact, structureOK := true, true
	for _, ta := range fa.Tensors {
		if _, ok := f.Tensor(ta.Name); !ok {
			rep.Tensors = append(rep.Tensors, TensorCheck{Name: ta.Name, Type: ta.Type.String(), Detail: "missing (present in the reference)"})
			rep.fail("tensor %s: missing (present in the reference %s)", ta.Name, opts.RefGGUF)
			structureOK = false
		}
	}
	for _, tb := range f.Tensors {
		tc := TensorCheck{Name: tb.Name, Type: tb.Type.String()}
		ta, ok := fa.Tensor(tb.Name)
		switch {
		case !ok:
			tc.Detail = "not in the reference"
			structureOK = false
		case !slices.Equal(ta.Ne, tb.Ne):
			tc.Detail = fmt.Sprintf("ne %v, reference %v", tb.Ne, ta.Ne)
			structureOK = false
		default:
			if kernelClass(ta.Type) != kernelClass(tb.Type) {
				exact = false
			}
			tc.Detail = compareRefTensor(fa, f, ta, tb, ka, kb, &exact)
		}
		releaseFile(f, func(t gguf.TensorInfo) bool { return t.Name == tb.Name })
		releaseFile(fa, func(t gguf.TensorInfo) bool { return t.Name == tb.Name })
		tc.OK = tc.Detail == ""
		if !tc.OK {
			exact = false
			rep.fail("tensor %s (%s, reference %s): %s", tb.Name, tb.Type, ta.Type, tc.Detail)
		}
		rep.Tensors = append(rep.Tensors, tc)
	}
	if !structureOK {
		rep.Notes = append(rep.Notes, "logits not compared: the two files differ in structure")
		rep.Pass = len(rep.Failures) == 0
		return rep, nil
	}
	if runtime.IsEmbeddingFile(f.KVs, f.Tensors) {
		rep.Notes = append(rep.Notes, "logits not compared: embedding model (the tensor checks decide)")
		rep.Pass = len(rep.Failures) == 0
		return rep, nil
	}
	if exact {
		rep.Thresholds = Thresholds{MinTop1: 1, MaxDelta: 0, MaxKL: 0, MaxPPLRel: 0, MinFiniteSpread: rep.Thresholds.MinFiniteSpread}
		rep.Notes = append(rep.Notes, "same kernels and stored values: the logits must be bit-identical")
	} else {
		rep.Notes = append(rep.Notes, "other kernels or scale rounding: both files' logits are held to the error model's limits (as verify --hf) against the float64 reference built from "+opts.RefGGUF+"'s weights")
	}
	if opts.Adjust != nil {
		opts.Adjust(&rep.Thresholds)
	}

	// One model in memory at a time: B runs the prompt, then A the same
	// ids, then (across kernels) the float reference reads A tensor by
	// tensor.
	opts.stage("run the prompt in both files")
	mb, err := loadModel(f, runtime.Options{Threads: opts.Threads, TLKernels: kb, Arith: opts.Arith})
	if err != nil {
		rep.Notes = append(rep.Notes, fmt.Sprintf("logits not compared: the runtime cannot run %s: %v", opts.GGUF, err))
		rep.Pass = len(rep.Failures) == 0
		return rep, nil
	}
	rep.Arith = mb.Arith()
	ids, err := promptIDs(f, opts)
	if err != nil {
		return nil, err
	}
	if len(ids)+opts.Tokens > mb.Params.NCtx {
		return nil, fmt.Errorf("the prompt (%d tokens) plus %d generated tokens exceeds the context length %d of %s (%w)", len(ids), opts.Tokens, mb.Params.NCtx, opts.GGUF, ErrContextLength)
	}
	rowsB, seq, err := runRuntime(mb, ids, opts.Tokens)
	if err != nil {
		return nil, err
	}
	mb = nil
	releaseFile(f, func(gguf.TensorInfo) bool { return true })
	rtdebug.FreeOSMemory()
	rep.IDs = seq
	rep.Sanity = checkSanity(rep, rowsB)
	ma, err := loadModel(fa, runtime.Options{Threads: opts.Threads, TLKernels: ka, Arith: opts.Arith})
	if err != nil {
		rep.Notes = append(rep.Notes, fmt.Sprintf("logits not compared: the runtime cannot run %s: %v", opts.RefGGUF, err))
		rep.Pass = len(rep.Failures) == 0
		return rep, nil
	}
	rep.RefArith = ma.Arith()
	if len(seq) > ma.Params.NCtx {
		return nil, fmt.Errorf("the %d positions exceed the context length %d of %s (%w)", len(seq), ma.Params.NCtx, opts.RefGGUF, ErrContextLength)
	}
	rowsA, err := ma.NewSession(len(seq)+1).EvalBatch(seq, 0)
	if err != nil {
		return nil, fmt.Errorf("%s: runtime on the prompt: %w", opts.RefGGUF, err)
	}
	ma = nil
	releaseFile(fa, func(gguf.TensorInfo) bool { return true })
	rtdebug.FreeOSMemory()
	if exact {
		var ref []float64
		for _, r := range rowsA {
			for _, v := range r {
				ref = append(ref, float64(v))
			}
		}
		compareNumbers(rep, ref, rowsB, seq)
		rep.Pass = len(rep.Failures) == 0
		return rep, nil
	}

	opts.stage("build the float reference from " + opts.RefGGUF)
	g, err := refGeometryOfGGUF(fa, opts.RefGGUF)
	if err != nil {
		rep.Notes = append(rep.Notes, "logits not compared: "+err.Error())
		rep.Pass = len(rep.Failures) == 0
		return rep, nil
	}
	emA, emB := newErrorModel(tensorTypes(fa), g), newErrorModel(tensorTypes(f), g)
	g.observe = func(name string, in []float64, inDim int) {
		emA.observe(name, in, inDim)
		emB.observe(name, in, inDim)
	}
	g.observeScores = func(rms float64) {
		emA.observeScores(rms)
		emB.observeScores(rms)
	}
	ref, err := refLogits(&ggufWeights{f: fa, kernels: ka}, g, seq, nil)
	if err != nil {
		rep.fail("float reference from %s: %v", opts.RefGGUF, err)
		rep.Pass = false
		return rep, nil
	}
	// Both files are held to the looser of their two bounds.
	deriveThresholds(rep, opts, ref, len(rowsB), emB, emA)
	rep.Numbers = compareNumbersAs(rep, "logits of "+opts.GGUF+" against the float reference: ", ref, rowsB, seq)
	rep.RefNumbers = compareNumbersAs(rep, "logits of the reference file "+opts.RefGGUF+" against its float reference: ", ref, rowsA, seq)
	rep.Pass = len(rep.Failures) == 0
	return rep, nil
}
