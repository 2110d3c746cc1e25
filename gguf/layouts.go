package gguf

import "fmt"

// The 2026 type-id map: ids that mean different layouts in mainline ggml and
// its forks (shared/spec formats-2026.md A1 and §5). A stored id is decided
// by the data, never by the id alone: each documented layout of the id is
// checked against the tensor's span (the bytes from its offset to the next
// tensor's offset or to the end of the data).
//
//	id   layouts                                            bytes per block
//	39   TL2 (bitnet.cpp) / MXFP4 (mainline)                ResolveCollision
//	40   NVFP4 (mainline); an older Prism Q1_0 (unsized)    36 per 64
//	41   Q1_0 (mainline); AngelSlim 2-bit (unsized)         18 per 128
//	42   Q2_0 g64 (mainline) / Prism legacy Q2_0 g128       18 per 64 / 34 per 128
//	142  PQ2_0 (Prism)                                      34 per 128
//	143  PTQ1_0 (Prism)                                     28 per 128
var idLayouts = map[Type][]Type{
	TypeNVFP4:  {TypeNVFP4},
	TypeQ1_0:   {TypeQ1_0},
	TypeQ2_0:   {TypeQ2_0, TypeQ2_0G128},
	TypePQ2_0:  {TypePQ2_0},
	TypePTQ1_0: {TypePTQ1_0},
}

// HasLayouts reports whether the stored id t is one ResolveLayout decides.
func (t Type) HasLayouts() bool {
	_, ok := idLayouts[t]
	return ok
}

// LayoutUnknown returns the Type that stands for stored id id whose data
// fits none of the id's documented layouts. Its String is "type N (layout
// unknown)"; it has no traits, so NBytes fails for it: the reader keeps
// the tensor's span as its size.
func LayoutUnknown(id uint32) Type { return unknownID | Type(id) }

// IsLayoutUnknown reports whether t is a LayoutUnknown type.
func (t Type) IsLayoutUnknown() bool { return t&unknownID != 0 }

// fitsSpan reports whether a tensor of n bytes fills a span: the bytes up
// to the next tensor (or the end of the data) are the tensor padded to the
// alignment, so n ≤ span < n + align.
func fitsSpan(n, span, align uint64) bool { return n <= span && span-n < align }

// ResolveLayout decides which layout a tensor of stored id t with ne has,
// given its span and the file's alignment: the one documented layout of t
// whose size fits the span (fitsSpan). It returns the layout and "" when
// exactly one fits; t and a one-line reason when several fit ("type 42:
// layout ambiguous (…)"); LayoutUnknown(id) and a reason when none does
// ("type 42: layout unknown (S bytes for ne …)"). Ids without several
// documented layouts (HasLayouts false) are returned unchanged.
func ResolveLayout(t Type, ne []uint64, span, align uint64) (Type, string) {
	cands, ok := idLayouts[t]
	if !ok {
		return t, ""
	}
	var fit []Type
	for _, c := range cands {
		if n, err := NBytes(c, ne); err == nil && fitsSpan(n, span, align) {
			fit = append(fit, c)
		}
	}
	switch len(fit) {
	case 1:
		return fit[0], ""
	case 0:
		return LayoutUnknown(t.ID()), fmt.Sprintf("type %d: layout unknown (%d bytes for ne %v; %s)", t.ID(), span, ne, layoutSizes(cands, ne))
	}
	return t, fmt.Sprintf("type %d: layout ambiguous (%d bytes for ne %v fit %s)", t.ID(), span, ne, layoutSizes(fit, ne))
}

// layoutSizes lists each layout with its size for ne: "Q2_0 18 B per 64 =
// 576 bytes or Q2_0_g128 34 B per 128 = 544 bytes".
func layoutSizes(ts []Type, ne []uint64) string {
	s := ""
	for i, c := range ts {
		tr := typeTraits[c]
		if i > 0 {
			s += " or "
		}
		s += fmt.Sprintf("%s %d B per %d", tr.Name, tr.TypeSize, tr.BlockSize)
		if n, err := NBytes(c, ne); err == nil {
			s += fmt.Sprintf(" = %d bytes", n)
		}
	}
	return s
}

// NeedsHadamard reports whether t is a fork type whose weights are meant
// for activations rotated by a Hadamard transform its KVs describe (Prism
// PQ2_0, PTQ1_0): a loader that ignores the transform computes garbage, so
// no command of this project computes, copies or converts such a tensor.
func (t Type) NeedsHadamard() bool { return t == TypePQ2_0 || t == TypePTQ1_0 }

// HadamardRefusal is the one-line reason a tensor of a NeedsHadamard type
// is refused.
func HadamardRefusal(t Type) string {
	return fmt.Sprintf("type %s (id %d, PrismML's fork) needs the Hadamard transform of the activations that the file's KVs describe; no runtime here computes it and a copy or conversion that ignores it gives garbage: run the file with PrismML's llama.cpp fork", t, t.ID())
}

// layoutNames name each layout of the type-id map with its source and size.
var layoutNames = map[Type]string{
	TypeMXFP4:    "mainline MXFP4, 17 B per 32",
	TypeNVFP4:    "mainline NVFP4, 36 B per 64",
	TypeQ1_0:     "mainline Q1_0, 18 B per 128",
	TypeQ2_0:     "mainline Q2_0 g64, 18 B per 64",
	TypeQ2_0G128: "Prism legacy Q2_0 g128 under id 42, 34 B per 128",
	TypePQ2_0:    "Prism PQ2_0, 34 B per 128, Hadamard-rotated activations",
	TypePTQ1_0:   "Prism PTQ1_0, 28 B per 128 (scale last), Hadamard-rotated activations",
}

// LayoutName names the layout of a tensor of type t for ids the 2026
// type-id map decides (39–42, 142, 143): source, name and block size
// ("mainline Q2_0 g64, 18 B per 64"); "" for other types.
func LayoutName(t Type) string { return layoutNames[t] }
