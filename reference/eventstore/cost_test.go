package eventstore

import (
	"context"
	"fmt"
	"runtime"
	"testing"
)

// heapPer returns the live heap fill adds, per item.
func heapPer(n int, fill func()) int64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fill()
	runtime.GC()
	runtime.ReadMemStats(&after)
	return (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / int64(n)
}

// The charges cover what each item really keeps on the heap, so that
// MaxBytes bounds memory. Ids are built before measuring: their bytes are
// charged but shared with the caller here.
func TestE2ECostsCoverHeap(t *testing.T) {
	if testing.Short() {
		t.Skip("measures the heap")
	}
	const n = 20000
	ctx := context.Background()
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("%026d", i)
	}
	data := []byte("01234567")
	for _, tc := range []struct {
		name   string
		charge int64
		fill   func(s *Store)
	}{
		{"event", eventCost + int64(len(data)), func(s *Store) {
			for range n {
				s.Append(ctx, "s", "", data)
			}
		}},
		{"resume point", resumeCost, func(s *Store) {
			for range n {
				s.Prime("s", "", 0, false)
			}
		}},
		{"stream", idCost(streamCost, ids[0]), func(s *Store) {
			for _, id := range ids {
				s.Open(WithRequests(ctx, 1), "s", id)
			}
		}},
		{"tombstone", idCost(tombCost, ids[0]), func(s *Store) {
			for _, id := range ids {
				s.Open(WithRequests(ctx, 1), "s", id)
				s.mu.Lock()
				s.popOldestLocked(0) // the opening: the stream is dropped
				s.mu.Unlock()
			}
		}},
		{"session", idCost(sessionCost, ids[0]) + streamCost, func(s *Store) {
			for _, id := range ids {
				s.Open(ctx, id, "")
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := New(Options{})
			appendAll(t, s, "s", "", "e0", "e1") // a backlog for the resume points
			per := heapPer(n, func() { tc.fill(s) })
			runtime.KeepAlive(s)
			t.Logf("%s: %d bytes on the heap, charged %d", tc.name, per, tc.charge)
			if per > tc.charge {
				t.Errorf("%s keeps %d bytes, charged only %d", tc.name, per, tc.charge)
			}
		})
	}
}
