package badinput

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// TestInspectBR28Sparse is BR-28a through the CLI: a sparse GGUF (8 KiB on
// disk) whose second F32 [8] tensor sits at relative offset 2^32 + 32 is
// listed by inspect with that 64-bit offset, exit 0. The rejections of
// BR-28c (size wraps) and BR-28d (offset + size beyond the file) are rows of
// TestCorpus ("inspect: BR-28c …", "inspect: BR-28d …").
func TestInspectBR28Sparse(t *testing.T) {
	const far = 1<<32 + 32
	g := newGGUF(2, 1).kvString("general.architecture", "bitnet").
		tensor("tiny.weight", 0, 0, 8).
		tensor("far.weight", 0, far, 8)
	head := g.pad(32) // data section starts here; tiny's 32 bytes follow
	p := filepath.Join(t.TempDir(), "sparse.gguf")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(head); err != nil {
		t.Fatal(err)
	}
	dataStart := int64(len(head) - 32)
	if _, err := f.WriteAt([]byte{0, 0, 0x80, 0x3f}, dataStart+far); err != nil { // 1.0 as the first value
		t.Fatal(err)
	}
	if err := f.Truncate(dataStart + far + 32); err != nil {
		t.Fatal(err)
	}
	f.Close()
	code, stdout, stderr := runMain("inspect", p)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !regexp.MustCompile(`(?m)^\s*far\.weight\s+F32\(0\)\s+\[8\]\s+4294967328\s+32\b`).MatchString(stdout) {
		t.Errorf("inspect does not list far.weight at offset 4294967328 with 32 bytes:\n%s", stdout)
	}
}

// TestConvertBR28Sparse is BR-28b through the CLI: the tiny checkpoint with
// one tensor moved to a data offset above 2^32 (a sparse 4 GiB hole before
// it) converts to exactly the bytes of the original's conversion.
func TestConvertBR28Sparse(t *testing.T) {
	root := t.TempDir()
	orig := copyTiny(t, filepath.Join(root, "orig"))
	moved := copyTiny(t, filepath.Join(root, "moved"))
	p := filepath.Join(moved, "model.safetensors")
	st := readST(t, p)
	b, e := st.offsets(t, norm)
	tensor := append([]byte(nil), st.data[b:e]...)
	newOff := uint64(len(st.data)) + 1<<32
	st.tensor(t, norm)["data_offsets"] = []uint64{newOff, newOff + (e - b)}
	st.write(t, p) // header + the old data section; the tensor goes past the hole
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := f.Stat()
	dataStart := fi.Size() - int64(len(st.data))
	if _, err := f.WriteAt(tensor, dataStart+int64(newOff)); err != nil {
		f.Close()
		t.Skipf("cannot write a sparse 4 GiB file here: %v", err)
	}
	f.Close()
	var outs [2][]byte
	for i, m := range []string{orig, moved} {
		out := filepath.Join(root, filepath.Base(m)+".gguf")
		if code, _, stderr := runMain("hf2gguf", m, "--outfile", out, "--model-name", "tiny"); code != 0 {
			t.Fatalf("%s: exit %d: %s", m, code, stderr)
		}
		outs[i] = readFile(t, out)
	}
	if !bytes.Equal(outs[0], outs[1]) {
		t.Errorf("the conversion with %s past 4 GiB differs from the original's (%d vs %d bytes)", norm, len(outs[1]), len(outs[0]))
	}
}
