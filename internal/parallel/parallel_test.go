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
