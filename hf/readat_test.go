package hf_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/bitnet-convert/bitnet-convert/hf"
)

// TestTensorDataReadAt: ReadAt returns Raw's bytes at any offset and length
// (pieces, the whole tensor, past the end), for a mapped shard and for a
// TensorData built by hand; a shard cut short after Open is an error naming
// the tensor.
func TestTensorDataReadAt(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "config.json"), []byte(tinyConfig))
	vals := make([]float32, 3000)
	for i := range vals {
		vals[i] = float32(i) - 1500.5
	}
	p := filepath.Join(dir, "model.safetensors")
	if err := hf.WriteSafetensors(p, []hf.WriteTensor{f32Tensor("a", []uint64{7}, 1, 2, 3, 4, 5, 6, 7), f32Tensor("w", []uint64{3000}, vals...)}, nil); err != nil {
		t.Fatal(err)
	}
	c, err := hf.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ref, _ := c.Lookup("w")
	d, err := c.Read(ref)
	if err != nil {
		t.Fatal(err)
	}
	hand := &hf.TensorData{Ref: ref, Raw: d.Raw}
	for _, src := range []*hf.TensorData{d, hand} {
		for _, piece := range []int{1, 7, 4096, 12000, 20000} {
			got := make([]byte, 0, len(d.Raw))
			buf := make([]byte, piece)
			for off := 0; ; off += piece {
				n, err := src.ReadAt(buf, int64(off))
				got = append(got, buf[:n]...)
				if off+piece >= len(d.Raw) {
					if off+piece > len(d.Raw) && err != io.EOF || off+piece == len(d.Raw) && err != nil {
						t.Fatalf("piece %d at %d: error %v", piece, off, err)
					}
					break
				}
				if err != nil || n != piece {
					t.Fatalf("piece %d at %d: %d bytes, %v", piece, off, n, err)
				}
			}
			if !bytes.Equal(got, d.Raw) {
				t.Fatalf("piece %d: bytes differ from Raw", piece)
			}
		}
		if _, err := src.ReadAt(make([]byte, 4), int64(len(d.Raw)+1)); err == nil || !strings.Contains(err.Error(), "tensor w") {
			t.Errorf("offset past the end: %v", err)
		}
	}
	if runtime.GOOS == "windows" {
		return // a mapped file cannot be truncated there
	}
	if err := os.Truncate(p, int64(ref.Offset)+100); err != nil {
		t.Fatal(err)
	}
	_, err = d.ReadAt(make([]byte, 1000), 0)
	if !errors.Is(err, io.ErrUnexpectedEOF) || !strings.Contains(err.Error(), "tensor w") {
		t.Errorf("truncated shard: %v", err)
	}
}
