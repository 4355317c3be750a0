package eventstore

import "slices"

// queue is a FIFO slice whose popped prefix is released once it outweighs
// the live part, so memory stays proportional to what is retained rather
// than to the longest the queue has ever been.
// The zero queue is empty and ready to use.
type queue[T any] struct {
	buf  []T
	head int // buf[:head] has been popped and zeroed
}

// compactMin keeps small queues from reallocating on nearly every pop.
const compactMin = 32

func (q *queue[T]) len() int { return len(q.buf) - q.head }

func (q *queue[T]) push(v T) { q.buf = append(q.buf, v) }

// front returns the oldest element. The queue must not be empty.
func (q *queue[T]) front() T { return q.buf[q.head] }

// at returns the i'th element from the front.
func (q *queue[T]) at(i int) T { return q.buf[q.head+i] }

// pop removes the oldest element. The queue must not be empty.
func (q *queue[T]) pop() {
	var zero T
	q.buf[q.head] = zero // release what it references
	q.head++
	switch live := q.len(); {
	case live == 0:
		*q = queue[T]{}
	case q.head >= compactMin && q.head >= live:
		// Copying live elements is paid for by the head pops since the last
		// compaction, so pop stays amortized O(1).
		q.buf = slices.Clone(q.buf[q.head:])
		q.head = 0
	}
}

// copyFrom returns a copy of the elements from the i'th onwards, or nil if
// there are none.
func (q *queue[T]) copyFrom(i int) []T {
	if q.head+i >= len(q.buf) {
		return nil
	}
	return slices.Clone(q.buf[q.head+i:])
}

// filter keeps only the elements for which keep returns true, moving them
// to a new buffer so that the old one, however long, can be freed.
func (q *queue[T]) filter(keep func(T) bool) {
	live := slices.DeleteFunc(q.buf[q.head:], func(v T) bool { return !keep(v) })
	if len(live) == 0 {
		*q = queue[T]{}
		return
	}
	*q = queue[T]{buf: slices.Clone(live)}
}
