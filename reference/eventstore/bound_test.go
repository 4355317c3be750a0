package eventstore

import (
	"context"
	"fmt"
	"runtime"
	"testing"
)

var (
	progress = []byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}}`)
	result   = []byte(`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"done"}]}}`)
)

// call does what the go-sdk does for one POST carrying one tool call: it
// opens a stream for it, primes it, and appends a notification and the
// response.
func call(t testing.TB, s *Store, session, stream string) {
	t.Helper()
	ctx := WithRequests(context.Background(), 1)
	if err := s.Open(ctx, session, stream); err != nil {
		t.Fatal(err)
	}
	for _, d := range [][]byte{nil, progress, result} {
		if err := s.Append(ctx, session, stream, d); err != nil {
			t.Fatal(err)
		}
	}
}

// Finished POST streams whose events were evicted leave at most a
// tombstone, and tombstones are bounded too: many calls on one long-lived
// session keep the store within its bound.
func TestFinishedStreamsDropped(t *testing.T) {
	const maxBytes = 64 << 10
	s, _ := newFake(Options{MaxBytes: maxBytes})
	if err := s.Open(context.Background(), "s1", ""); err != nil {
		t.Fatal(err)
	}
	const calls = 20000
	for i := range calls {
		call(t, s, "s1", fmt.Sprintf("stream%06d", i))
	}
	st := s.Stats()
	if st.Streams+st.Tombstones > maxBytes/tombCost {
		t.Fatalf("after %d calls: %+v", calls, st)
	}
	if st.Cost > maxBytes {
		t.Fatalf("Cost %d over the bound %d", st.Cost, maxBytes)
	}
	checkInvariants(t, s)
	// The newest call can still be resumed; the oldest answers cleanly.
	last := fmt.Sprintf("stream%06d", calls-1)
	if got, err := collect(t, s, "s1", last, 0); err != nil || len(got) != 2 {
		t.Fatalf("resume of the newest call: %q, %v", got, err)
	}
	if err := s.Check("s1", "stream000000", 0); err != ErrUnknownStream {
		t.Fatalf("resume of the oldest call: %v, want ErrUnknownStream", err)
	}
}

// The heap the store keeps after many calls is about its bound, not about
// the number of calls.
func TestE2EHeapBoundedAfterManyCalls(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates for 100,000 calls")
	}
	const maxBytes = 1 << 20
	s, _ := newFake(Options{MaxBytes: maxBytes})
	if err := s.Open(context.Background(), "s1", ""); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range 100000 {
		call(t, s, "s1", fmt.Sprintf("%026d", i)) // as long as the go-sdk's stream ids
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(s)
	// The accounting is approximate; twice the bound leaves room for it and
	// for slices grown ahead of use, and is far below what 100,000 kept
	// streams take.
	grown := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("heap grew %d bytes for a %d-byte bound (%+v)", grown, maxBytes, s.Stats())
	if grown > 2*maxBytes {
		t.Fatal("more than twice the bound")
	}
}

// Priming events take no room: a client reconnecting its GET over and over
// leaves the store no bigger.
func TestPrimingEventsBounded(t *testing.T) {
	const maxBytes = 4 << 10
	s, _ := newFake(Options{MaxBytes: maxBytes})
	appendAll(t, s, "s1", "", "e0")
	for range 10000 {
		if _, err := s.Prime("s1", "", 0, true); err != nil {
			t.Fatal(err)
		}
		if err := s.Append(context.Background(), "s2", "p", nil); err != nil {
			t.Fatal(err)
		}
	}
	if st := s.Stats(); st.Events > 1 || st.Cost > maxBytes {
		t.Fatalf("after 10,000 priming events: %+v", st)
	}
	checkInvariants(t, s)
}

// Priming events that resume with a backlog keep a resume point each; those
// count against the bound and go oldest first like events.
func TestResumePointsBounded(t *testing.T) {
	const maxBytes = 4 << 10
	s, _ := newFake(Options{MaxBytes: maxBytes})
	appendAll(t, s, "s1", "", "e0")
	p := -1
	for range 1000 {
		q, err := s.Prime("s1", "", -1, false)
		if err != nil {
			break
		}
		p = q.Index
	}
	st := s.Stats()
	if st.Cost > maxBytes {
		t.Fatalf("after 1,000 resumes with a backlog: %+v", st)
	}
	// e0 went to make room: resuming from any of those priming events
	// cannot replay it.
	if _, err := s.Prime("s1", "", p, false); err != ErrEvicted {
		t.Fatalf("Prime(%d) = %v, want ErrEvicted", p, err)
	}
	checkInvariants(t, s)
}
