package parallel

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"
)

// TestRangeCoversOnce: every index is visited exactly once, chunks are
// contiguous and workers stay below threads, for small and large n, with
// Range and with RangeHot.
func TestRangeCoversOnce(t *testing.T) {
	for _, rangeFn := range []func(int, int, func(int, int, int)){Range, RangeHot} {
		coversOnce(t, rangeFn)
	}
}

func coversOnce(t *testing.T, rangeFn func(int, int, func(int, int, int))) {
	for _, n := range []int{0, 1, 2, 3, 7, 8, 100, 1001} {
		for _, threads := range []int{-1, 0, 1, 2, 3, 4, 16} {
			seen := make([]int32, n)
			var maxWorker atomic.Int32
			rangeFn(n, threads, func(w, lo, hi int) {
				if lo >= hi {
					t.Errorf("n %d threads %d: empty chunk [%d, %d)", n, threads, lo, hi)
				}
				for {
					cur := maxWorker.Load()
					if int32(w) <= cur || maxWorker.CompareAndSwap(cur, int32(w)) {
						break
					}
				}
				for i := lo; i < hi; i++ {
					atomic.AddInt32(&seen[i], 1)
				}
			})
			for i, c := range seen {
				if c != 1 {
					t.Fatalf("n %d threads %d: index %d visited %d times", n, threads, i, c)
				}
			}
			if lim := max(threads, 1); int(maxWorker.Load()) >= lim {
				t.Fatalf("n %d threads %d: worker %d", n, threads, maxWorker.Load())
			}
		}
	}
}

func ExampleFor() {
	squares := make([]int, 10)
	For(len(squares), 4, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			squares[i] = i * i
		}
	})
	fmt.Println(squares)
	// Output: [0 1 4 9 16 25 36 49 64 81]
}

// TestRangeNestedAndConcurrent: RangeHot inside RangeHot and RangeHot from several
// goroutines at once (the team busy) still visit every index once.
func TestRangeNestedAndConcurrent(t *testing.T) {
	const n = 64
	var seen [n][n]int32
	done := make(chan struct{})
	for g := 0; g < 4; g++ {
		go func() {
			defer func() { done <- struct{}{} }()
			for rep := 0; rep < 50; rep++ {
				ForHot(n, 2, func(lo, hi int) {
					for i := lo; i < hi; i++ {
						ForHot(n, 3, func(lo2, hi2 int) {
							for j := lo2; j < hi2; j++ {
								atomic.AddInt32(&seen[i][j], 1)
							}
						})
					}
				})
			}
		}()
	}
	for range 4 {
		<-done
	}
	for i := range seen {
		for j, c := range seen[i] {
			if c != 4*50 {
				t.Fatalf("index (%d, %d) visited %d times, want %d", i, j, c, 4*50)
			}
		}
	}
}

// TestRangePanic: a panic in any chunk of RangeHot reaches the caller, and it works
// afterwards.
func TestRangePanic(t *testing.T) {
	for _, bad := range []int{0, 99} {
		func() {
			defer func() {
				if p := recover(); p != fmt.Sprint("chunk ", bad) {
					t.Errorf("panic in the chunk of %d: recovered %v", bad, p)
				}
			}()
			ForHot(100, 2, func(lo, hi int) {
				if lo <= bad && bad < hi {
					panic(fmt.Sprint("chunk ", bad))
				}
			})
		}()
	}
	var sum atomic.Int64
	ForHot(100, 2, func(lo, hi int) { sum.Add(int64(hi - lo)) })
	if sum.Load() != 100 {
		t.Fatalf("after the panics: %d indices", sum.Load())
	}
}

// TestRangeAfterIdle: a parked team wakes for the next call.
func TestRangeAfterIdle(t *testing.T) {
	for rep := 0; rep < 3; rep++ {
		time.Sleep(2 * spinFor)
		var sum atomic.Int64
		ForHot(10, 2, func(lo, hi int) { sum.Add(int64(hi - lo)) })
		if sum.Load() != 10 {
			t.Fatalf("rep %d: %d indices", rep, sum.Load())
		}
	}
}

// stallingCall runs one RangeHot call of two threads in which a worker
// other than the caller claims a chunk and then sleeps for sleep (as a
// worker descheduled by a busy machine would); it reports whether a worker
// other than the caller ran.
func stallingCall(sleep time.Duration) (helped bool) {
	var started atomic.Bool
	RangeHot(64, 2, func(w, lo, hi int) {
		if w != 0 {
			helped = true
			if started.CompareAndSwap(false, true) {
				time.Sleep(sleep)
			}
			return
		}
		for deadline := time.Now().Add(50 * time.Millisecond); !started.Load() && time.Now().Before(deadline); {
		}
	})
	return helped
}

// resetTeam clears the team's narrowing state (earlier tests' calls may
// have recorded stalls) and restores its clock after the test.
func resetTeam(t *testing.T) {
	reset := func() {
		shared.mu.Lock()
		shared.limit, shared.until, shared.narrowFor = 0, time.Time{}, 0
		shared.stalls = [stallBurst]time.Time{}
		shared.mu.Unlock()
		now = time.Now
	}
	reset()
	t.Cleanup(reset)
}

// TestTeamRecordsStall: a call in which a worker sleeps in the middle of
// its chunk records a stall, and one stall leaves the team at full width.
func TestTeamRecordsStall(t *testing.T) {
	resetTeam(t)
	for try := 0; ; try++ {
		if stallingCall(20 * time.Millisecond) {
			break
		}
		if try == 5 {
			t.Skip("the worker never took a chunk (the machine is too busy for this test)")
		}
	}
	shared.mu.Lock()
	last, narrowed := shared.stalls[stallBurst-1], shared.limit > 0
	w := shared.width(2)
	shared.mu.Unlock()
	if narrowed {
		t.Skip("the test's own stall completed a burst of the machine's (too busy for this test)")
	}
	if last.IsZero() {
		t.Fatal("a 20 ms sleep in a worker's chunk was not recorded as a stall")
	}
	if w != 2 {
		t.Fatalf("after one stall: width %d, want 2", w)
	}
}

// TestTeamNarrowsAfterBurst: stallBurst stalls within stallWindow narrow
// the team to the caller alone for narrowMin, after which it is two wide
// again; stalls further apart do not; probeBurst stalls within narrowAgain
// of widening double the narrowing, up to narrowMax, and a later burst
// starts again from narrowMin. The clock is the test's.
func TestTeamNarrowsAfterBurst(t *testing.T) {
	resetTeam(t)
	t0 := time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC)
	clock := t0
	now = func() time.Time { return clock }
	width := func(at time.Time) int {
		clock = at
		shared.mu.Lock()
		defer shared.mu.Unlock()
		return shared.width(2)
	}
	stall := func(at time.Time) {
		shared.mu.Lock()
		shared.stalled(2, at)
		shared.mu.Unlock()
	}
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	for i := range stallBurst {
		stall(t0.Add(ms(300 * i)))
	}
	if w := width(t0.Add(ms(300*stallBurst - 299))); w != 2 {
		t.Fatalf("stalls 300 ms apart: width %d, want 2", w)
	}
	t1 := t0.Add(10 * time.Second)
	for i := range stallBurst {
		stall(t1.Add(ms(100 * i)))
	}
	end := t1.Add(ms(100*(stallBurst-1)) + narrowMin)
	if w := width(end.Add(-time.Millisecond)); w != 1 {
		t.Fatalf("during the narrowing: width %d, want 1", w)
	}
	for range 20 {
		var others atomic.Int32
		RangeHot(1000, 2, func(w, lo, hi int) {
			if w != 0 {
				others.Add(1)
			}
		})
		if others.Load() != 0 {
			t.Fatal("a team narrowed to one gave chunks to a worker")
		}
	}
	if w := width(end.Add(time.Millisecond)); w != 2 {
		t.Fatalf("after the narrowing: width %d, want 2", w)
	}
	want := narrowMin
	for round := 0; round < 8; round++ {
		at := end.Add(ms(10))
		stall(at)
		if shared.narrowFor != want {
			t.Fatalf("burst %d: one stall while probing narrowed the team", round)
		}
		for range probeBurst - 1 {
			stall(at)
		}
		want = min(2*want, narrowMax)
		if shared.narrowFor != want {
			t.Fatalf("burst %d right after widening: narrowed for %v, want %v", round, shared.narrowFor, want)
		}
		end = at.Add(want)
	}
	at := end.Add(narrowAgain + time.Second)
	for range stallBurst {
		stall(at)
	}
	if shared.narrowFor != narrowMin {
		t.Fatalf("burst long after widening: narrowed for %v, want %v", shared.narrowFor, narrowMin)
	}
}

// TestTeamNarrowingKeepsCoverage: while narrowed, calls still visit every
// index once.
func TestTeamNarrowingKeepsCoverage(t *testing.T) {
	resetTeam(t)
	shared.mu.Lock()
	shared.limit, shared.until = 1, time.Now().Add(time.Hour)
	shared.mu.Unlock()
	coversOnce(t, RangeHot)
}

// BenchmarkRangeHotHandoff: RangeHot calls with next to no work, one
// after another as a token's products come: the cost of one hand-off to
// the team and back (ns/op), the part of the per-token time that is not
// the kernels'.
func BenchmarkRangeHotHandoff(b *testing.B) {
	var sink atomic.Int64
	for _, threads := range []int{1, 2} {
		b.Run(fmt.Sprintf("threads=%d", threads), func(b *testing.B) {
			for b.Loop() {
				RangeHot(64, threads, func(_, lo, hi int) { sink.Add(int64(hi - lo)) })
			}
		})
	}
}
