package gguf

import (
	"errors"
	"fmt"
	"math/bits"

	"github.com/bitnet-convert/bitnet-convert/archtab"
)

// Type is a ggml tensor type id as stored in a GGUF tensor info.
type Type uint32

// The ggml tensor types this project reads or writes. Ids match ggml.h of
// bitnet.cpp's llama.cpp fork (merge-dev 406a5036).
const (
	TypeF32   Type = 0
	TypeF16   Type = 1
	TypeQ4_0  Type = 2
	TypeQ4_1  Type = 3
	TypeQ5_0  Type = 6
	TypeQ5_1  Type = 7
	TypeQ8_0  Type = 8
	TypeQ8_1  Type = 9
	TypeQ2_K  Type = 10
	TypeQ3_K  Type = 11
	TypeQ4_K  Type = 12
	TypeQ5_K  Type = 13
	TypeQ6_K  Type = 14
	TypeQ8_K  Type = 15
	TypeI8    Type = 24
	TypeI16   Type = 25
	TypeI32   Type = 26
	TypeI64   Type = 27
	TypeF64   Type = 28
	TypeBF16  Type = 30
	TypeTQ1_0 Type = 34
	TypeTQ2_0 Type = 35
	// TypeI2S is bitnet.cpp's 2-bit ternary type: n/4 packed bytes (x86
	// layout, QK 128), then one float32 scale per tensor and 28 pad bytes.
	TypeI2S Type = 36
	// TypeI8S is the int8 activation type of the I2_S kernel; it never
	// appears in files.
	TypeI8S Type = 37
	// TypeTL1 is the ARM lookup-table layout (n/4 bytes + 32-byte scale slot).
	TypeTL1 Type = 38
	// TypeTL2 is the x86 lookup-table layout (see TL2DataBytes).
	TypeTL2 Type = 39
	// TypeIQ1BN is ik_llama.cpp's 1.625-bit ternary type (ggml.h of
	// ikawrakow/ik_llama.cpp, GGML_TYPE_IQ1_BN = 134): every row starts with an
	// f16 scale, then 13 bytes per 64 weights.
	TypeIQ1BN Type = 134
	// TypeIQ2BN is ik_llama.cpp's 2-bit ternary type (GGML_TYPE_IQ2_BN = 135):
	// every row starts with an f32 scale, then 16 bytes per 64 weights.
	TypeIQ2BN Type = 135

	// TypeNVFP4 is mainline ggml's NVFP4 (blocks of 64 values in 36 bytes:
	// four UE4M3 scales and 32 bytes of E2M1 pairs). bitnet.cpp has no
	// type 40. Read and named, never run.
	TypeNVFP4 Type = 40
	// TypeQ1_0 is mainline ggml's 1-bit Q1_0 (blocks of 128 values in 18
	// bytes: an F16 scale and 16 bytes of bits). Read and named, never run.
	TypeQ1_0 Type = 41
	// TypeQ2_0 is mainline ggml's 2-bit Q2_0 (blocks of 64 values in 18
	// bytes: an F16 d and 16 bytes of 2-bit codes, value (c − 1)·d;
	// ggml-common.h block_q2_0). Ternary weights map onto it exactly.
	TypeQ2_0 Type = 42
)

// mainlineID marks a Type that stands for a stored id whose meaning in
// mainline ggml differs from bitnet.cpp's (see collisions); ID strips it.
const mainlineID Type = 1 << 31

// forkID marks a Type that stands for a stored id a fork gives another
// layout than mainline ggml (Prism's legacy g128 Q2_0 under id 42); ID
// strips it.
const forkID Type = 1 << 30

// unknownID marks a stored id whose data fits none of the documented
// layouts of the id (LayoutUnknown); ID strips it.
const unknownID Type = 1 << 29

// TypeQ2_0G128 is PrismML's legacy Q2_0 (pre-v7 fork, field cases F2-0x):
// blocks of 128 values in 34 bytes (an F16 d and 32 bytes of 2-bit codes,
// the Q2_0 codec) stored under mainline's id 42, which mainline reads as
// 64-value blocks (llama.cpp #25824: "tensor 'output_norm.weight' has
// offset …, expected …"). The reader returns it for an id-42 tensor whose
// span fits 34 bytes per 128 and not 18 per 64 (ResolveLayout).
const TypeQ2_0G128 = forkID | 42

// Prism fork types (PrismML llama.cpp fork ggml.h; shared/spec
// formats-2026.md §5). Both need a Hadamard transform of the activations
// that their KVs describe: read and named, never computed or converted.
const (
	// TypePQ2_0 is Prism's PQ2_0: blocks of 128 values in 34 bytes (f16
	// d, then 32 bytes of 2-bit codes).
	TypePQ2_0 Type = 142
	// TypePTQ1_0 is Prism's PTQ1_0: blocks of 128 values in 28 bytes
	// (24 + 2 bytes of base-3 codes, the f16 d last).
	TypePTQ1_0 Type = 143
)

// TypeMXFP4 is mainline ggml's MXFP4 (blocks of 32 values in 17 bytes: an
// E8M0 scale and 16 bytes of E2M1 pairs), stored as id 39 like bitnet.cpp's
// TL2. The reader returns it for an id-39 tensor that cannot be TL2 (see
// ResolveCollision); it is never written. Read and named, never run.
const TypeMXFP4 = mainlineID | 39

// ID returns the type id stored in a GGUF tensor info for t (39 for both
// TL2 and MXFP4).
func (t Type) ID() uint32 { return uint32(t &^ (mainlineID | forkID | unknownID)) }

// collisions maps a bitnet.cpp type id to the type the same id means in
// mainline ggml (ggml.h of llama.cpp and ik_llama.cpp). Only tensor type 39
// collides: mainline's NVFP4 (40) and Q1_0 (41) have no bitnet.cpp meaning.
// (general.file_type collides too: 40 is I2_S in bitnet.cpp's llama.h but
// MOSTLY_Q1_0 in mainline's; see FileTypeName.)
var collisions = map[Type]Type{TypeTL2: TypeMXFP4}

// ResolveCollision decides what a stored type id that means different
// types in bitnet.cpp and mainline ggml (id 39: TL2 or MXFP4) is for one
// tensor: the bitnet.cpp type when the file's arch is a BitNet one and the
// bitnet.cpp size of ne fits in span (the bytes from the tensor's offset to
// the next tensor's, or to the end of the data), else the mainline type.
// When neither size fits a BitNet file, the bitnet.cpp type is kept, so the
// error that follows is about a truncated TL2 tensor. Other types are
// returned unchanged.
func ResolveCollision(t Type, arch string, ne []uint64, span uint64) Type {
	alt, ok := collisions[t]
	if !ok {
		return t
	}
	// archtab.TL2: bitnet.cpp's BitNet architectures, and llama, which
	// bitnet.cpp uses for Llama3-8B-1.58 and Falcon3 (setup_env.py's TL2
	// route for them). A mainline llama file with MXFP4 tensors is still
	// told apart by size.
	if !archtab.TL2(arch) {
		return alt
	}
	if n, err := NBytes(t, ne); err == nil && n <= span {
		return t
	}
	if n, err := NBytes(alt, ne); err == nil && n <= span {
		return alt
	}
	return t
}

// Ambiguous reports whether the stored id of t means another type in
// mainline ggml (see ResolveCollision).
func (t Type) Ambiguous() bool {
	_, ok := collisions[t]
	return ok
}

// TypeTraits describes the storage of one ggml type: BlockSize elements are
// stored in TypeSize bytes. Ternary types whose size is per tensor rather than
// per block (I2_S, TL1, TL2) have PerTensor set, and their size comes from
// NBytes.
type TypeTraits struct {
	Name      string
	BlockSize uint64
	TypeSize  uint64
	Quantized bool
	PerTensor bool
}

// typeTraits is the ggml type table (ggml.c type_traits, plus bitnet.cpp's
// additions).
var typeTraits = map[Type]TypeTraits{
	TypeF32:   {"F32", 1, 4, false, false},
	TypeF16:   {"F16", 1, 2, false, false},
	TypeQ4_0:  {"Q4_0", 32, 18, true, false},
	TypeQ4_1:  {"Q4_1", 32, 20, true, false},
	TypeQ5_0:  {"Q5_0", 32, 22, true, false},
	TypeQ5_1:  {"Q5_1", 32, 24, true, false},
	TypeQ8_0:  {"Q8_0", 32, 34, true, false},
	TypeQ8_1:  {"Q8_1", 32, 36, true, false},
	TypeQ2_K:  {"Q2_K", 256, 84, true, false},
	TypeQ3_K:  {"Q3_K", 256, 110, true, false},
	TypeQ4_K:  {"Q4_K", 256, 144, true, false},
	TypeQ5_K:  {"Q5_K", 256, 176, true, false},
	TypeQ6_K:  {"Q6_K", 256, 210, true, false},
	TypeQ8_K:  {"Q8_K", 256, 292, true, false},
	TypeI8:    {"I8", 1, 1, false, false},
	TypeI16:   {"I16", 1, 2, false, false},
	TypeI32:   {"I32", 1, 4, false, false},
	TypeI64:   {"I64", 1, 8, false, false},
	TypeF64:   {"F64", 1, 8, false, false},
	TypeBF16:  {"BF16", 1, 2, false, false},
	TypeTQ1_0: {"TQ1_0", 256, 54, true, false},
	TypeTQ2_0: {"TQ2_0", 256, 66, true, false},
	TypeI2S:   {"I2_S", 1, 1, true, true},
	TypeI8S:   {"I8_S", 1, 1, true, false},
	TypeTL1:   {"TL1", 1, 1, true, true},
	TypeTL2:   {"TL2", 1, 1, true, true},
	TypeIQ1BN: {"IQ1_BN", 64, 13, true, false},
	TypeIQ2BN: {"IQ2_BN", 64, 16, true, false},
	// Mainline ggml types (llama.cpp ggml/src/ggml.c type_traits,
	// ggml-common.h block structs) that collide with or follow bitnet.cpp's.
	TypeMXFP4: {"MXFP4", 32, 17, true, false},
	TypeNVFP4: {"NVFP4", 64, 36, true, false},
	TypeQ1_0:  {"Q1_0", 128, 18, true, false},
	TypeQ2_0:  {"Q2_0", 64, 18, true, false},
	// Fork layouts (PrismML llama.cpp fork).
	TypeQ2_0G128: {"Q2_0_g128", 128, 34, true, false},
	TypePQ2_0:    {"PQ2_0", 128, 34, true, false},
	TypePTQ1_0:   {"PTQ1_0", 128, 28, true, false},
}

// rowMetaSize is the per-row prefix of the ik_llama.cpp row-scaled types
// (type_traits .row_meta_size in ik_llama.cpp ggml/src/ggml.c): IQ1_BN rows
// start with an f16 scale, IQ2_BN rows with an f32 scale.
var rowMetaSize = map[Type]uint64{TypeIQ1BN: 2, TypeIQ2BN: 4}

// RowMeta returns the bytes stored before every row of a tensor of type t
// (0 for every type but IQ1_BN and IQ2_BN).
func (t Type) RowMeta() uint64 { return rowMetaSize[t] }

// Traits returns the table entry of t and whether t is known.
func (t Type) Traits() (TypeTraits, bool) {
	tr, ok := typeTraits[t]
	return tr, ok
}

// IsMainlineOnly reports whether t is a mainline ggml type that bitnet.cpp
// does not have (MXFP4, NVFP4, Q1_0): readable and nameable, but no
// BitNet runtime or converter of this project handles it.
func (t Type) IsMainlineOnly() bool {
	return t == TypeMXFP4 || t == TypeNVFP4 || t == TypeQ1_0
}

// String returns the ggml name of t ("I2_S"), or "type(N)" when unknown.
func (t Type) String() string {
	if tr, ok := typeTraits[t]; ok {
		return tr.Name
	}
	if t&unknownID != 0 {
		return fmt.Sprintf("type %d (layout unknown)", t.ID())
	}
	return fmt.Sprintf("type(%d)", t.ID())
}

// ParseType returns the type whose ggml name is name (case-sensitive, as
// printed by String).
func ParseType(name string) (Type, bool) {
	for t, tr := range typeTraits {
		if tr.Name == name {
			return t, true
		}
	}
	return 0, false
}

// ErrOverflow is returned (wrapped) when a size computed from a shape does not
// fit in 64 bits.
var ErrOverflow = errors.New("size overflows 64 bits")

// ErrUnknownType is returned (wrapped) for a type id missing from the table.
var ErrUnknownType = errors.New("unknown ggml type")

// ErrBlockSize is returned (wrapped) when ne[0] is not a multiple of the
// type's block size.
var ErrBlockSize = errors.New("row length is not a multiple of the block size")

// NElements returns the product of ne, or ErrOverflow. An empty ne (a 0-d
// tensor) has one element.
func NElements(ne []uint64) (uint64, error) {
	n := uint64(1)
	for _, d := range ne {
		hi, lo := bits.Mul64(n, d)
		if hi != 0 {
			return 0, ErrOverflow
		}
		n = lo
	}
	return n, nil
}

// TL2DataBytes is the length of the TL2 packed stream before the scale slot
// for an M×K weight (ne = [K, M]): (K−256)·M/3·5/8 + 256·M/2·4/8 in C integer
// arithmetic, left to right, as bitnet.cpp's converter pads it
// (preprocess_weights_tl2) and its generated transform reads it. It returns an
// error when the expression is negative or overflows.
func TL2DataBytes(k, m uint64) (uint64, error) {
	if k < 256 {
		// (K-256) is negative: the reference formula uses signed
		// arithmetic with truncation toward zero.
		kk, mm := int64(k), int64(m)
		v := (kk-256)*mm/3*5/8 + 256*mm/2*4/8
		if v < 0 {
			return 0, fmt.Errorf("TL2 size for K=%d M=%d is negative", k, m)
		}
		return uint64(v), nil
	}
	a, err := mulChain(k-256, m)
	if err != nil {
		return 0, err
	}
	a = a / 3
	if a, err = mulChain(a, 5); err != nil {
		return 0, err
	}
	a /= 8
	b, err := mulChain(256, m)
	if err != nil {
		return 0, err
	}
	b = b / 2 * 4 / 8
	if a+b < a {
		return 0, ErrOverflow
	}
	return a + b, nil
}

func mulChain(a, b uint64) (uint64, error) {
	hi, lo := bits.Mul64(a, b)
	if hi != 0 {
		return 0, ErrOverflow
	}
	return lo, nil
}

// Pad rounds n up to a multiple of align (align > 0), or returns ErrOverflow.
func Pad(n, align uint64) (uint64, error) {
	r := n % align
	if r == 0 {
		return n, nil
	}
	if n+(align-r) < n {
		return 0, ErrOverflow
	}
	return n + (align - r), nil
}

// NBytes returns the number of data bytes of a tensor of type t and shape ne
// (GGUF order), as ggml_nbytes computes it in bitnet.cpp:
//   - block types: ne[0] must be a multiple of BlockSize; bytes =
//     n/BlockSize·TypeSize;
//   - I2_S and TL1: n/4 + 32 (packed codes, then the float32 scale and 28
//     pad bytes);
//   - TL2: pad32(TL2DataBytes(ne[0], ne[1])) + 32;
//   - IQ1_BN, IQ2_BN: rows·(RowMeta + ne[0]/64·TypeSize) (ik_llama.cpp
//     ggml_row_size includes the per-row scale).
//
// Errors: ErrUnknownType, ErrBlockSize, ErrOverflow (all wrapped with t).
func NBytes(t Type, ne []uint64) (uint64, error) {
	tr, ok := typeTraits[t]
	if !ok {
		return 0, fmt.Errorf("%w %d", ErrUnknownType, uint32(t))
	}
	n, err := NElements(ne)
	if err != nil {
		return 0, fmt.Errorf("%s tensor %v: %w", tr.Name, ne, err)
	}
	switch t {
	case TypeI2S, TypeTL1:
		return n/4 + 32, nil
	case TypeTL2:
		if len(ne) < 2 {
			return 0, fmt.Errorf("TL2 tensor %v: needs 2 dimensions", ne)
		}
		m := uint64(1)
		for _, d := range ne[1:] {
			if m, err = mulChain(m, d); err != nil {
				return 0, fmt.Errorf("TL2 tensor %v: %w", ne, err)
			}
		}
		d, err := TL2DataBytes(ne[0], m)
		if err != nil {
			return 0, fmt.Errorf("TL2 tensor %v: %w", ne, err)
		}
		p, err := Pad(d, 32)
		if err != nil || p+32 < p {
			return 0, fmt.Errorf("TL2 tensor %v: %w", ne, ErrOverflow)
		}
		return p + 32, nil
	}
	if len(ne) > 0 && ne[0]%tr.BlockSize != 0 {
		return 0, fmt.Errorf("%s tensor %v: %w %d", tr.Name, ne, ErrBlockSize, tr.BlockSize)
	}
	b, err := mulChain(n/tr.BlockSize, tr.TypeSize)
	if err != nil {
		return 0, fmt.Errorf("%s tensor %v: %w", tr.Name, ne, err)
	}
	if meta := rowMetaSize[t]; meta > 0 && len(ne) > 0 && ne[0] > 0 {
		rows := n / ne[0]
		m, err := mulChain(rows, meta)
		if err != nil || b+m < b {
			return 0, fmt.Errorf("%s tensor %v: %w", tr.Name, ne, ErrOverflow)
		}
		b += m
	}
	return b, nil
}

// ScaleOffset returns the byte offset of the per-tensor float32 scale inside
// the data of an I2_S, TL1 or TL2 tensor (n/4 for I2_S and TL1,
// pad32(TL2DataBytes) for TL2), and false for other types.
func ScaleOffset(t Type, ne []uint64) (uint64, bool) {
	nb, err := NBytes(t, ne)
	if err != nil {
		return 0, false
	}
	switch t {
	case TypeI2S, TypeTL1, TypeTL2:
		return nb - 32, true
	}
	return 0, false
}

// FileType is the llama ftype stored in general.file_type.
type FileType uint32

// File types written by this project (llama.h of the bitnet.cpp fork).
const (
	FileTypeAllF32     FileType = 0
	FileTypeMostlyF16  FileType = 1
	FileTypeMostlyQ8_0 FileType = 7
	FileTypeMostlyQ6K  FileType = 18
	FileTypeMostlyBF16 FileType = 32
	FileTypeMostlyTL1  FileType = 38
	FileTypeMostlyTL2  FileType = 39
	FileTypeMostlyI2S  FileType = 40
	// TQ1_0 / TQ2_0 as llama.h of ggml-org/llama.cpp numbers them.
	FileTypeMostlyTQ1_0 FileType = 36
	FileTypeMostlyTQ2_0 FileType = 37
	// Q2_0 as llama.h of ggml-org/llama.cpp numbers it
	// (LLAMA_FTYPE_MOSTLY_Q2_0).
	FileTypeMostlyQ2_0 FileType = 41
	// IQ1_BN / IQ2_BN as llama.h of ikawrakow/ik_llama.cpp numbers them.
	FileTypeMostlyIQ1BN FileType = 136
	FileTypeMostlyIQ2BN FileType = 137
)

// FileTypeName names a general.file_type value whose number means another
// type outside bitnet.cpp, using the table of bitnet.cpp's llama.h
// (microsoft/BitNet 3rdparty/llama.cpp include/llama.h, llama_ftype):
// 38 MOSTLY_TL1, 39 MOSTLY_TL2, 40 MOSTLY_I2_S. has reports whether the file
// holds tensors of a type. 40 is also MOSTLY_Q1_0 in mainline llama.cpp's
// llama.h, so without I2_S tensors both names are given; 38 and 39 are
// named when the file holds TL1 / TL2 tensors. The ternary types of the
// other runtimes are named too: 36 MOSTLY_TQ1_0 and 37 MOSTLY_TQ2_0 (the same
// in llama.cpp and bitnet.cpp), 136 MOSTLY_IQ1_BN and 137 MOSTLY_IQ2_BN
// (ik_llama.cpp's llama.h). Other values return "".
func FileTypeName(ft uint64, has func(Type) bool) string {
	switch ft {
	case uint64(FileTypeMostlyTQ1_0):
		return "MOSTLY_TQ1_0 in llama.cpp"
	case uint64(FileTypeMostlyTQ2_0):
		return "MOSTLY_TQ2_0 in llama.cpp"
	case uint64(FileTypeMostlyQ2_0):
		return "MOSTLY_Q2_0 in mainline llama.cpp"
	case uint64(FileTypeMostlyIQ1BN):
		return "MOSTLY_IQ1_BN in ik_llama.cpp"
	case uint64(FileTypeMostlyIQ2BN):
		return "MOSTLY_IQ2_BN in ik_llama.cpp"
	case uint64(FileTypeMostlyTL1):
		if has(TypeTL1) {
			return "MOSTLY_TL1 in bitnet.cpp"
		}
	case uint64(FileTypeMostlyTL2):
		if has(TypeTL2) {
			return "MOSTLY_TL2 in bitnet.cpp"
		}
	case uint64(FileTypeMostlyI2S):
		if has(TypeI2S) {
			return "MOSTLY_I2_S in bitnet.cpp"
		}
		return "MOSTLY_Q1_0 in mainline llama.cpp, MOSTLY_I2_S in bitnet.cpp"
	}
	return ""
}

// ValueType is the type tag of a GGUF metadata value.
type ValueType uint32

// GGUF metadata value types (gguf.h).
const (
	ValueUint8   ValueType = 0
	ValueInt8    ValueType = 1
	ValueUint16  ValueType = 2
	ValueInt16   ValueType = 3
	ValueUint32  ValueType = 4
	ValueInt32   ValueType = 5
	ValueFloat32 ValueType = 6
	ValueBool    ValueType = 7
	ValueString  ValueType = 8
	ValueArray   ValueType = 9
	ValueUint64  ValueType = 10
	ValueInt64   ValueType = 11
	ValueFloat64 ValueType = 12
)

var valueTypeNames = [...]string{"uint8", "int8", "uint16", "int16", "uint32", "int32", "float32", "bool", "string", "array", "uint64", "int64", "float64"}

// String returns the GGUF name of v ("uint32"), or "value(N)".
func (v ValueType) String() string {
	if int(v) < len(valueTypeNames) {
		return valueTypeNames[v]
	}
	return fmt.Sprintf("value(%d)", uint32(v))
}

// Size returns the encoded size in bytes of a scalar of type v, and false for
// strings, arrays and unknown types.
func (v ValueType) Size() (uint64, bool) {
	switch v {
	case ValueUint8, ValueInt8, ValueBool:
		return 1, true
	case ValueUint16, ValueInt16:
		return 2, true
	case ValueUint32, ValueInt32, ValueFloat32:
		return 4, true
	case ValueUint64, ValueInt64, ValueFloat64:
		return 8, true
	}
	return 0, false
}

// Magic is "GGUF" read as a little-endian uint32.
const Magic uint32 = 0x46554747

// Version is the GGUF version this project writes.
const Version uint32 = 3

// DefaultAlignment is the data alignment used when general.alignment is
// absent.
const DefaultAlignment = 32
