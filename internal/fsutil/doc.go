// Package fsutil guards every input file bitnet-convert reads: a path must
// name a regular file (after following symlinks) before it is opened, because
// opening or reading a FIFO, character device or socket can block forever in
// a system call that Ctrl-C does not interrupt. It is a leaf package (only the
// standard library) so every other package may import it.
package fsutil
