package osx_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/bitnet-convert/bitnet-convert/internal/osx"
)

// Map gives a read-only view of a file that outlives the *os.File; Release
// hands pages back to the OS while the bytes stay readable.
func ExampleMap() {
	dir, _ := os.MkdirTemp("", "osx")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "header.bin")
	os.WriteFile(path, []byte("GGUF\x03\x00\x00\x00"), 0o644)

	f, _ := os.Open(path)
	fi, _ := f.Stat()
	m, err := osx.Map(f, fi.Size(), path)
	f.Close()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer m.Close()
	b := m.Bytes()
	m.Release(b)
	fmt.Printf("%q version %d\n", b[:4], b[4])
	// Output: "GGUF" version 3
}

// Int turns a size read from a file header into an int, failing with one
// line on a 32-bit build when it does not fit.
func ExampleInt() {
	n, err := osx.Int(4096, "tensor blk.0.attn_q.weight")
	fmt.Println(n, err)
	// Output: 4096 <nil>
}
