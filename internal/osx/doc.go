// Package osx holds all of bitnet-convert's operating-system-specific code
// behind one small API, so that the rest of the tree builds unchanged for
// linux, darwin and windows on 32- and 64-bit CPUs. Nothing outside this
// package imports golang.org/x/sys/unix or golang.org/x/sys/windows.
//
// What it offers, and how each platform provides it:
//
//   - Map: a read-only view of a whole file. Unix maps it with mmap
//     (PROT_READ, MAP_SHARED); Windows with CreateFileMapping (PAGE_READONLY)
//     and MapViewOfFile (FILE_MAP_READ). Where mapping is unsupported or fails
//     (a filesystem without mmap, an exhausted 32-bit address space), Map
//     falls back to reading the file with ReadAt into memory, but only up to
//     ReadFallbackLimit bytes, so the fallback never exhausts memory.
//   - Mapping.Release: page release. Unix advises MADV_DONTNEED on the
//     page-aligned interior of the range; Windows calls VirtualUnlock on it,
//     which removes the pages from the working set (the documented behaviour
//     for a range that is not locked). Both leave the bytes readable: they
//     fault back in from the file. For a ReadAt fallback it does nothing.
//   - FreeSpace: bytes available to an unprivileged user on the filesystem
//     holding a path (statfs Bavail×Bsize on Unix, GetDiskFreeSpaceEx on
//     Windows).
//   - StartWriteback: begin writing a range of a file to disk without waiting
//     (sync_file_range SYNC_FILE_RANGE_WRITE on Linux; nothing elsewhere).
//   - Rename: replace newpath by oldpath atomically, also when newpath exists
//     (rename(2) on Unix; MoveFileEx with MOVEFILE_REPLACE_EXISTING and
//     MOVEFILE_WRITE_THROUGH on Windows, retried briefly while a virus scanner
//     or indexer holds the new file open).
//   - RenameNoReplace: the same without replacing an existing newpath
//     (renameat2 RENAME_NOREPLACE, link(2), MoveFileEx without
//     REPLACE_EXISTING)
//   - TerminationSignals: the signals after which a command removes its
//     partial output (os.Interrupt, SIGTERM, and SIGHUP on Unix).
//   - ProcessAlive: whether a pid is running (signal 0 on Unix;
//     OpenProcess + GetExitCodeProcess on Windows), for temp files named by
//     their writer's pid.
//   - Mkfifo: make a named pipe (tests use it to feed the tool a non-regular
//     file); errors.ErrUnsupported on Windows.
//   - NewBuffer: a large scratch buffer that is refilled many times. Linux
//     maps it anonymously, aligned to 2 MiB, and advises MADV_HUGEPAGE, so
//     it is faulted in a huge page at a time (on the project's VMs a 4 KiB
//     page fault costs about 20 µs, a sixth of the whole conversion's time
//     before this); elsewhere it is a Go slice.
//   - Int: a file or tensor size as an int, or a one-line error naming it
//     when it does not fit this build's int (32-bit targets).
//
// The shape follows gguf-parser-go's util/osx package: per-OS files with one
// portable fallback file, and nothing else in the module knowing which OS it
// runs on.
package osx
