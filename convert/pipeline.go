package convert

import (
	"io"
	"sync/atomic"

	"github.com/bitnet-convert/bitnet-convert/gguf/writer"
	"github.com/bitnet-convert/bitnet-convert/internal/osx"
)

// Output buffers: outBuffers of them circulate between the converter, which
// fills one with a tensor (or a chunk of a streamed tensor), and the writer
// goroutine, which writes it and hands it back. Each is at least
// minOutBuffer bytes (whole huge pages where the OS offers them, see
// osx.NewBuffer: every fresh page costs a fault) and only grows.
const (
	outBuffers   = 3
	minOutBuffer = 4 << 20
)

// chunk is a piece b of a tensor's output bytes, held in buf.
type chunk struct {
	b   []byte
	buf *osx.Buffer
}

// writeJob is one tensor for the writer goroutine: its index and its
// chunks in order, the channel closed after the last.
type writeJob struct {
	i      int
	chunks chan chunk
}

// tensorWriter writes the converted tensors to the GGUF writer on its own
// goroutine, in order, while the converter reads and computes the next
// ones, so the output's writes overlap with the work on the cores. The
// buffers circulate through pool, which bounds the memory in flight to
// outBuffers buffers. After a write error the goroutine only drains what it
// is sent (failed tells the converter to stop) and close returns that error.
type tensorWriter struct {
	jobs   chan writeJob
	pool   chan *osx.Buffer
	done   chan error
	failed atomic.Bool
	cur    *writeJob     // the tensor being filled, between begin and end
	bufs   []*osx.Buffer // every buffer, for free
}

// startWriter starts the writer goroutine for gw.
func startWriter(gw *writer.Writer) *tensorWriter {
	tw := &tensorWriter{jobs: make(chan writeJob, outBuffers), pool: make(chan *osx.Buffer, outBuffers), done: make(chan error, 1)}
	for range outBuffers {
		b := &osx.Buffer{} // allocated on first use
		tw.bufs = append(tw.bufs, b)
		tw.pool <- b
	}
	go tw.run(gw)
	return tw
}

func (tw *tensorWriter) run(gw *writer.Writer) {
	var first error
	for job := range tw.jobs {
		if first == nil {
			// A chunk's buffer goes back to the pool once the next one
			// is asked for: WriteTensorChunks has written it by then.
			var held *osx.Buffer
			first = gw.WriteTensorChunks(job.i, func() ([]byte, error) {
				if held != nil {
					tw.pool <- held
					held = nil
				}
				ch, ok := <-job.chunks
				if !ok {
					return nil, io.EOF
				}
				held = ch.buf
				return ch.b, nil
			})
			if held != nil {
				tw.pool <- held
			}
			if first != nil {
				tw.failed.Store(true)
			}
		}
		for ch := range job.chunks { // left over after an error
			tw.pool <- ch.buf
		}
	}
	tw.done <- first
}

// begin starts tensor i; its chunks follow (take, put), then end.
func (tw *tensorWriter) begin(i int) {
	tw.cur = &writeJob{i: i, chunks: make(chan chunk, outBuffers)}
	tw.jobs <- *tw.cur
}

// take returns a free buffer of at least n bytes, waiting for the writer to
// hand one back when all are in flight.
func (tw *tensorWriter) take(n int) *osx.Buffer {
	b := <-tw.pool
	b.Grow(max(n, minOutBuffer))
	return b
}

// put queues b, held in buf (from take), as the next chunk of the current
// tensor.
func (tw *tensorWriter) put(b []byte, buf *osx.Buffer) { tw.cur.chunks <- chunk{b: b, buf: buf} }

// end closes the current tensor.
func (tw *tensorWriter) end() {
	if tw.cur != nil {
		close(tw.cur.chunks)
		tw.cur = nil
	}
}

// close ends the current tensor (if any), waits until everything queued
// has been written and returns the first write error.
func (tw *tensorWriter) close() error {
	tw.end()
	close(tw.jobs)
	return <-tw.done
}

// free releases the buffers; only after close.
func (tw *tensorWriter) free() {
	for _, b := range tw.bufs {
		b.Free()
	}
}
