//go:build !unix

package fsutil

import "os"

// openPipe opens a pipe for reading (no non-blocking open outside unix).
func openPipe(path string) (*os.File, error) { return os.Open(path) }
