package eventstore

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"
)

// evictAll pops every record, as byte pressure or age would.
func evictAll(s *Store) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.order.len() > 0 {
		s.popOldestLocked(0)
	}
}

// A finished stream whose events are gone answers resumes as before from
// its tombstone, and its numbering goes on if an event comes after all;
// once the tombstone goes too, the stream is unknown.
func TestTombstone(t *testing.T) {
	s, _ := newFake(Options{})
	call(t, s, "s1", "p") // priming 0, progress 1, result 2
	s.mu.Lock()
	s.popOldestLocked(0) // the opening
	s.popOldestLocked(0) // progress
	s.popOldestLocked(0) // result: finished and empty
	s.mu.Unlock()
	if st := stats(s); st != (Stats{Sessions: 1, Tombstones: 1}) {
		t.Fatalf("Stats = %+v", st)
	}
	checkInvariants(t, s)
	for _, tt := range []struct {
		index int
		want  error
	}{{-1, ErrEvicted}, {0, ErrEvicted}, {1, ErrEvicted}, {2, nil}, {3, ErrFutureIndex}} {
		if err := s.Check("s1", "p", tt.index); err != tt.want {
			t.Errorf("Check(%d) = %v, want %v", tt.index, err, tt.want)
		}
	}
	if got, err := collect(t, s, "s1", "p", 2); err != nil || got != nil {
		t.Fatalf("After(2) = %q, %v; want nothing", got, err)
	}
	if i, ok := s.LastIndex("s1", "p"); !ok || i != 2 {
		t.Fatalf("LastIndex = %d, %v; want 2", i, ok)
	}

	appendAll(t, s, "s1", "p", "late")
	if got, err := collect(t, s, "s1", "p", 2); err != nil || !slices.Equal(got, []string{"late"}) {
		t.Fatalf("After(2) = %q, %v; want [late] with index 3", got, err)
	}
	checkInvariants(t, s)

	evictAll(s) // the event, then the tombstone it leaves
	if st := stats(s); st != (Stats{Sessions: 1}) {
		t.Fatalf("Stats = %+v", st)
	}
	if err := s.Check("s1", "p", 2); err != ErrUnknownStream {
		t.Fatalf("Check after the tombstone went: %v, want ErrUnknownStream", err)
	}
	checkInvariants(t, s)
}

// A stream that is opened and never appended to (a request the go-sdk
// refuses after Open, such as a duplicate id in flight) goes with its
// opening; if its request appends after all, it continues from index 0.
func TestOpenedStreamNeverAppended(t *testing.T) {
	const maxBytes = 8 << 10
	s, _ := newFake(Options{MaxBytes: maxBytes})
	ctx := WithRequests(context.Background(), 1)
	for i := range 1000 {
		if err := s.Open(ctx, "s1", string(rune('a'+i%26))+string(rune('a'+i/26))); err != nil {
			t.Fatal(err)
		}
	}
	if st := s.Stats(); st.Cost > maxBytes {
		t.Fatalf("after 1,000 opened streams: %+v", st)
	}
	checkInvariants(t, s)

	evictAll(s)
	if err := s.Open(ctx, "s1", "late"); err != nil {
		t.Fatal(err)
	}
	evictAll(s) // the opening: a tombstone that remembers the request
	appendAll(t, s, "s1", "late", "", "progress")
	if i, _ := s.LastIndex("s1", "late"); i != 1 {
		t.Fatalf("LastIndex = %d, want 1", i)
	}
	evictAll(s) // the progress: the request is still running, so the stream stays
	if i, ok := s.LastIndex("s1", "late"); !ok || i != 1 {
		t.Fatalf("LastIndex = %d, %v; want 1, true", i, ok)
	}
	if err := s.Append(ctx, "s1", "late", result); err != nil {
		t.Fatal(err)
	}
	if got, err := collect(t, s, "s1", "late", 1); err != nil || !slices.Equal(got, []string{string(result)}) {
		t.Fatalf("After(1) = %q, %v", got, err)
	}
	checkInvariants(t, s)
}

// A batch's stream is finished after its last response, not its first.
func TestBatchFinishesAfterLastResponse(t *testing.T) {
	s, _ := newFake(Options{})
	ctx := WithRequests(context.Background(), 2)
	if err := s.Open(ctx, "s1", "b"); err != nil {
		t.Fatal(err)
	}
	appendAll(t, s, "s1", "b", "", string(result))
	evictAll(s)
	if st := stats(s); st.Streams != 1 || st.Tombstones != 0 {
		t.Fatalf("one response of two: %+v, want the stream kept", st)
	}
	appendAll(t, s, "s1", "b", string(progress), string(result))
	evictAll(s)
	if st := stats(s); st.Streams != 0 {
		t.Fatalf("both responses: %+v, want the stream dropped", st)
	}
	checkInvariants(t, s)
}

// Streams opened without WithRequests, the standalone one included, are
// never dropped: nothing says they are finished.
func TestUnmarkedStreamsKept(t *testing.T) {
	s, fc := newFake(Options{MaxAge: time.Minute})
	if err := s.Open(context.Background(), "s1", ""); err != nil {
		t.Fatal(err)
	}
	if err := s.Open(WithRequests(context.Background(), 1), "s1", ""); err != nil {
		t.Fatal(err)
	}
	appendAll(t, s, "s1", "p", "", string(result))
	fc.Step(2 * time.Minute)
	s.Sweep()
	if st := stats(s); st != (Stats{Sessions: 1, Streams: 2}) {
		t.Fatalf("Stats = %+v", st)
	}
	if _, err := collect(t, s, "s1", "p", 0); !errors.Is(err, ErrEvicted) {
		t.Fatalf("After(0): %v, want ErrEvicted", err)
	}
	checkInvariants(t, s)
}
