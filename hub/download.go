package hub

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// download is one Download call's state.
type download struct {
	c       *Client
	ref     Ref
	commit  string
	repoDir string

	mu       sync.Mutex
	done     map[string]int64 // bytes present per file
	total    int64
	received int64
}

// stallTimeout is how long a transfer may go without a byte before it is
// cut and resumed.
const stallTimeout = 60 * time.Second

var errStalled = errors.New("no data for 60 s")

// errRetry marks a transfer error worth resuming.
type errRetry struct{ err error }

func (e errRetry) Error() string { return e.err.Error() }
func (e errRetry) Unwrap() error { return e.err }

// fetchAll asks for every file's metadata, then fetches the files, Workers
// at a time; the first error stops the others.
func (d *download) fetchAll(ctx context.Context, files []string) error {
	metas := make([]fileMeta, len(files))
	err := d.each(ctx, len(files), func(ctx context.Context, i int) error {
		m, err := d.c.head(ctx, d.ref, d.commit, files[i])
		metas[i] = m
		return err
	})
	if err != nil {
		return err
	}
	d.mu.Lock()
	for _, m := range metas {
		if m.size > 0 {
			d.total += m.size
		}
	}
	d.mu.Unlock()
	return d.each(ctx, len(files), func(ctx context.Context, i int) error {
		blob, err := d.fetch(ctx, metas[i])
		if err != nil {
			return err
		}
		return linkSnapshot(d.repoDir, d.commit, metas[i].file, blob)
	})
}

// each runs f(0..n-1) on Workers goroutines and returns the first error.
func (d *download) each(ctx context.Context, n int, f func(context.Context, int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	workers := d.c.Workers
	if workers <= 0 {
		workers = DefaultWorkers
	}
	next := make(chan int)
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
	)
	for range min(workers, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := f(ctx, i); err != nil {
					once.Do(func() { first = err; cancel() })
				}
			}
		}()
	}
	for i := 0; i < n; i++ {
		select {
		case next <- i:
			continue
		case <-ctx.Done():
		}
		break
	}
	close(next)
	wg.Wait()
	if first == nil && ctx.Err() != nil {
		// Cancelled from outside.
		return context.Cause(ctx)
	}
	return first
}

// report records that file has have bytes and calls Progress.
func (d *download) report(file string, have int64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.done[file] = have
	if d.c.Progress == nil {
		return
	}
	var sum int64
	for _, n := range d.done {
		sum += n
	}
	d.c.Progress(sum, max(d.total, sum))
}

// fetch makes blobs/<etag> hold m's bytes, checked against m.etag, and
// returns its path: a cached blob is checked and reused; otherwise the
// bytes go to blobs/<etag>.incomplete (continuing what a previous run left
// there) and are renamed into place once their hash matches.
func (d *download) fetch(ctx context.Context, m fileMeta) (string, error) {
	blobs := filepath.Join(d.repoDir, "blobs")
	blob := filepath.Join(blobs, m.etag)
	name := d.ref.String() + ": " + m.file
	if fi, err := os.Stat(blob); err == nil && fi.Mode().IsRegular() {
		if err := verifyFile(blob, m.etag, name); err != nil {
			return "", err
		}
		d.report(m.file, fi.Size())
		return blob, nil
	}
	if err := os.MkdirAll(blobs, 0o777); err != nil {
		return "", cacheWriteError(blobs, err)
	}
	// huggingface_hub's lock of this blob: .locks/models--org--name/<etag>.lock.
	locks := filepath.Join(d.c.CacheDir, ".locks", filepath.Base(d.repoDir))
	if err := os.MkdirAll(locks, 0o777); err != nil {
		return "", cacheWriteError(locks, err)
	}
	unlock, err := lockFile(ctx, filepath.Join(locks, m.etag+".lock"))
	if err != nil {
		return "", fmt.Errorf("%s: lock %s: %w", name, filepath.Join(locks, m.etag+".lock"), err)
	}
	defer unlock()
	if fi, err := os.Stat(blob); err == nil && fi.Mode().IsRegular() {
		// Another process finished it while we waited.
		if err := verifyFile(blob, m.etag, name); err != nil {
			return "", err
		}
		d.report(m.file, fi.Size())
		return blob, nil
	}
	inc := blob + ".incomplete"
	f, err := os.OpenFile(inc, os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		return "", cacheWriteError(inc, err)
	}
	defer f.Close()
	found, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return "", fmt.Errorf("%s: %w", inc, err)
	}
	have := found
	if m.size >= 0 && have > m.size {
		have = 0
	}
	if m.size >= 0 && have == m.size && have > 0 {
		// A previous run got every byte; a mismatch (kept from that run)
		// is downloaded afresh.
		if verifyFile(inc, m.etag, name) == nil {
			return d.commitBlob(f, inc, blob, m, have)
		}
		have = 0
	}
	if have == 0 && found > 0 {
		if err := f.Truncate(0); err != nil {
			return "", cacheWriteError(inc, err)
		}
	}
	d.report(m.file, have)
	retries := d.c.Retries
	if retries == 0 {
		retries = DefaultRetries
	}
	delay := d.c.RetryDelay
	if delay <= 0 {
		delay = DefaultRetryDelay
	}
	for attempt := 0; ; attempt++ {
		have, err = d.get(ctx, f, inc, m, have)
		var re errRetry
		if err == nil || !errors.As(err, &re) {
			break
		}
		if attempt >= retries {
			return "", tagf(ErrNetwork, "%s: the transfer broke %d times (%v); %d of %s bytes are kept in %s, run again to resume",
				name, attempt+1, re.err, have, sizeText(m.size), inc)
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(delay << attempt):
		}
	}
	if err != nil {
		return "", err
	}
	return d.commitBlob(f, inc, blob, m, have)
}

func sizeText(n int64) string {
	if n < 0 {
		return "?"
	}
	return strconv.FormatInt(n, 10)
}

// commitBlob checks the complete .incomplete file and renames it to blob.
func (d *download) commitBlob(f *os.File, inc, blob string, m fileMeta, have int64) (string, error) {
	if m.size >= 0 && have != m.size {
		return "", tagf(ErrNetwork, "%s: %s: got %d bytes, the Hub reports %d; run again", d.ref, m.file, have, m.size)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return "", err
	}
	h := newHash(m.etag, have)
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("read %s: %w", inc, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != m.etag {
		return "", tagf(ErrHashMismatch, "%s: %s: the downloaded bytes have %s %s, not the %s the Hub reports; not used, kept as %s (the next run downloads it afresh)",
			d.ref, m.file, hashKind(m.etag), got, m.etag, inc)
	}
	if err := f.Close(); err != nil {
		return "", cacheWriteError(inc, err)
	}
	if err := os.Rename(inc, blob); err != nil {
		if _, serr := os.Stat(blob); serr == nil {
			// Another process finished the same blob first.
			os.Remove(inc)
			return blob, verifyFile(blob, m.etag, d.ref.String()+": "+m.file)
		}
		return "", cacheWriteError(blob, err)
	}
	return blob, nil
}

// get transfers m's bytes from offset have into f and returns the new
// length. Errors worth resuming are errRetry.
func (d *download) get(ctx context.Context, f *os.File, inc string, m fileMeta, have int64) (int64, error) {
	// A transfer that stalls (no byte for stallTimeout) is cut and resumed.
	rctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stall := time.AfterFunc(stallTimeout, func() { cancel(errStalled) })
	defer stall.Stop()
	req, err := http.NewRequestWithContext(rctx, http.MethodGet, m.url, nil)
	if err != nil {
		return have, err
	}
	req.Header.Set("Accept-Encoding", "identity")
	d.c.auth(req)
	if have > 0 {
		req.Header.Set("Range", "bytes="+strconv.FormatInt(have, 10)+"-")
	}
	resp, err := d.c.httpClient().Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return have, ctx.Err()
		}
		return have, errRetry{netError(ctx, d.ref.String()+": "+m.file, err)}
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusPartialContent:
		if start, ok := rangeStart(resp.Header.Get("Content-Range")); !ok || start != have {
			// Not the bytes we asked for: start over.
			return d.restart(f, inc, m, fmt.Errorf("range answer %q for bytes=%d-", resp.Header.Get("Content-Range"), have))
		}
	case resp.StatusCode == http.StatusOK:
		if have > 0 {
			// The server ignored the Range: take the whole file.
			if err := f.Truncate(0); err != nil {
				return have, cacheWriteError(inc, err)
			}
			have = 0
			d.report(m.file, 0)
		}
	case resp.StatusCode == http.StatusRequestedRangeNotSatisfiable:
		if m.size >= 0 && have == m.size {
			return have, nil
		}
		return d.restart(f, inc, m, errors.New("range not satisfiable"))
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		return have, errRetry{fmt.Errorf("HTTP %d", resp.StatusCode)}
	default:
		return have, d.c.hubError(resp, d.ref, m.file, false)
	}
	if _, err := f.Seek(have, io.SeekStart); err != nil {
		return have, err
	}
	buf := make([]byte, copyChunk)
	for {
		n, rerr := resp.Body.Read(buf)
		stall.Reset(stallTimeout)
		if n > 0 {
			if m.size >= 0 && have+int64(n) > m.size {
				return d.restart(f, inc, m, fmt.Errorf("the server sent more than the %d bytes the Hub reports", m.size))
			}
			if _, err := f.Write(buf[:n]); err != nil {
				return have, cacheWriteError(inc, err)
			}
			have += int64(n)
			d.mu.Lock()
			d.received += int64(n)
			d.mu.Unlock()
			d.report(m.file, have)
		}
		if rerr == io.EOF {
			if m.size >= 0 && have < m.size {
				return have, errRetry{fmt.Errorf("connection closed at byte %d of %d", have, m.size)}
			}
			return have, nil
		}
		if rerr != nil {
			if ctx.Err() != nil {
				return have, ctx.Err()
			}
			if errors.Is(context.Cause(rctx), errStalled) {
				rerr = errStalled
			}
			return have, errRetry{rerr}
		}
	}
}

// restart empties the partial file after an answer that cannot be
// continued; the next attempt starts from byte 0.
func (d *download) restart(f *os.File, inc string, m fileMeta, why error) (int64, error) {
	if err := f.Truncate(0); err != nil {
		return 0, cacheWriteError(inc, err)
	}
	d.report(m.file, 0)
	return 0, errRetry{why}
}

// rangeStart parses the first byte of a Content-Range "bytes A-B/N".
func rangeStart(s string) (int64, bool) {
	s, ok := strings.CutPrefix(s, "bytes ")
	if !ok {
		return 0, false
	}
	a, _, ok := strings.Cut(s, "-")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(a, 10, 64)
	return n, err == nil && n >= 0
}
