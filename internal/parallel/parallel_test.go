package parallel

import (
	"fmt"
	"sync/atomic"
	"testing"
)

// TestRangeCoversOnce: every index is visited exactly once, chunks are
// contiguous and workers stay below threads, for small and large n.
func TestRangeCoversOnce(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 7, 8, 100, 1001} {
		for _, threads := range []int{-1, 0, 1, 2, 3, 4, 16} {
			seen := make([]int32, n)
			var maxWorker atomic.Int32
			Range(n, threads, func(w, lo, hi int) {
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
