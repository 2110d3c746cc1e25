package convert

import (
	"context"
	"fmt"

	"github.com/bitnet-convert/bitnet-convert/format"
	"github.com/bitnet-convert/bitnet-convert/gguf"
	"github.com/bitnet-convert/bitnet-convert/hf"
	"github.com/bitnet-convert/bitnet-convert/tensormap"
)

// Source gives the values a conversion of a checkpoint means, tensor by
// tensor and by GGUF name, without writing a file: the ternary codes and
// scale of each projection, and the float32 weights an F32 conversion would
// write. `verify` compares GGUF files and runs its float reference with it.
type Source struct {
	ckpt   *hf.Checkpoint
	plan   *Plan
	conv   *converter
	byName map[string]int
}

// OpenSource opens the checkpoint in dir and plans an F32 conversion with
// opts (OutType, NoVocab and VocabOnly are ignored: the plan always has every
// tensor and no vocabulary). Errors are those of hf.Open and NewPlan.
func OpenSource(dir string, opts Options) (*Source, error) {
	ckpt, err := hf.Open(dir)
	if err != nil {
		return nil, err
	}
	opts.OutType, opts.NoVocab, opts.VocabOnly = OutF32, true, false
	opts.AllowFallback = true
	opts.Log, opts.Verbose, opts.Progress = nil, false, nil
	plan, err := NewPlan(ckpt, opts)
	if err != nil {
		ckpt.Close()
		return nil, err
	}
	s := &Source{ckpt: ckpt, plan: plan, byName: map[string]int{}}
	s.conv = &converter{ckpt: ckpt, plan: plan, opts: opts, threads: opts.Threads}
	if s.conv.threads <= 0 {
		s.conv.threads = 1
	}
	for i, t := range plan.Tensors {
		s.byName[t.GGUFName] = i
	}
	return s, nil
}

// Plan returns the F32 plan (tensor list with HF names, classes and shapes).
func (s *Source) Plan() *Plan { return s.plan }

// Config returns the checkpoint's config.json.
func (s *Source) Config() *hf.Config { return s.ckpt.Config }

// Close releases the checkpoint.
func (s *Source) Close() error { return s.ckpt.Close() }

// Tensor returns the planned tensor of a GGUF name.
func (s *Source) Tensor(ggufName string) (PlannedTensor, bool) {
	i, ok := s.byName[ggufName]
	if !ok {
		return PlannedTensor{}, false
	}
	return s.plan.Tensors[i], true
}

// Ternary returns a fresh copy of the codes ([out, in] row-major in the row
// order the GGUF stores, i.e. q/k rows interleaved for arch llama; values
// −1/0/1) and the per-tensor scale of the projection ggufName. Errors name
// the tensor; a non-projection is an error.
func (s *Source) Ternary(ggufName string) ([]int8, float32, error) {
	codes, scale, err := s.TernaryView(ggufName)
	if err != nil {
		return nil, 0, err
	}
	return append([]int8(nil), codes...), scale, nil
}

// TernaryView is Ternary without the copy: the codes are s's own buffer,
// valid until the next call of any method of s that reads tensor data
// (Ternary, TernaryView, Float32, Float32HF), which may overwrite them. For a
// caller that looks at one matrix at a time (verify) it saves a copy of every
// projection and the garbage of one. The caller must not modify the codes.
func (s *Source) TernaryView(ggufName string) ([]int8, float32, error) {
	t, d, err := s.read(ggufName)
	if err != nil {
		return nil, 0, err
	}
	defer d.Release()
	if t.Class != tensormap.Projection || t.NotConverted {
		return nil, 0, fmt.Errorf("tensor %s is not a ternary projection", ggufName)
	}
	if t.GroupScaled {
		return nil, 0, fmt.Errorf("tensor %s is group-scaled ternary (one scale per %d inputs), not one scale per tensor; this command does not take group-scaled checkpoints (not supported)", ggufName, GroupScaledQK)
	}
	codes, scale, _, err := s.conv.ternary(context.Background(), &t, d)
	if err != nil {
		return nil, 0, err
	}
	if codes, _, err = s.conv.ropeOrder(&t, codes, nil); err != nil {
		return nil, 0, err
	}
	return codes, scale, nil
}

// ReternarizeFor makes the group-scaled projection ggufName read as a float
// master weight (codes and one abs-mean scale per tensor, as any bf16
// master), which is what hf2gguf --ternarize wrote when the GGUF's type t
// cannot hold its group scales (groupScaledType: I2_S, TL1/TL2, TQ1_0/TQ2_0,
// IQ1_BN/IQ2_BN). It reports whether the tensor changed: false for a tensor
// that is not group-scaled, a float t, or a type that keeps the scales
// (Q2_0), whose reading stays exact.
func (s *Source) ReternarizeFor(ggufName string, t gguf.Type) bool {
	i, ok := s.byName[ggufName]
	if !ok || !s.plan.Tensors[i].GroupScaled {
		return false
	}
	spec, ok := format.SpecOf(t)
	if !ok {
		return false // a float type keeps the values
	}
	if elems, _ := spec.Block(); spec.Scale == format.ScaleF16Block && elems > 0 && GroupScaledQK%elems == 0 {
		return false // Q2_0: the scales are kept (holdsGroupScales)
	}
	s.plan.Tensors[i].GroupScaled = false
	return true
}

// TernaryGroupsView is TernaryView with the scales as the checkpoint
// stores them: for a group-scaled projection (PlannedTensor.GroupScaled)
// one scale per GroupScaledQK inputs of a row, row-major in the GGUF's row
// order, with group = GroupScaledQK; for any other projection the one
// per-tensor scale with group = 0. The codes are s's buffer as in
// TernaryView; scales is the caller's.
func (s *Source) TernaryGroupsView(ggufName string) (codes []int8, scales []float32, group int, err error) {
	t, ok := s.Tensor(ggufName)
	if !ok || !t.GroupScaled {
		c, scale, err := s.TernaryView(ggufName)
		return c, []float32{scale}, 0, err
	}
	t, d, err := s.read(ggufName)
	if err != nil {
		return nil, nil, 0, err
	}
	defer d.Release()
	codes, scales, _, err = s.conv.groupScaled(context.Background(), &t, d)
	if err != nil {
		return nil, nil, 0, err
	}
	if codes, _, err = s.conv.ropeOrder(&t, codes, nil); err != nil {
		return nil, nil, 0, err
	}
	if scales, err = s.conv.ropeScales(&t, scales); err != nil {
		return nil, nil, 0, err
	}
	return codes, scales, GroupScaledQK, nil
}

// Float32 returns a fresh copy of the float32 values an F32 conversion writes
// for ggufName, in the GGUF's row order (q/k rows interleaved for arch
// llama): ternary × scale for projections, the weights (with the Gemma
// (1 + w) fix where it applies) for the rest.
func (s *Source) Float32(ggufName string) ([]float32, error) { return s.float32(ggufName, false) }

// Float32HF is Float32 in the Hugging Face row order (no rope interleaving),
// for a reference that applies rope as transformers does (rotate_half).
func (s *Source) Float32HF(ggufName string) ([]float32, error) { return s.float32(ggufName, true) }

func (s *Source) float32(ggufName string, hfOrder bool) ([]float32, error) {
	t, d, err := s.read(ggufName)
	if err != nil {
		return nil, err
	}
	defer d.Release()
	if t.Class == tensormap.Projection && t.GroupScaled {
		// The checkpoint's values are the weights (−0 kept).
		_, _, x, err := s.conv.groupScaled(context.Background(), &t, d)
		if err == nil && !hfOrder {
			_, x, err = s.conv.ropeOrder(&t, make([]int8, len(x)), x)
		}
		if err != nil {
			return nil, err
		}
		return append([]float32(nil), x...), nil
	}
	if t.Class == tensormap.Projection && !t.NotConverted {
		codes, scale, x, err := s.conv.ternary(context.Background(), &t, d)
		if err != nil {
			return nil, err
		}
		if !hfOrder {
			if codes, x, err = s.conv.ropeOrder(&t, codes, x); err != nil {
				return nil, err
			}
		}
		at := ternaryValue(codes, scale, x)
		out := make([]float32, len(codes))
		for i := range out {
			out[i] = at(i)
		}
		return out, nil
	}
	s.conv.f32 = nil // decode into a fresh slice the caller keeps: no second copy of a large embedding
	out, err := s.conv.decode(context.Background(), &t, d)
	s.conv.f32 = nil
	if err != nil {
		return nil, err
	}
	if gemmaFix(s.plan, &t) {
		for i := range out {
			out[i] += 1
		}
	}
	if t.NotConverted && !hfOrder {
		perm, err := s.conv.ropeOrderFloat(&t, out)
		if err != nil {
			return nil, err
		}
		out = append(out[:0], perm...)
	}
	return out, nil
}

func (s *Source) read(ggufName string) (PlannedTensor, *hf.TensorData, error) {
	t, ok := s.Tensor(ggufName)
	if !ok {
		return t, nil, fmt.Errorf("tensor %s has no source in %s", ggufName, s.ckpt.Dir)
	}
	d, err := s.ckpt.Read(t.Source)
	if err != nil {
		return t, nil, err
	}
	return t, d, nil
}
