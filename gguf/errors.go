package gguf

import "errors"

// Sentinel errors shared by the GGUF reader and writer (gguf/reader,
// gguf/writer). They are always returned wrapped with the key or tensor name
// they concern; test for them with errors.Is.
var (
	// ErrDuplicateKey: a metadata key occurs twice. ggml's gguf loader
	// rejects such files ("duplicate key"), so the writer refuses to make
	// them and the reader refuses to read them.
	ErrDuplicateKey = errors.New("duplicate metadata key")
	// ErrDuplicateTensor: two tensor infos carry the same name.
	ErrDuplicateTensor = errors.New("duplicate tensor name")
	// ErrValueType: a metadata value type id is unknown, or the Go value in a
	// Value does not match its Type/Elem, or an array is nested.
	ErrValueType = errors.New("bad metadata value type")
)

// MaxDims is the largest number of dimensions a tensor info may have
// (GGML_MAX_DIMS in ggml.h).
const MaxDims = 4

// MaxNameLen is the longest tensor name ggml accepts, in bytes (GGML_MAX_NAME
// is 64 including the terminating NUL).
const MaxNameLen = 63
