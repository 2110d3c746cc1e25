package fsutil

import (
	"fmt"
	"io"
	"io/fs"
	"os"
)

// MaxTextBytes bounds the text ReadText returns: the tokenizer holds the
// text and its ids at once, so a larger input would cost several times this
// in memory.
const MaxTextBytes = 512 << 20

// ReadText reads the whole text input of tokenize or perplexity, at most
// limit bytes: path "-" reads stdin; a named pipe or character device (a
// shell's <(zcat wiki.gz), /dev/stdin) is read as a stream; a regular file
// has its size checked before it is read. Anything longer than limit is an
// error naming path and the limit, so a pipe of unknown length never
// exhausts memory. Directories, sockets and block devices are refused with
// CheckRegular's error.
func ReadText(path string, stdin io.Reader, limit int64) ([]byte, error) {
	name := path
	var r io.Reader
	switch path {
	case "-":
		name, r = "stdin", stdin
	default:
		fi, err := os.Stat(path)
		if err != nil {
			return nil, err
		}
		m := fi.Mode()
		switch {
		case m.IsRegular():
			if fi.Size() > limit {
				return nil, fmt.Errorf("%s is %d bytes, more than the %d-byte limit for a text input; split it", path, fi.Size(), limit)
			}
			return os.ReadFile(path)
		case m&fs.ModeNamedPipe != 0 || m&fs.ModeCharDevice != 0:
			f, err := os.Open(path)
			if err != nil {
				return nil, err
			}
			defer f.Close()
			r = f
		default:
			return nil, regular(path, fi)
		}
	}
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s holds more than the %d-byte limit for a text input; split it", name, limit)
	}
	return b, nil
}
