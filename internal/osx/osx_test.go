package osx

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// tempDir is t.TempDir with a cleanup that removes entries one by one with
// os.Remove: these tests also run under Wine in .ci/run, and Wine 8 lacks the
// file-disposition call Go 1.26's os.RemoveAll makes on Windows, so
// t.TempDir's cleanup would fail there.
func tempDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "osx-test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { removeTree(d) })
	return d
}

func removeTree(p string) {
	ents, _ := os.ReadDir(p)
	for _, e := range ents {
		removeTree(filepath.Join(p, e.Name()))
	}
	os.Remove(p)
}

// writeFile writes n bytes of a position-dependent pattern and returns the
// path and the bytes.
func writeFile(t *testing.T, n int) (string, []byte) {
	t.Helper()
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i>>8)
	}
	p := filepath.Join(tempDir(t), "data.bin")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p, b
}

func open(t *testing.T, p string) (*os.File, int64) {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	return f, fi.Size()
}

// Map and its ReadAt fallback give the file's bytes; Release keeps them
// readable (on a mapping the pages fault back in from the file; on the
// fallback's heap buffer it must do nothing, or the bytes would be zeroed).
func TestMapAndReadAllAgree(t *testing.T) {
	page := os.Getpagesize()
	p, want := writeFile(t, 5*page+123)
	f, size := open(t, p)
	m, err := Map(f, size, p)
	if err != nil {
		t.Fatal(err)
	}
	if !m.Mapped() {
		t.Errorf("Map of a regular file on %s fell back to reading", runtime.GOOS)
	}
	r, err := ReadAll(f, size, p)
	if err != nil {
		t.Fatal(err)
	}
	if r.Mapped() {
		t.Error("ReadAll reports a mapping")
	}
	f.Close() // views outlive the file
	for _, v := range []*Mapping{m, r} {
		if !bytes.Equal(v.Bytes(), want) {
			t.Fatalf("mapped=%v: bytes differ from the file", v.Mapped())
		}
		b := v.Bytes()
		v.Release(b[10 : 4*page+7])
		v.Release(b[page:])
		v.Release(b)
		v.Release(want) // not part of the view: ignored
		if !bytes.Equal(v.Bytes(), want) {
			t.Errorf("mapped=%v: bytes changed after Release", v.Mapped())
		}
		if err := v.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if err := v.Close(); err != nil || v.Bytes() != nil {
			t.Errorf("second Close: %v, bytes %d", err, len(v.Bytes()))
		}
	}
	var nilMapping *Mapping
	nilMapping.Release(want)
}

func TestMapErrors(t *testing.T) {
	p, _ := writeFile(t, 0)
	f, _ := open(t, p)
	if _, err := Map(f, 0, p); err == nil || !strings.Contains(err.Error(), p) {
		t.Errorf("empty file: %v", err)
	}
	p2, _ := writeFile(t, 100)
	f2, _ := open(t, p2)
	// A size beyond the file: the ReadAt fallback reports a short file.
	if _, err := ReadAll(f2, 200, p2); !errors.Is(err, io.ErrUnexpectedEOF) || !strings.Contains(err.Error(), p2) {
		t.Errorf("short file: %v", err)
	}
}

func TestPageInterior(t *testing.T) {
	for _, tc := range []struct {
		start, n, lo, hi uintptr
		ok               bool
	}{
		{0, 4096, 0, 4096, true},
		{1, 4096, 4096, 4096, false},
		{1, 8191, 4096, 8192, true},
		{4096, 4095, 4096, 4096, false},
		{100, 3 * 4096, 4096, 3 * 4096, true},
	} {
		lo, hi, ok := pageInterior(tc.start, tc.n, 4096)
		if ok != tc.ok || (ok && (lo != tc.lo || hi != tc.hi)) {
			t.Errorf("pageInterior(%d, %d) = %d, %d, %v; want %d, %d, %v", tc.start, tc.n, lo, hi, ok, tc.lo, tc.hi, tc.ok)
		}
	}
}

// The 32-bit rule, checked on every host through intWithMax.
func TestIntFits(t *testing.T) {
	for _, tc := range []struct {
		n, max uint64
		want   string // "" = fits
	}{
		{0, math.MaxInt32, ""},
		{math.MaxInt32, math.MaxInt32, ""},
		{math.MaxInt32 + 1, math.MaxInt32, "model.gguf: size 2147483648 does not fit in this 32-bit build (largest 2147483647); use a 64-bit build of bitnet-convert"},
		{1 << 40, math.MaxInt32, "does not fit in this 32-bit build"},
		{1 << 40, math.MaxInt64, ""},
		{math.MaxUint64, math.MaxInt64, "does not fit in this 64-bit build"},
	} {
		if tc.max > math.MaxInt && tc.want == "" {
			continue // a 64-bit row whose result a 32-bit int cannot hold
		}
		got, err := intWithMax(tc.n, tc.max, "model.gguf")
		switch {
		case tc.want == "" && (err != nil || uint64(got) != tc.n):
			t.Errorf("intWithMax(%d, %d) = %d, %v", tc.n, tc.max, got, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n")):
			t.Errorf("intWithMax(%d, %d): err %v, want %q", tc.n, tc.max, err, tc.want)
		}
	}
	if _, err := Int(math.MaxInt, "x"); err != nil {
		t.Errorf("Int(MaxInt): %v", err)
	}
	if math.MaxInt == math.MaxInt32 {
		if _, err := Int(1<<31, "x"); err == nil {
			t.Error("Int(1<<31) fits on a 32-bit build")
		}
	}
}

func TestRenameReplacesExisting(t *testing.T) {
	dir := tempDir(t)
	oldp, newp := filepath.Join(dir, ".new.partial"), filepath.Join(dir, "out.gguf")
	os.WriteFile(oldp, []byte("new"), 0o644)
	os.WriteFile(newp, []byte("old contents"), 0o644)
	if err := Rename(oldp, newp); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(newp); string(b) != "new" {
		t.Errorf("target holds %q", b)
	}
	if _, err := os.Stat(oldp); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("source still there: %v", err)
	}
	var le *os.LinkError
	if err := Rename(oldp, newp); !errors.As(err, &le) {
		t.Errorf("rename of a missing file: %v", err)
	}
}

func TestFreeSpace(t *testing.T) {
	n, err := FreeSpace(tempDir(t))
	if err != nil || n == 0 {
		t.Errorf("FreeSpace(temp dir) = %d, %v", n, err)
	}
	missing := filepath.Join(tempDir(t), "nowhere")
	if _, err := FreeSpace(missing); err == nil || !strings.Contains(err.Error(), "nowhere") {
		t.Errorf("missing path: %v", err)
	}
}

func TestMkfifo(t *testing.T) {
	p := filepath.Join(tempDir(t), "pipe")
	err := Mkfifo(p)
	if runtime.GOOS == "windows" {
		if !errors.Is(err, errors.ErrUnsupported) {
			t.Errorf("Mkfifo on windows: %v", err)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(p); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
		t.Errorf("not a named pipe: %v %v", fi, err)
	}
}

// StartWriteback is advice: the file's contents are unchanged and Sync still
// succeeds after it, also for a range past the end.
func TestStartWriteback(t *testing.T) {
	p := filepath.Join(tempDir(t), "w")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	data := bytes.Repeat([]byte("ternary"), 1<<16)
	f.Write(data)
	StartWriteback(f, 0, int64(len(data)))
	StartWriteback(f, int64(len(data)), 1<<20)
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); !bytes.Equal(b, data) {
		t.Error("contents changed")
	}
}

func TestTerminationSignals(t *testing.T) {
	s := TerminationSignals()
	if len(s) == 0 || s[0] != os.Interrupt {
		t.Errorf("TerminationSignals() = %v", s)
	}
	s[0] = nil
	if TerminationSignals()[0] != os.Interrupt {
		t.Error("TerminationSignals shares its slice")
	}
	want := 2 // Interrupt, SIGTERM
	if runtime.GOOS != "windows" {
		want = 3 // and SIGHUP
	}
	if len(s) != want {
		t.Errorf("have %d signals %v, want %d", len(s), s, want)
	}
}

func TestProcessAlive(t *testing.T) {
	if !ProcessAlive(os.Getpid()) {
		t.Error("this process is not alive")
	}
	if ProcessAlive(0) || ProcessAlive(-1) {
		t.Error("pid 0 or -1 is alive")
	}
	// A child that has exited and been waited for is gone.
	exe, _ := os.Executable()
	cmd := exec.Command(exe, "-test.run=^$")
	if err := cmd.Run(); err != nil {
		// Under qemu-user without binfmt_misc the test binary cannot start
		// a copy of itself (exec format error).
		t.Skipf("cannot start a child process here: %v", err)
	}
	if ProcessAlive(cmd.Process.Pid) {
		t.Errorf("exited child %d is alive", cmd.Process.Pid)
	}
}

// TestReadIn: ReadIn holds the file's bytes (a huge-page buffer on Linux
// for files of a megabyte or more, a Go slice below), is not a mapping,
// ignores Release, survives the file's Close and frees on Close; it
// refuses an empty file, a file shorter than size, and a size above the
// available memory, naming the file.
func TestReadIn(t *testing.T) {
	for _, n := range []int{100, 3 << 20} {
		p, want := writeFile(t, n)
		f, size := open(t, p)
		m, err := ReadIn(f, size, p)
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
		if m.Mapped() || !bytes.Equal(m.Bytes(), want) {
			t.Fatalf("%d bytes: mapped %v, bytes equal %v", n, m.Mapped(), bytes.Equal(m.Bytes(), want))
		}
		m.Release(m.Bytes())
		if !bytes.Equal(m.Bytes(), want) {
			t.Errorf("%d bytes: changed after Release", n)
		}
		if err := m.Close(); err != nil || m.Bytes() != nil {
			t.Errorf("%d bytes: Close %v, %d bytes left", n, err, len(m.Bytes()))
		}
	}
	p, _ := writeFile(t, 0)
	f, _ := open(t, p)
	if _, err := ReadIn(f, 0, p); err == nil || !strings.Contains(err.Error(), p) {
		t.Errorf("empty file: %v", err)
	}
	p2, _ := writeFile(t, 100)
	f2, _ := open(t, p2)
	if _, err := ReadIn(f2, 200, p2); !errors.Is(err, io.ErrUnexpectedEOF) || !strings.Contains(err.Error(), p2) {
		t.Errorf("short file: %v", err)
	}
	defer func(old func() (uint64, bool)) { availableMemory = old }(availableMemory)
	availableMemory = func() (uint64, bool) { return 99, true }
	if _, err := ReadIn(f2, 100, p2); !errors.Is(err, ErrNoMemory) || !strings.Contains(err.Error(), "its 100 bytes do not fit in the 99 bytes of available memory") || !strings.Contains(err.Error(), p2) {
		t.Errorf("file above the available memory: %v", err)
	}
}
