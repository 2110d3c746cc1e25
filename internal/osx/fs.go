package osx

import "os"

// FreeSpace returns the bytes an unprivileged user may still write on the
// filesystem holding path (an existing file or directory). The error is an
// *os.PathError; it wraps errors.ErrUnsupported where the OS cannot tell.
func FreeSpace(path string) (uint64, error) { return freeSpace(path) }

// StartWriteback asks the OS to begin writing bytes [off, off+n) of f to
// disk without waiting, so that a later Sync has little left to do. It is
// only advice and does nothing outside Linux; errors are ignored (the Sync
// reports any real failure).
func StartWriteback(f *os.File, off, n int64) { startWriteback(f, off, n) }

// Rename renames oldpath to newpath, replacing newpath if it exists, in one
// step on every OS (see the package doc for Windows). Errors are
// *os.LinkError.
func Rename(oldpath, newpath string) error { return rename(oldpath, newpath) }

// Mkfifo creates a named pipe at path (mode 0644). On Windows it returns an
// *os.PathError wrapping errors.ErrUnsupported.
func Mkfifo(path string) error { return mkfifo(path) }

// TerminationSignals returns the signals after which a command should remove
// its partial output and exit: os.Interrupt (Ctrl-C), SIGTERM (on Windows Go
// raises it for console close, logoff and shutdown) and, on Unix, SIGHUP (a
// closed terminal or a dropped ssh session). The slice is new on each call.
func TerminationSignals() []os.Signal { return append([]os.Signal(nil), terminationSignals...) }

// ProcessAlive reports whether a process with this pid exists (signal 0 on
// Unix; OpenProcess and GetExitCodeProcess on Windows). Where the OS cannot
// tell it reports true, so a caller deciding whether a file still belongs to
// a running process keeps it.
func ProcessAlive(pid int) bool { return pid > 0 && processAlive(pid) }

// RenameNoReplace renames oldpath to newpath only if newpath does not exist,
// in one step where the OS offers it: renameat2(RENAME_NOREPLACE) on Linux,
// link(2) then unlink of oldpath on other Unix systems and on Linux
// filesystems without renameat2, MoveFileEx without REPLACE_EXISTING on
// Windows. When newpath exists the error is an *os.LinkError for which
// errors.Is(err, fs.ErrExist) holds, and oldpath is left in place. On a
// filesystem that supports neither (no hard links), it falls back to a
// check for newpath followed by Rename, which another writer could still
// race.
func RenameNoReplace(oldpath, newpath string) error { return renameNoReplace(oldpath, newpath) }
