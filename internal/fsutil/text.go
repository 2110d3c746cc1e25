package fsutil

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"
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
// exhausts memory. A named pipe no program writes to is an error at once,
// not a hang (after waiting a second for a writer to appear). Directories, sockets and block devices are refused with
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
		case m&fs.ModeNamedPipe != 0:
			f, err := openPipe(path)
			if err != nil {
				return nil, err
			}
			defer f.Close()
			b, err := readLimited(f, path, limit)
			// No writer yet: a program started next to us (mkfifo p;
			// writer > p &) may open it a moment later. Wait up to
			// pipeWait before calling the pipe empty.
			for waited := time.Duration(0); err == nil && len(b) == 0 && waited < pipeWait; waited += pipePoll {
				time.Sleep(pipePoll)
				b, err = readLimited(f, path, limit)
			}
			if err == nil && len(b) == 0 {
				return nil, fmt.Errorf("%s is a named pipe with nothing to read (no program writes to it)", path)
			}
			return b, err
		case m&fs.ModeCharDevice != 0:
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
	return readLimited(r, name, limit)
}

// pipeWait is how long ReadText waits for a writer on a named pipe that
// has none when it is opened; pipePoll is the retry interval.
const (
	pipeWait = time.Second
	pipePoll = 20 * time.Millisecond
)

// readLimited reads r to the end, failing once it yields more than limit
// bytes.
func readLimited(r io.Reader, name string, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s holds more than the %d-byte limit for a text input; split it", name, limit)
	}
	return b, nil
}
