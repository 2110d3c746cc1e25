// Package parallel is the one helper that splits work over goroutines:
// Range cuts an index range into contiguous chunks, one per worker, and
// waits for all of them. Callers whose numbers must not depend on the
// thread count give each index its own independent result (a matrix row, a
// tensor, a token); the chunking then changes only which goroutine computes
// it.
//
// A token of generation makes a few hundred RangeHot calls of some tens of
// microseconds each, so the hand-off must cost far less than that.
// RangeHot hands its job to a team of long-lived worker goroutines that poll for the
// next job for a short while after each one (spinFor) before they park on
// a channel, as ggml's thread pool spins between the operators of a graph;
// starting goroutines per call instead costs a wake-up of an idle
// processor each time (tens of microseconds on a virtual machine). The
// range is cut into a few chunks per worker that the caller and the
// workers take in turn from an atomic counter, so a worker that wakes late
// or loses its processor to another program takes fewer chunks instead of
// holding everyone up; a worker that loses it in the middle of a chunk
// does hold the call up, and the team then runs one worker narrower for a
// while (see stallChunks). A call that finds the team busy (a concurrent or
// nested RangeHot) starts goroutines, one contiguous chunk each, as Range
// always does: the converter's long chunks would gain nothing from the
// team and its idle workers' polling would cost it CPU time.
package parallel

import (
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
)

// Range runs f(worker, lo, hi) over [0, n) cut into at most threads
// contiguous chunks of nearly equal size, worker numbering the chunks
// 0, 1, …, and returns when every call has returned. threads ≤ 1, or n
// below 2·threads, runs f(0, 0, n) on the calling goroutine; n ≤ 0 does
// nothing. Workers never exceed threads, so per-worker scratch can be
// indexed by worker. Each call starts its goroutines (chunk 0 runs on the
// caller): for long chunks, such as the converter's tensors.
func Range(n, threads int, f func(worker, lo, hi int)) {
	if n <= 0 {
		return
	}
	if threads <= 1 || n < 2*threads {
		f(0, 0, n)
		return
	}
	spawn(n, threads, f)
}

// spawn is Range with goroutines started for the call. A panic in a
// chunk (a fault in a mapped input that shrank included, see
// SetPanicOnFault below) is re-raised in the caller once every chunk has
// returned.
func spawn(n, threads int, f func(worker, lo, hi int)) {
	var (
		wg       sync.WaitGroup
		panicked atomic.Bool
		value    any
	)
	chunk := (n + threads - 1) / threads
	for w, lo := 1, chunk; lo < n; w, lo = w+1, lo+chunk {
		hi := min(lo+chunk, n)
		wg.Add(1)
		go func() {
			defer wg.Done()
			debug.SetPanicOnFault(true)
			defer func() {
				if p := recover(); p != nil && panicked.CompareAndSwap(false, true) {
					value = p
				}
			}()
			f(w, lo, hi)
		}()
	}
	func() {
		defer func() {
			if p := recover(); p != nil && panicked.CompareAndSwap(false, true) {
				value = p
			}
		}()
		f(0, 0, chunk)
	}()
	wg.Wait()
	if panicked.Load() {
		panic(value)
	}
}

// For is Range without the worker number.
func For(n, threads int, f func(lo, hi int)) {
	Range(n, threads, func(_, lo, hi int) { f(lo, hi) })
}

// RangeHot is Range for many short calls in a row (the runtime's products,
// a few hundred per generated token): the chunks go to the team of
// long-lived workers, which poll for the next call for spinFor before they
// park. Each index is in exactly one chunk, the chunks of one worker never
// run at the same time, and worker is below threads. There may be several
// chunks per worker (four per thread, taken in turn from an atomic
// counter). A panic in f is re-raised in the caller after the other chunks
// have finished. A call that finds the team busy (concurrent or nested)
// starts goroutines as Range does.
func RangeHot(n, threads int, f func(worker, lo, hi int)) {
	if n <= 0 {
		return
	}
	if threads <= 1 || n < 2*threads {
		f(0, 0, n)
		return
	}
	if threads <= runtime.GOMAXPROCS(0) && shared.mu.TryLock() {
		w := shared.width(threads)
		if w <= 1 || n < 2*w {
			shared.mu.Unlock()
			f(0, 0, n)
			return
		}
		shared.run(n, w, f)
		return
	}
	spawn(n, threads, f)
}

// ForHot is RangeHot without the worker number.
func ForHot(n, threads int, f func(lo, hi int)) {
	RangeHot(n, threads, func(_, lo, hi int) { f(lo, hi) })
}

// chunksPerWorker is how many chunks Range cuts per thread for the team.
const chunksPerWorker = 4

// spinFor is how long an idle worker keeps polling for its next job
// before it parks: longer than the gaps between the products of one token,
// short enough that an idle program leaves the processors alone at once.
const spinFor = 200 * time.Microsecond

// waitSpin is how long the caller polls for the chunks still running
// before it parks.
const waitSpin = 50 * time.Microsecond

// A worker that loses its processor in the middle of a chunk (another
// program wants the core) holds the call until it gets a processor back,
// a scheduler time slice later: with two threads of ours and one busy
// program on two cores, the team then runs slower than one thread alone.
// The caller sees it as a wait far longer than its own chunks took
// (stallChunks chunk times plus stallSlack). One such stall now and then
// happens on an idle virtual machine too (a vCPU paused by its host: 1–2
// ms about once a second on the project's VM); stallBurst of them within
// stallWindow are a busy machine, and the team then runs one worker
// narrower for a while (narrowMin) before it tries the full width again.
// Within narrowAgain of widening, probeBurst stalls within stallWindow
// narrow it again, for twice as long each time, up to narrowMax. The
// numbers do not change: each index's result does not depend on the
// chunking.
const (
	stallChunks = 3
	stallSlack  = 200 * time.Microsecond
	stallBurst  = 3
	probeBurst  = 2
	stallWindow = 250 * time.Millisecond
	narrowMin   = 50 * time.Millisecond
	narrowMax   = 2 * time.Second
	narrowAgain = time.Second
)

// shared is the process's team; mu is held by the Range call using it.
var shared team

// team is a set of worker goroutines, numbered from 1 (the caller is
// worker 0).
type team struct {
	mu      sync.Mutex
	workers []*worker
	cur     atomic.Pointer[job] // the latest job
	wake    chan struct{}       // wakes a parked caller; buffered 1
	// slab holds zeroed jobs for the next calls. Each job still serves
	// one call only (a worker tells jobs apart by their address, and a
	// late worker may still read a finished one), but they are allocated
	// jobSlab at a time, not one per call (a few hundred calls a token).
	slab []job

	// limit, when above 0, is the widest the team runs until until
	// (narrowed after a burst of stalls); narrowFor is the length of the
	// last narrowing; stalls holds the times of the latest stalls. All
	// are guarded by mu.
	limit     int
	until     time.Time
	narrowFor time.Duration
	stalls    [stallBurst]time.Time
}

// now is the team's clock (a variable for the tests).
var now = time.Now

// width is how many workers (the caller included) a call of threads may
// use now; t.mu is held.
func (t *team) width(threads int) int {
	if t.limit == 0 {
		return threads
	}
	if now().Before(t.until) {
		return min(threads, t.limit)
	}
	t.limit = 0
	return threads
}

// stalled records a stall of a call of width workers at at and narrows
// the team when it completes a burst; t.mu is held.
func (t *team) stalled(width int, at time.Time) {
	copy(t.stalls[:], t.stalls[1:])
	t.stalls[stallBurst-1] = at
	need := stallBurst
	if !t.until.IsZero() && at.Sub(t.until) <= narrowAgain {
		need = probeBurst // just widened after a narrowing: probing
	}
	if at.Sub(t.stalls[stallBurst-need]) > stallWindow {
		return
	}
	if t.narrowFor == 0 || at.Sub(t.until) > narrowAgain {
		t.narrowFor = narrowMin
	} else {
		t.narrowFor = min(2*t.narrowFor, narrowMax)
	}
	t.limit = width - 1
	t.until = at.Add(t.narrowFor)
	t.stalls = [stallBurst]time.Time{}
}

// jobSlab is how many jobs team.run allocates at once.
const jobSlab = 64

// job is one Range call given to the team.
type job struct {
	f          func(worker, lo, hi int)
	n, chunk   int
	chunks     int64
	next       atomic.Int64 // chunks taken
	done       atomic.Int64 // chunks finished
	waiting    atomic.Bool  // the caller has parked
	panicked   atomic.Bool
	panicValue any
	team       *team
}

// worker is one goroutine's hand-off state, padded so that two workers'
// flags do not share a cache line.
type worker struct {
	parked atomic.Bool   // waiting on wake
	wake   chan struct{} // buffered 1
	_      [64]byte
}

// run executes one job with t.mu held and releases it.
func (t *team) run(n, threads int, f func(worker, lo, hi int)) {
	if t.wake == nil {
		t.wake = make(chan struct{}, 1)
	}
	for len(t.workers) < threads-1 {
		w := &worker{wake: make(chan struct{}, 1)}
		t.workers = append(t.workers, w)
		go t.loop(w, len(t.workers), t.cur.Load())
	}
	chunk := max(1, (n+threads*chunksPerWorker-1)/(threads*chunksPerWorker))
	if len(t.slab) == 0 {
		t.slab = make([]job, jobSlab)
	}
	j := &t.slab[0]
	t.slab = t.slab[1:]
	j.f, j.n, j.chunk, j.chunks, j.team = f, n, chunk, int64((n+chunk-1)/chunk), t
	t.cur.Store(j)
	for _, w := range t.workers[:threads-1] {
		if w.parked.Load() && w.parked.CompareAndSwap(true, false) {
			w.wake <- struct{}{}
		}
	}
	start := now()
	var mine int
	defer func() {
		if at, stall := j.wait(start, mine); stall {
			t.stalled(threads, at)
		}
		j.f = nil // a late worker finds no chunk left and never reads f
		t.mu.Unlock()
		if j.panicked.Load() {
			panic(j.panicValue)
		}
	}()
	mine = j.work(0)
}

// loop is the goroutine of worker i: it takes chunks of every job after
// last.
func (t *team) loop(w *worker, i int, last *job) {
	// Chunks read mapped model files: a fault there (the file shrank) is
	// a panic that chunk1 hands to the caller, not a crash (defect H1).
	debug.SetPanicOnFault(true)
	for {
		last = w.next(t, last)
		last.work(i)
	}
}

// work takes and runs chunks of j as worker i until none is left, and
// returns how many it ran.
func (j *job) work(i int) int {
	for ran := 0; ; ran++ {
		c := j.next.Add(1) - 1
		if c >= j.chunks {
			return ran
		}
		j.chunk1(i, int(c))
	}
}

// chunk1 runs chunk c as worker i, recording a panic for the caller.
func (j *job) chunk1(i, c int) {
	defer func() {
		if p := recover(); p != nil && j.panicked.CompareAndSwap(false, true) {
			j.panicValue = p
		}
		if j.done.Add(1) == j.chunks && j.waiting.Load() && j.waiting.CompareAndSwap(true, false) {
			j.team.wake <- struct{}{}
		}
	}()
	lo := c * j.chunk
	j.f(i, lo, min(lo+j.chunk, j.n))
}

// next returns the team's job after last: polled for spinFor, then parked
// until a caller wakes w.
func (w *worker) next(t *team, last *job) *job {
	start := time.Now()
	for i := 0; ; i++ {
		if j := t.cur.Load(); j != last {
			return j
		}
		if i%64 != 63 {
			continue
		}
		if time.Since(start) < spinFor {
			runtime.Gosched()
			continue
		}
		w.parked.Store(true)
		if j := t.cur.Load(); j != last {
			if !w.parked.CompareAndSwap(true, false) {
				<-w.wake // the caller saw the flag and is sending
			}
			return j
		}
		<-w.wake
		return t.cur.Load()
	}
}

// wait returns when every chunk of j has finished: polled for waitSpin,
// then parked until the last chunk's worker wakes the caller (on a loaded
// machine a worker may be off its processor for milliseconds). The caller
// started j at start and ran mine chunks; stall reports whether it waited
// longer than stallChunks of its own chunk times plus stallSlack, and at
// is when it stopped waiting (only set then).
func (j *job) wait(start time.Time, mine int) (at time.Time, stall bool) {
	if j.done.Load() == j.chunks {
		return at, false
	}
	begin := now()
	limit := stallSlack
	if mine > 0 {
		limit += stallChunks * begin.Sub(start) / time.Duration(mine)
	}
	for i := 0; j.done.Load() != j.chunks; i++ {
		if i%64 != 63 || now().Sub(begin) < waitSpin {
			continue
		}
		j.waiting.Store(true)
		if j.done.Load() == j.chunks && j.waiting.CompareAndSwap(true, false) {
			break
		}
		<-j.team.wake
		break
	}
	at = now()
	return at, mine > 0 && at.Sub(begin) > limit
}
