//go:build linux

package verify

import (
	"encoding/binary"
	"os"
	"testing"
	"unsafe"

	"github.com/bitnet-convert/bitnet-convert/gguf/reader"
)

// residentPages counts the pages of b mapped into this process
// (/proc/self/pagemap bit 63, readable without privileges), or -1 when
// pagemap cannot be read.
func residentPages(b []byte) int {
	pm, err := os.Open("/proc/self/pagemap")
	if err != nil {
		return -1
	}
	defer pm.Close()
	page := uintptr(os.Getpagesize())
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b))) / page
	end := (uintptr(unsafe.Pointer(unsafe.SliceData(b))) + uintptr(len(b))) / page // whole pages only
	buf := make([]byte, 8*(end-start))
	if _, err := pm.ReadAt(buf, int64(start*8)); err != nil {
		return -1
	}
	n := 0
	for i := 0; i+8 <= len(buf); i += 8 {
		if binary.LittleEndian.Uint64(buf[i:])>>63 != 0 {
			n++
		}
	}
	return n
}

// TestReleasePages: releasePages really drops a GGUF tensor's mapped pages
// from the process. It once went through a zero hf.TensorData whose Release
// had no mapping and did nothing, so verify kept every page of the file
// resident (the full Llama3-8B-shaped file: 3.9 GB instead of about 2.9 GB).
func TestReleasePages(t *testing.T) {
	f, err := reader.Open("../testdata/golden/tiny-bitnet/gguf/ggml-model-f32.gguf")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	data, err := f.TensorData("token_embd.weight")
	if err != nil {
		t.Fatal(err)
	}
	var sum byte
	for i := 0; i < len(data); i += 512 {
		sum += data[i]
	}
	before := residentPages(data)
	if before < 0 {
		t.Skip("/proc/self/pagemap is not readable here")
	}
	if whole := len(data)/os.Getpagesize() - 1; before < whole {
		t.Fatalf("only %d of about %d pages resident after reading the tensor (sum %d)", before, whole, sum)
	}
	releasePages(f, data)
	if after := residentPages(data[os.Getpagesize():]); after != 0 {
		t.Fatalf("%d of %d pages still resident after releasePages", after, before)
	}
	// The bytes stay readable (faulted in again from the file).
	var again byte
	for i := 0; i < len(data); i += 512 {
		again += data[i]
	}
	if again != sum {
		t.Fatalf("the released bytes read back differently (%d, %d)", again, sum)
	}
}
