// Package parallel is the one helper that splits work over goroutines:
// Range cuts an index range into contiguous chunks, one per worker, and
// waits for all of them. Callers whose numbers must not depend on the
// thread count give each index its own independent result (a matrix row, a
// tensor, a token); the chunking then changes only which goroutine computes
// it.
package parallel

import "sync"

// Range runs f(worker, lo, hi) over [0, n) cut into at most threads
// contiguous chunks of nearly equal size, worker numbering the chunks
// 0, 1, …, and returns when every call has returned. threads ≤ 1, or n
// below 2·threads, runs f(0, 0, n) on the calling goroutine; n ≤ 0 does
// nothing. Workers never exceed threads, so per-worker scratch can be
// indexed by worker.
func Range(n, threads int, f func(worker, lo, hi int)) {
	if n <= 0 {
		return
	}
	if threads <= 1 || n < 2*threads {
		f(0, 0, n)
		return
	}
	var wg sync.WaitGroup
	chunk := (n + threads - 1) / threads
	for w, lo := 0, 0; lo < n; w, lo = w+1, lo+chunk {
		hi := min(lo+chunk, n)
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(w, lo, hi)
		}()
	}
	wg.Wait()
}

// For is Range without the worker number.
func For(n, threads int, f func(lo, hi int)) {
	Range(n, threads, func(_, lo, hi int) { f(lo, hi) })
}
