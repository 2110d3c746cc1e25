// Package atomicfile writes a file so that the target path holds either the
// previous file (or nothing) or the complete new file, never a partial one: the
// data goes to a temp file in the target's directory, which is fsynced and then
// renamed over the target.
//
// Temp files are named ".<base>.partial-<pid>-<random>" (base shortened by
// TempBase when that would pass the OS's 255-byte name limit) and are
// recognisable by IsTemp; Clean removes leftovers of an earlier interrupted
// run, but never the temp file of a process that is still running (two
// conversions to the same target must not delete each other's work).
package atomicfile

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/bitnet-convert/bitnet-convert/internal/osx"
)

// ErrExists is returned by Create when the target exists and overwrite is
// false.
var ErrExists = errors.New("output file exists (use --force to overwrite)")

const tempInfix = ".partial-"

// maxName is the longest file name (bytes) the temp names must fit: NAME_MAX
// of Linux and macOS; Windows counts UTF-16 units, never more than bytes.
const maxName = 255

// tempSuffixMax is the longest tail a temp name adds to its base:
// ".partial-", a pid (at most 10 digits), "-" and a uint32 in decimal, and
// 4 bytes to spare for a sibling name such as hfexport's "<temp>.old".
const tempSuffixMax = len(tempInfix) + 10 + 1 + 10 + 4

// TempBase returns what the temp names of the target base name carry
// between the leading "." and ".partial-": base itself when the whole temp
// name fits maxName, else base cut (at a UTF-8 boundary) and ended with "~"
// and 16 hex digits of base's SHA-256, so that an output name the OS
// accepts never fails for the temp suffix's sake. Two long names that share
// the kept prefix still get distinct temp names.
func TempBase(base string) string {
	if 1+len(base)+tempSuffixMax <= maxName {
		return base
	}
	sum := sha256.Sum256([]byte(base))
	tail := "~" + hex.EncodeToString(sum[:8])
	keep := maxName - 1 - tempSuffixMax - len(tail)
	for keep > 0 && !utf8.RuneStart(base[keep]) {
		keep--
	}
	return base[:keep] + tail
}

// File is an open temp file that becomes path on Commit. Writes start the
// kernel's writeback of every completed writebackChunk in the background, so
// Commit's fsync waits only for the tail.
type File struct {
	*os.File
	path      string
	overwrite bool
	done      bool
	written   int64
	synced    int64
}

// writebackChunk is how much data accumulates before Write starts its
// writeback.
const writebackChunk = 8 << 20

// Write writes p to the temp file (see File).
func (f *File) Write(p []byte) (int, error) {
	n, err := f.File.Write(p)
	f.written += int64(n)
	if f.written-f.synced >= writebackChunk {
		osx.StartWriteback(f.File, f.synced, f.written-f.synced)
		f.synced = f.written
	}
	return n, err
}

// Create opens a temp file beside path. A symbolic link is followed to the
// file it names (which is then replaced); a path naming a directory, a device,
// a FIFO or a socket is an error, and so is a dangling link; unless overwrite
// is set, an existing path is an error wrapping ErrExists. Leftover temp files of path from an
// earlier killed run are removed first.
func Create(path string, overwrite bool) (*File, error) {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		// Write through a link to the file it names, as a plain open would.
		real, err := filepath.EvalSymlinks(path)
		if err != nil {
			return nil, fmt.Errorf("output %s is a symbolic link that leads nowhere (%v); give a file path", path, err)
		}
		path = real
	}
	if fi, err := os.Stat(path); err == nil {
		switch {
		case fi.IsDir():
			return nil, fmt.Errorf("output %s is a directory; give a file path", path)
		case !fi.Mode().IsRegular():
			return nil, fmt.Errorf("output %s is not a regular file (%s); give a file path", path, fi.Mode().Type())
		}
	}
	if !overwrite {
		if _, err := os.Lstat(path); err == nil {
			return nil, fmt.Errorf("%s: %w", path, ErrExists)
		}
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	Clean(path)
	if base == "" {
		return nil, fmt.Errorf("output %s ends in a path separator, so it names a directory; give a file path", path)
	}
	f, err := createTemp(dir, "."+TempBase(base)+tempInfix+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		// Name the target and the cause, never the temp file (defect D16).
		if fi, serr := os.Stat(dir); errors.Is(serr, fs.ErrNotExist) {
			return nil, fmt.Errorf("create output %s: directory %s does not exist; create it first", path, dir)
		} else if serr == nil && !fi.IsDir() {
			return nil, fmt.Errorf("create output %s: %s is not a directory", path, dir)
		}
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("create output %s: %w", path, err)
	}
	return &File{File: f, path: path, overwrite: overwrite}, nil
}

// createTemp creates a new file dir/prefix<random> as os.CreateTemp does,
// but with mode 0666 before the umask, as os.Create gives, so the committed
// output gets the mode the user's umask asks for (defect H9; CreateTemp's
// 0600 was chmodded to 0644 whatever the umask).
func createTemp(dir, prefix string) (*os.File, error) {
	for try := 0; ; try++ {
		name := filepath.Join(dir, prefix+strconv.FormatUint(uint64(rand.Uint32()), 10))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if errors.Is(err, fs.ErrExist) && try < 1000 {
			continue
		}
		return f, err
	}
}

// Commit fsyncs, closes and renames the temp file to the target path. Without
// overwrite the rename refuses a target that appeared after Create's check
// (another writer of the same output, defect H3): the error wraps ErrExists
// and the other file is kept (osx.RenameNoReplace). After a failed Commit
// the temp file is removed.
func (f *File) Commit() error {
	if f.done {
		return errors.New("atomicfile: commit after close")
	}
	f.done = true
	name := f.File.Name()
	if err := f.File.Sync(); err != nil {
		f.File.Close()
		os.Remove(name)
		return fmt.Errorf("sync %s: %w", f.path, err)
	}
	if err := f.File.Close(); err != nil {
		os.Remove(name)
		return fmt.Errorf("close %s: %w", f.path, err)
	}
	if !f.overwrite {
		if err := osx.RenameNoReplace(name, f.path); err != nil {
			os.Remove(name)
			if errors.Is(err, fs.ErrExist) {
				return fmt.Errorf("%s: %w", f.path, ErrExists)
			}
			return fmt.Errorf("rename to %s: %w", f.path, err)
		}
		return nil
	}
	// osx.Rename replaces an existing target in one step on Windows too.
	if err := osx.Rename(name, f.path); err != nil {
		os.Remove(name)
		return fmt.Errorf("rename to %s: %w", f.path, err)
	}
	return nil
}

// Abort closes and removes the temp file. It is safe to call after Commit
// (then it does nothing), so callers can defer it.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	f.File.Close()
	os.Remove(f.File.Name())
}

// TempName returns the temp file's path (for signal handlers that must remove
// it).
func (f *File) TempName() string { return f.File.Name() }

// WriteFile writes data to path atomically (see Create).
func WriteFile(path string, data []byte, overwrite bool) error {
	f, err := Create(path, overwrite)
	if err != nil {
		return err
	}
	defer f.Abort()
	if _, err := f.Write(data); err != nil {
		return f.NameTarget(fmt.Errorf("write %s: %w", path, err))
	}
	return f.NameTarget(f.Commit())
}

// IsTemp reports whether name (a base name) is a temp file of this package.
func IsTemp(name string) bool {
	return strings.HasPrefix(name, ".") && strings.Contains(name, tempInfix)
}

// Clean removes temp files left beside path by an earlier interrupted write
// and returns how many it removed. A temp file whose name carries the pid of
// a live process (this one included) is another write in progress and is
// kept (defect D8); names without a pid (written by older versions) are
// removed.
func Clean(path string) int {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	matches, _ := filepath.Glob(filepath.Join(dir, "."+globEscape(TempBase(base))+tempInfix+"*"))
	n := 0
	for _, m := range matches {
		if ownerAlive(m) {
			continue
		}
		if fi, err := os.Lstat(m); err == nil && fi.Mode().Type() == 0 {
			if os.Remove(m) == nil {
				n++
			}
		}
	}
	return n
}

func globEscape(s string) string {
	r := strings.NewReplacer(`*`, `\*`, `?`, `\?`, `[`, `\[`, `\`, `\\`)
	return r.Replace(s)
}

// ownerAlive reports whether the temp file name carries the pid of a process
// that is running ("….partial-<pid>-<random>").
func ownerAlive(name string) bool {
	i := strings.LastIndex(name, tempInfix)
	if i < 0 {
		return false
	}
	num, _, ok := strings.Cut(name[i+len(tempInfix):], "-")
	if !ok {
		return false
	}
	pid, err := strconv.Atoi(num)
	if err != nil || pid <= 0 {
		return false
	}
	return pid == os.Getpid() || osx.ProcessAlive(pid)
}

// NameTarget rewrites err so that its message names the target path where
// it named the temp file (a write error such as "no space left on device"
// is reported with the temp path, which is gone by the time the user reads
// it, defect D16). errors.Is and errors.As still see err.
func (f *File) NameTarget(err error) error {
	if err == nil || !strings.Contains(err.Error(), f.TempName()) {
		return err
	}
	return &targetError{msg: strings.ReplaceAll(err.Error(), f.TempName(), f.path), err: err}
}

type targetError struct {
	msg string
	err error
}

func (e *targetError) Error() string { return e.msg }
func (e *targetError) Unwrap() error { return e.err }
