package format

import (
	"strings"

	"github.com/bitnet-convert/bitnet-convert/gguf"
)

// ScaleStorage is how a ternary type stores its scales: the granularity
// (per tensor, per block, per row) and the width (f32 or f16).
type ScaleStorage int

// Scale storages of the table (see each type's file for the source).
const (
	// ScaleF32Tensor is one float32 per tensor after the codes (I2_S,
	// TL1, TL2).
	ScaleF32Tensor ScaleStorage = iota
	// ScaleF16Block is one f16 d per block (TQ1_0, TQ2_0, Q2_0).
	ScaleF16Block
	// ScaleF16Row is one f16 before each row (IQ1_BN).
	ScaleF16Row
	// ScaleF32Row is one float32 before each row (IQ2_BN).
	ScaleF32Row
)

// F16 reports whether s stores its scales as f16 (so a float32 scale is
// rounded: relative error up to 2⁻¹¹, and values beyond 65504 are +Inf).
func (s ScaleStorage) F16() bool { return s == ScaleF16Block || s == ScaleF16Row }

// Tolerance is the relative error of a scale stored in s: 2⁻¹¹ (half an f16
// ulp) for f16 scales, 0 for f32.
func (s ScaleStorage) Tolerance() float64 {
	if s.F16() {
		return 0x1p-11
	}
	return 0
}

// String names s for messages and -v logs: "f32 per tensor", "f16 per
// block", "f16 per row", "f32 per row".
func (s ScaleStorage) String() string {
	return [...]string{"f32 per tensor", "f16 per block", "f16 per row", "f32 per row"}[s]
}

// Spec is one row of the type table: everything about a ternary output type
// that the converter, requant, verify, inspect, the command help and the
// runtime derive from (the gguf type traits, block elements and bytes, stay
// in gguf/types.go and are reached through Type).
type Spec struct {
	// Name as accepted by --outtype (lower case): "i2_s", "tq2_0", ….
	Name string
	// Type is the ggml type id of the tensors.
	Type gguf.Type
	// New builds the format; layout is the I2_S layout (ignored by the
	// others) and kernels the TL tiling (TL1/TL2 only).
	New func(layout Layout, kernels []Kernel) Format
	// Runtime is the program family whose loader reads this type (for the
	// arch and KV names): "bitnet.cpp", "llama.cpp", "ik_llama.cpp".
	Runtime string
	// FileType is general.file_type for a file of mostly this type, as
	// the llama.h of Runtime numbers it.
	FileType gguf.FileType
	// FtypeName is the runtime's llama_model_ftype_name for FileType (what
	// llama-bench prints in its model column).
	FtypeName string
	// Scale is how the scales are stored.
	Scale ScaleStorage
	// QuantVersion: files of this type carry general.quantization_version
	// = 2 (llama-quantize writes it; bitnet.cpp's TL files carry none).
	QuantVersion bool
	// ParallelRows: the data is the rows back to back (with a per-tensor
	// tail when Scale is ScaleF32Tensor), so ranges of rows are encoded and
	// decoded in parallel (EncodeParallel). TL layouts tile rows and K
	// together.
	ParallelRows bool
}

// Block returns the elements and bytes of one block of the type (the gguf
// type traits; 1 and 1 for the per-tensor types I2_S/TL1/TL2).
func (s Spec) Block() (elems, bytes int) {
	tr, _ := s.Type.Traits()
	return int(tr.BlockSize), int(tr.TypeSize)
}

// specs is the type table: one row per ternary output type, in the order the
// help and messages list them.
var specs = []Spec{
	{Name: "i2_s", Type: gguf.TypeI2S, New: func(l Layout, _ []Kernel) Format { return I2S{Layout: l} },
		Runtime: RuntimeBitnetCpp, FileType: gguf.FileTypeMostlyI2S, FtypeName: "I2_S - 2 bpw ternary",
		Scale: ScaleF32Tensor, QuantVersion: true, ParallelRows: true},
	{Name: "tl1", Type: gguf.TypeTL1, New: func(_ Layout, ks []Kernel) Format { return TL1{Kernels: ks} },
		Runtime: RuntimeBitnetCpp, FileType: gguf.FileTypeMostlyTL1, FtypeName: "TL1",
		Scale: ScaleF32Tensor},
	{Name: "tl2", Type: gguf.TypeTL2, New: func(_ Layout, ks []Kernel) Format { return TL2{Kernels: ks} },
		Runtime: RuntimeBitnetCpp, FileType: gguf.FileTypeMostlyTL2, FtypeName: "TL2",
		Scale: ScaleF32Tensor},
	{Name: "tq1_0", Type: gguf.TypeTQ1_0, New: func(Layout, []Kernel) Format { return TQ1_0{} },
		Runtime: RuntimeLlamaCpp, FileType: gguf.FileTypeMostlyTQ1_0, FtypeName: "TQ1_0 - 1.69 bpw ternary",
		Scale: ScaleF16Block, QuantVersion: true, ParallelRows: true},
	{Name: "tq2_0", Type: gguf.TypeTQ2_0, New: func(Layout, []Kernel) Format { return TQ2_0{} },
		Runtime: RuntimeLlamaCpp, FileType: gguf.FileTypeMostlyTQ2_0, FtypeName: "TQ2_0 - 2.06 bpw ternary",
		Scale: ScaleF16Block, QuantVersion: true, ParallelRows: true},
	{Name: "q2_0", Type: gguf.TypeQ2_0, New: func(Layout, []Kernel) Format { return Q2_0{} },
		Runtime: RuntimeLlamaCpp, FileType: gguf.FileTypeMostlyQ2_0, FtypeName: "Q2_0",
		Scale: ScaleF16Block, QuantVersion: true, ParallelRows: true},
	{Name: "iq1_bn", Type: gguf.TypeIQ1BN, New: func(Layout, []Kernel) Format { return IQ1BN{} },
		Runtime: RuntimeIKLlama, FileType: gguf.FileTypeMostlyIQ1BN, FtypeName: "IQ1_BN - 1.625 bpw Bitnet",
		Scale: ScaleF16Row, QuantVersion: true, ParallelRows: true},
	{Name: "iq2_bn", Type: gguf.TypeIQ2BN, New: func(Layout, []Kernel) Format { return IQ2BN{} },
		Runtime: RuntimeIKLlama, FileType: gguf.FileTypeMostlyIQ2BN, FtypeName: "IQ2_BN - 2.00 bpw Bitnet",
		Scale: ScaleF32Row, QuantVersion: true, ParallelRows: true},
}

// readSpecs are the ternary layouts read but never written (no --outtype):
// Prism's legacy Q2_0_g128, which requant turns into Q2_0.
var readSpecs = []Spec{
	{Type: gguf.TypeQ2_0G128, New: func(Layout, []Kernel) Format { return Q2_0G128{} },
		Runtime: RuntimePrism, Scale: ScaleF16Block, ParallelRows: true},
}

// Runtimes of Spec.Runtime.
const (
	RuntimeBitnetCpp = "bitnet.cpp"
	RuntimeLlamaCpp  = "llama.cpp"
	RuntimeIKLlama   = "ik_llama.cpp"
	// RuntimePrism is PrismML's llama.cpp fork (read-only layouts).
	RuntimePrism = "PrismML llama.cpp fork"
)

// Lookup returns the row of the type table for an --outtype name
// (case-insensitive).
func Lookup(name string) (Spec, bool) {
	for _, s := range specs {
		if strings.EqualFold(s.Name, name) {
			return s, true
		}
	}
	return Spec{}, false
}

// SpecOf returns the row of the type table (or of the read-only layouts,
// whose Name is "") for ggml type t.
func SpecOf(t gguf.Type) (Spec, bool) {
	for _, s := range specs {
		if s.Type == t {
			return s, true
		}
	}
	for _, s := range readSpecs {
		if s.Type == t {
			return s, true
		}
	}
	return Spec{}, false
}

// Specs returns the rows of the type table in table order (a copy).
func Specs() []Spec { return append([]Spec(nil), specs...) }

// Names lists the ternary --outtype names in table order.
func Names() []string {
	out := make([]string, len(specs))
	for i, s := range specs {
		out[i] = s.Name
	}
	return out
}

// TypeNames lists the ggml names of the ternary types in table order
// ("I2_S", "TL1", …), for messages.
func TypeNames() []string {
	out := make([]string, len(specs))
	for i, s := range specs {
		out[i] = s.Type.String()
	}
	return out
}

// F16ScaleTypeNames lists the ggml names of the types that store f16
// scales (ScaleStorage.F16), in table order, for messages.
func F16ScaleTypeNames() []string {
	var out []string
	for _, s := range specs {
		if s.Scale.F16() {
			out = append(out, s.Type.String())
		}
	}
	return out
}

// F32ScaleNames lists the --outtype names of the types that store float32
// scales, in table order, for messages.
func F32ScaleNames() []string {
	var out []string
	for _, s := range specs {
		if !s.Scale.F16() {
			out = append(out, s.Name)
		}
	}
	return out
}

// ScaleTolerance is the relative error of a scale or value stored in a
// tensor of type t: the table's for a ternary type, 2⁻¹¹ for F16, 2⁻⁸ for
// BF16, 0 otherwise.
func ScaleTolerance(t gguf.Type) float64 {
	if s, ok := SpecOf(t); ok {
		return s.Scale.Tolerance()
	}
	switch t {
	case gguf.TypeF16:
		return 0x1p-11
	case gguf.TypeBF16:
		return 0x1p-8
	}
	return 0
}

// ForType returns the Format that decodes tensors of ggml type t: layout
// selects the I2_S layout and kernels the TL tiling. ok is false for a type
// that is not ternary.
func ForType(t gguf.Type, layout Layout, kernels []Kernel) (Format, bool) {
	s, ok := SpecOf(t)
	if !ok {
		return nil, false
	}
	return s.New(layout, kernels), true
}

// IsTernary reports whether t is one of the ternary types of this package.
func IsTernary(t gguf.Type) bool {
	_, ok := SpecOf(t)
	return ok
}

// NamesFor lists the --outtype names of the types whose Runtime is rt, in
// table order, for help texts ("tq1_0, tq2_0").
func NamesFor(rt string) []string {
	var out []string
	for _, s := range specs {
		if s.Runtime == rt {
			out = append(out, s.Name)
		}
	}
	return out
}

// RuntimeList names each runtime family with its --outtype names, for help
// texts: "bitnet.cpp (i2_s, tl1, tl2), mainline llama.cpp (tq1_0, tq2_0) or
// ik_llama.cpp (iq1_bn, iq2_bn)".
func RuntimeList() string {
	var parts []string
	for _, rt := range []string{RuntimeBitnetCpp, RuntimeLlamaCpp, RuntimeIKLlama} {
		name := rt
		if rt == RuntimeLlamaCpp {
			name = "mainline llama.cpp"
		}
		parts = append(parts, name+" ("+strings.Join(NamesFor(rt), ", ")+")")
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " or " + parts[len(parts)-1]
}
