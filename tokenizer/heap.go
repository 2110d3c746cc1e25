package tokenizer

// heapItem orders the entries of a binaryHeap: a.before(b) means a leaves the
// heap first.
type heapItem[T any] interface{ before(T) bool }

// binaryHeap is a binary heap of merge candidates (SentencePiece bigrams by
// score, BPE bigrams by rank). It is typed rather than container/heap so that
// pushing does not box every entry; ties leave in the order the items'
// before methods define (leftmost first, as llama.cpp's comparators do).
type binaryHeap[T heapItem[T]] []T

func (h *binaryHeap[T]) push(x T) {
	*h = append(*h, x)
	q := *h
	for i := len(q) - 1; i > 0; {
		p := (i - 1) / 2
		if !q[i].before(q[p]) {
			break
		}
		q[i], q[p] = q[p], q[i]
		i = p
	}
}

func (h *binaryHeap[T]) pop() T {
	q := *h
	top := q[0]
	last := len(q) - 1
	q[0] = q[last]
	q = q[:last]
	for i := 0; ; {
		c := 2*i + 1
		if c >= len(q) {
			break
		}
		if r := c + 1; r < len(q) && q[r].before(q[c]) {
			c = r
		}
		if !q[c].before(q[i]) {
			break
		}
		q[i], q[c] = q[c], q[i]
		i = c
	}
	*h = q
	return top
}
