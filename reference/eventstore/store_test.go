package eventstore

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
)

// eventStore mirrors the method set of the go-sdk's mcp.EventStore, so the
// signatures are checked here without importing the SDK.
type eventStore interface {
	Open(_ context.Context, sessionID, streamID string) error
	Append(_ context.Context, sessionID, streamID string, data []byte) error
	After(_ context.Context, sessionID, streamID string, index int) iter.Seq2[[]byte, error]
	SessionClosed(_ context.Context, sessionID string) error
}

var _ eventStore = (*Store)(nil)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func newFake(opts Options) (*Store, *clocktesting.FakeClock) {
	fc := clocktesting.NewFakeClock(t0)
	opts.Clock = fc
	return New(opts), fc
}

// collect drains After and checks that an error, if any, came alone.
func collect(t *testing.T, s *Store, session, stream string, index int) ([]string, error) {
	t.Helper()
	var got []string
	var errs []error
	for d, err := range s.After(context.Background(), session, stream, index) {
		if err != nil {
			errs = append(errs, err)
			continue
		}
		got = append(got, string(d))
	}
	if len(errs) > 0 {
		if len(errs) > 1 || len(got) > 0 {
			t.Fatalf("After(%q, %q, %d): got data %q and errors %v; want a single error alone", session, stream, index, got, errs)
		}
		return nil, errs[0]
	}
	return got, nil
}

func appendAll(t *testing.T, s *Store, session, stream string, data ...string) {
	t.Helper()
	for _, d := range data {
		var b []byte
		if d != "" {
			b = []byte(d)
		}
		if err := s.Append(context.Background(), session, stream, b); err != nil {
			t.Fatal(err)
		}
	}
}

// stats is s.Stats without Cost, which checkInvariants checks.
func stats(s *Store) Stats {
	st := s.Stats()
	st.Cost = 0
	return st
}

// checkInvariants verifies the counters and the cost against the data, that
// the append-order records cover exactly what can be evicted, and that the
// store is within its bound unless nothing is left to evict.
func checkInvariants(t *testing.T, s *Store) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	var streams, tombs, events int
	var nbytes, cost, fixed int64
	refs := map[*stream]int{}
	next := map[*stream]int{} // position in events of the next event record
	live := map[*tomb]bool{}
	for id, sess := range s.sessions {
		cost += idCost(sessionCost, id)
		fixed += idCost(sessionCost, id)
		for sid, st := range sess.streams {
			if st.dead || st.sess != sess || st.id != sid {
				t.Fatalf("stream %q of %q: dead %v, wrong owner or id", sid, id, st.dead)
			}
			if st.droppable() {
				t.Fatalf("stream %q of %q can be dropped but was not", sid, id)
			}
			if _, ok := sess.tombs[sid]; ok {
				t.Fatalf("stream %q of %q is also a tombstone", sid, id)
			}
			streams++
			cost += idCost(streamCost, sid)
			if sid == "" {
				fixed += streamCost
			}
			prev := st.floor
			for i := range st.events.len() {
				ev := st.events.at(i)
				if len(ev.Data) == 0 || ev.Index <= prev || ev.Index > st.last {
					t.Fatalf("stream %q: event %d at %d after %d (last %d)", sid, i, ev.Index, prev, st.last)
				}
				prev = ev.Index
				nbytes += int64(len(ev.Data))
				cost += eventCost + int64(len(ev.Data))
			}
			events += st.events.len()
			cost += int64(len(st.resumes)) * resumeCost
			refs[st] = 0
			next[st] = 0
		}
		for sid, tb := range sess.tombs {
			if tb.dead || tb.sess != sess || tb.id != sid {
				t.Fatalf("tombstone %q of %q: dead %v, wrong owner or id", sid, id, tb.dead)
			}
			tombs++
			cost += idCost(tombCost, sid)
			live[tb] = false
		}
		if sess.tombs != nil && len(sess.tombs) == 0 {
			t.Fatalf("session %q keeps an empty tombstone map", id)
		}
	}
	if streams != s.streams || tombs != s.tombs || events != s.events || nbytes != s.bytes || cost != s.cost || fixed != s.fixed {
		t.Fatalf("counters streams=%d tombs=%d events=%d bytes=%d cost=%d fixed=%d; data has %d, %d, %d, %d, %d, %d",
			s.streams, s.tombs, s.events, s.bytes, s.cost, s.fixed, streams, tombs, events, nbytes, cost, fixed)
	}
	stale := 0
	var prev time.Duration
	for i := range s.order.len() {
		r := s.order.at(i)
		if r.at < prev {
			t.Fatalf("record %d out of time order", i)
		}
		prev = r.at
		if r.stale() {
			stale++
			continue
		}
		if r.kind() == recTomb {
			seen, ok := live[r.tb]
			if !ok || seen {
				t.Fatalf("record %d: tombstone not held, or recorded twice", i)
			}
			live[r.tb] = true
			continue
		}
		n, ok := refs[r.st]
		if !ok {
			t.Fatalf("record %d points at a stream no session holds", i)
		}
		refs[r.st] = n + 1
		switch r.kind() {
		case recEvent:
			if r.index() != r.st.events.at(next[r.st]).Index {
				t.Fatalf("record %d has index %d, want %d", i, r.index(), r.st.events.at(next[r.st]).Index)
			}
			next[r.st]++
		case recResume:
			if _, ok := r.st.resumes[r.index()]; !ok {
				t.Fatalf("record %d: no resume point %d", i, r.index())
			}
		}
	}
	if stale != s.stale {
		t.Fatalf("stale = %d, counted %d", s.stale, stale)
	}
	for st, n := range refs {
		if n != st.refs || next[st] != st.events.len() {
			t.Fatalf("stream %q: %d records for refs %d, %d of %d events recorded", st.id, n, st.refs, next[st], st.events.len())
		}
	}
	for _, seen := range live {
		if !seen {
			t.Fatal("a tombstone has no record")
		}
	}
	if s.maxBytes > 0 && s.cost > s.maxBytes && s.order.len() > stale {
		t.Fatalf("cost %d over %d with records left to evict", s.cost, s.maxBytes)
	}
}

func TestOpenIdempotent(t *testing.T) {
	ctx := context.Background()
	s, _ := newFake(Options{})
	if err := s.Open(ctx, "s1", "p1"); err != nil {
		t.Fatal(err)
	}
	if i, ok := s.LastIndex("s1", "p1"); !ok || i != -1 {
		t.Fatalf("LastIndex after Open = %d, %v; want -1, true", i, ok)
	}
	appendAll(t, s, "s1", "p1", "a", "b")
	if err := s.Open(ctx, "s1", "p1"); err != nil {
		t.Fatal(err)
	}
	appendAll(t, s, "s1", "p1", "c")
	if i, _ := s.LastIndex("s1", "p1"); i != 2 {
		t.Fatalf("LastIndex = %d, want 2", i)
	}
	got, err := collect(t, s, "s1", "p1", -1)
	if err != nil || !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("After(-1) = %q, %v", got, err)
	}
	if st := stats(s); st != (Stats{Sessions: 1, Streams: 1, Events: 3, Bytes: 3}) {
		t.Fatalf("Stats = %+v", st)
	}
	checkInvariants(t, s)
}

func TestAppendWithoutOpen(t *testing.T) {
	s, _ := newFake(Options{})
	appendAll(t, s, "s1", "p1", "a")
	if i, ok := s.LastIndex("s1", "p1"); !ok || i != 0 {
		t.Fatalf("LastIndex = %d, %v; want 0, true", i, ok)
	}
}

func TestAfter(t *testing.T) {
	s, _ := newFake(Options{})
	appendAll(t, s, "s1", "", "e0", "e1", "e2", "e3", "e4")
	tests := []struct {
		index int
		want  []string
	}{
		{-1, []string{"e0", "e1", "e2", "e3", "e4"}},
		{-7, []string{"e0", "e1", "e2", "e3", "e4"}}, // below -1 reads as -1
		{0, []string{"e1", "e2", "e3", "e4"}},
		{2, []string{"e3", "e4"}},
		{3, []string{"e4"}},
		{4, nil},  // last
		{5, nil},  // just beyond last
		{99, nil}, // far beyond last
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.index), func(t *testing.T) {
			got, err := collect(t, s, "s1", "", tt.index)
			if err != nil || !slices.Equal(got, tt.want) {
				t.Fatalf("After(%d) = %q, %v; want %q", tt.index, got, err, tt.want)
			}
		})
	}
}

func TestAfterStopsEarly(t *testing.T) {
	s, _ := newFake(Options{})
	appendAll(t, s, "s1", "p", "a", "b", "c")
	var got []string
	for d, err := range s.After(context.Background(), "s1", "p", -1) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(d))
		if len(got) == 2 {
			break
		}
	}
	if !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("got %q", got)
	}
}

// The iterator must not hold the lock while yielding, and it replays the
// events present when iteration started.
func TestAfterDoesNotHoldLock(t *testing.T) {
	s, _ := newFake(Options{})
	appendAll(t, s, "s1", "p", "a", "b")
	it := s.After(context.Background(), "s1", "p", -1)
	appendAll(t, s, "s1", "p", "c") // before iteration starts: included
	var got []string
	for d, err := range it {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(d))
		appendAll(t, s, "s1", "p", "x") // would deadlock if the lock were held
		_ = s.Stats()
	}
	if !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("got %q", got)
	}
}

// TestAppendKeepsHandedOverData: with HandedOver the store keeps the slice
// it was given (no copy), so an Append does not allocate for its data.
func TestAppendKeepsHandedOverData(t *testing.T) {
	s, _ := newFake(Options{HandedOver: true})
	data := []byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{}}`)
	if err := s.Append(context.Background(), "s1", "p", data); err != nil {
		t.Fatal(err)
	}
	var kept []byte
	for d, err := range s.After(context.Background(), "s1", "p", -1) {
		if err != nil {
			t.Fatal(err)
		}
		kept = d
	}
	if len(kept) == 0 || &kept[0] != &data[0] {
		t.Fatal("the store copied data it was handed over")
	}
}

func TestAppendCopiesData(t *testing.T) {
	s, _ := newFake(Options{})
	buf := []byte("first")
	if err := s.Append(context.Background(), "s1", "p", buf); err != nil {
		t.Fatal(err)
	}
	copy(buf, "XXXXX")
	got, err := collect(t, s, "s1", "p", -1)
	if err != nil || !slices.Equal(got, []string{"first"}) {
		t.Fatalf("After = %q, %v", got, err)
	}
}

// Events without data take an index and nothing else: they are not
// stored, counted or replayed.
func TestPrimingEvent(t *testing.T) {
	ctx := context.Background()
	s, _ := newFake(Options{})
	for _, data := range [][]byte{nil, {}} {
		if err := s.Append(ctx, "s1", "p", data); err != nil {
			t.Fatal(err)
		}
	}
	appendAll(t, s, "s1", "p", "msg")
	if i, _ := s.LastIndex("s1", "p"); i != 2 {
		t.Fatalf("LastIndex = %d, want 2", i)
	}
	if st := stats(s); st != (Stats{Sessions: 1, Streams: 1, Events: 1, Bytes: 3}) {
		t.Fatalf("Stats = %+v", st)
	}
	for _, index := range []int{-1, 0, 1} {
		if got, err := collect(t, s, "s1", "p", index); err != nil || !slices.Equal(got, []string{"msg"}) {
			t.Fatalf("After(%d) = %q, %v", index, got, err)
		}
	}
	checkInvariants(t, s)
}

func TestUnknown(t *testing.T) {
	s, _ := newFake(Options{})
	appendAll(t, s, "s1", "p", "a")
	tests := []struct{ session, stream string }{
		{"nope", "p"},
		{"s1", "nope"},
		{"s1", ""}, // the standalone stream exists only once opened
	}
	for _, tt := range tests {
		t.Run(tt.session+"/"+tt.stream, func(t *testing.T) {
			if _, err := collect(t, s, tt.session, tt.stream, -1); !errors.Is(err, ErrUnknownStream) {
				t.Errorf("After: %v, want ErrUnknownStream", err)
			}
			if err := s.Check(tt.session, tt.stream, 0); err != ErrUnknownStream {
				t.Errorf("Check: %v, want ErrUnknownStream", err)
			}
			if _, ok := s.LastIndex(tt.session, tt.stream); ok {
				t.Error("LastIndex ok for unknown stream")
			}
		})
	}
}

func TestSweepAge(t *testing.T) {
	s, fc := newFake(Options{MaxAge: 10 * time.Minute})
	appendAll(t, s, "s1", "p", "e0", "e1")
	fc.Step(6 * time.Minute)
	appendAll(t, s, "s1", "p", "e2", "e3")
	appendAll(t, s, "s2", "q", "f0")

	fc.Step(4 * time.Minute) // e0, e1 are exactly MaxAge old: kept
	s.Sweep()
	if st := s.Stats(); st.Events != 5 {
		t.Fatalf("after sweep at MaxAge: %+v, want 5 events", st)
	}

	fc.Step(time.Nanosecond) // now older than MaxAge
	s.Sweep()
	if st := stats(s); st != (Stats{Sessions: 2, Streams: 2, Events: 3, Bytes: 6}) {
		t.Fatalf("Stats = %+v", st)
	}
	checkInvariants(t, s)
	for _, idx := range []int{-1, 0} { // events 0 and/or 1 are wanted but gone
		if _, err := collect(t, s, "s1", "p", idx); !errors.Is(err, ErrEvicted) {
			t.Errorf("After(%d): %v, want ErrEvicted", idx, err)
		}
	}
	got, err := collect(t, s, "s1", "p", 1)
	if err != nil || !slices.Equal(got, []string{"e2", "e3"}) {
		t.Fatalf("After(1) = %q, %v", got, err)
	}

	fc.Step(6 * time.Minute)
	s.Sweep()
	if st := stats(s); st != (Stats{Sessions: 2, Streams: 2}) {
		t.Fatalf("Stats after full sweep = %+v", st)
	}
	checkInvariants(t, s)
	// A fully evicted stream stays known and keeps its numbering.
	if i, ok := s.LastIndex("s1", "p"); !ok || i != 3 {
		t.Fatalf("LastIndex = %d, %v; want 3, true", i, ok)
	}
	if _, err := collect(t, s, "s1", "p", 2); !errors.Is(err, ErrEvicted) {
		t.Errorf("After(2): %v, want ErrEvicted", err)
	}
	if got, err := collect(t, s, "s1", "p", 3); err != nil || got != nil {
		t.Errorf("After(3) = %q, %v; want nothing", got, err)
	}
	appendAll(t, s, "s1", "p", "e4")
	if got, err := collect(t, s, "s1", "p", 3); err != nil || !slices.Equal(got, []string{"e4"}) {
		t.Errorf("After(3) = %q, %v; want [e4]", got, err)
	}
	if i, _ := s.LastIndex("s1", "p"); i != 4 {
		t.Errorf("LastIndex = %d, want 4", i)
	}
}

func TestSweepWithoutMaxAge(t *testing.T) {
	s, fc := newFake(Options{})
	appendAll(t, s, "s1", "p", "a")
	fc.Step(1000 * time.Hour)
	s.Sweep()
	if st := s.Stats(); st.Events != 1 {
		t.Fatalf("Stats = %+v, want the event kept", st)
	}
}

func TestMaxBytesOldestFirst(t *testing.T) {
	// Two sessions and three streams, plus room for 3 events and 10 bytes.
	fixed := 2*idCost(sessionCost, "A") + 3*idCost(streamCost, "x")
	s, fc := newFake(Options{MaxBytes: fixed + 3*eventCost + 10})
	step := func(session, stream, data string) {
		t.Helper()
		fc.Step(time.Second)
		appendAll(t, s, session, stream, data)
		checkInvariants(t, s)
	}
	step("A", "x", "aaaa") // A/x#0
	step("B", "x", "bbb")  // B/x#0
	step("A", "y", "cc")   // A/y#0, 9 bytes
	if st := s.Stats(); st.Events != 3 || st.Bytes != 9 {
		t.Fatalf("Stats = %+v", st)
	}
	step("B", "x", "dd") // 11 bytes: evicts A/x#0 only
	if st := s.Stats(); st.Events != 3 || st.Bytes != 7 {
		t.Fatalf("Stats = %+v", st)
	}
	if _, err := collect(t, s, "A", "x", -1); !errors.Is(err, ErrEvicted) {
		t.Errorf("A/x: %v, want ErrEvicted", err)
	}
	if got, err := collect(t, s, "B", "x", -1); err != nil || !slices.Equal(got, []string{"bbb", "dd"}) {
		t.Errorf("B/x = %q, %v", got, err)
	}
	step("A", "x", "eeeeeee") // 14 bytes: evicts B/x#0 then A/y#0
	if st := s.Stats(); st.Events != 2 || st.Bytes != 9 {
		t.Fatalf("Stats = %+v", st)
	}
	if _, err := collect(t, s, "B", "x", -1); !errors.Is(err, ErrEvicted) {
		t.Errorf("B/x: %v, want ErrEvicted", err)
	}
	if got, err := collect(t, s, "B", "x", 0); err != nil || !slices.Equal(got, []string{"dd"}) {
		t.Errorf("B/x after 0 = %q, %v", got, err)
	}
	if got, err := collect(t, s, "A", "y", 0); err != nil || got != nil {
		t.Errorf("A/y after 0 = %q, %v; want nothing", got, err)
	}
	if got, err := collect(t, s, "A", "x", 0); err != nil || !slices.Equal(got, []string{"eeeeeee"}) {
		t.Errorf("A/x after 0 = %q, %v", got, err)
	}
	if i, _ := s.LastIndex("A", "x"); i != 1 {
		t.Errorf("LastIndex(A/x) = %d, want 1", i)
	}
}

// An event that could not fit even alone is not kept, and the others stay.
func TestMaxBytesOversizedEvent(t *testing.T) {
	fixed := idCost(sessionCost, "s1") + idCost(streamCost, "p")
	s, _ := newFake(Options{MaxBytes: fixed + eventCost + 4})
	appendAll(t, s, "s1", "p", "", "ab", "", strings.Repeat("x", 1000))
	if st := stats(s); st.Events != 1 || st.Bytes != 2 {
		t.Fatalf("Stats = %+v", st)
	}
	if got, err := collect(t, s, "s1", "p", 3); err != nil || got != nil {
		t.Fatalf("After(3) = %q, %v; want nothing", got, err)
	}
	for _, index := range []int{-1, 1, 2} {
		if _, err := collect(t, s, "s1", "p", index); !errors.Is(err, ErrEvicted) {
			t.Fatalf("After(%d): %v, want ErrEvicted", index, err)
		}
	}
	appendAll(t, s, "s1", "p", "y")
	if got, err := collect(t, s, "s1", "p", 3); err != nil || !slices.Equal(got, []string{"y"}) {
		t.Fatalf("After(3) = %q, %v", got, err)
	}
	checkInvariants(t, s)
}

func TestCheck(t *testing.T) {
	s, fc := newFake(Options{MaxAge: time.Minute})
	appendAll(t, s, "s1", "p", "e0", "e1")
	fc.Step(2 * time.Minute)
	appendAll(t, s, "s1", "p", "e2", "e3")
	s.Sweep() // keeps e2, e3
	if err := s.Open(context.Background(), "s1", "empty"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, session, stream string
		index                 int
		want                  error
	}{
		{"unknown session", "s2", "p", 0, ErrUnknownStream},
		{"unknown stream", "s1", "q", 0, ErrUnknownStream},
		{"from start, evicted", "s1", "p", -1, ErrEvicted},
		{"before cut", "s1", "p", 0, ErrEvicted},
		{"at cut", "s1", "p", 1, nil},
		{"middle", "s1", "p", 2, nil},
		{"last", "s1", "p", 3, nil},
		{"future", "s1", "p", 4, ErrFutureIndex},
		{"empty from start", "s1", "empty", -1, nil},
		{"empty future", "s1", "empty", 0, ErrFutureIndex},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := s.Check(tt.session, tt.stream, tt.index); err != tt.want {
				t.Fatalf("Check = %v, want %v", err, tt.want)
			}
			// After agrees, except that a future index just yields nothing.
			_, err := collect(t, s, tt.session, tt.stream, tt.index)
			want := tt.want
			if want == ErrFutureIndex {
				want = nil
			}
			if !errors.Is(err, want) || (want == nil) != (err == nil) {
				t.Fatalf("After error = %v, want %v", err, want)
			}
		})
	}
}

func TestForget(t *testing.T) {
	s, _ := newFake(Options{MaxBytes: 1 << 20})
	appendAll(t, s, "keep", "p", "k0")
	for i := range 100 {
		appendAll(t, s, "gone", fmt.Sprint("p", i%3), "g", "", "gg")
	}
	if err := s.Open(context.Background(), "gone", ""); err != nil {
		t.Fatal(err)
	}
	appendAll(t, s, "keep", "p", "k1")

	s.Forget("gone")
	s.Forget("gone")  // again: no-op
	s.Forget("never") // unknown: no-op
	if st := stats(s); st != (Stats{Sessions: 1, Streams: 1, Events: 2, Bytes: 4}) {
		t.Fatalf("Stats = %+v", st)
	}
	checkInvariants(t, s)
	s.mu.Lock()
	qlen := s.order.len()
	s.mu.Unlock()
	if qlen != 2 {
		t.Fatalf("order holds %d records after Forget, want 2", qlen)
	}
	if _, err := collect(t, s, "gone", "p0", 0); !errors.Is(err, ErrUnknownStream) {
		t.Fatalf("After on forgotten session: %v, want ErrUnknownStream", err)
	}
	if got, err := collect(t, s, "keep", "p", -1); err != nil || !slices.Equal(got, []string{"k0", "k1"}) {
		t.Fatalf("keep = %q, %v", got, err)
	}
	// Reusing the id starts a fresh session.
	appendAll(t, s, "gone", "p0", "new")
	if i, _ := s.LastIndex("gone", "p0"); i != 0 {
		t.Fatalf("LastIndex after reuse = %d, want 0", i)
	}
	s.Forget("gone")
	s.Forget("keep")
	if st := stats(s); st != (Stats{}) {
		t.Fatalf("Stats = %+v, want zero", st)
	}
	checkInvariants(t, s)
}

// Records of a forgotten session that sit behind live ones are skipped when
// eviction reaches them.
func TestForgetThenEvict(t *testing.T) {
	// Two sessions and their streams, plus room for 3 events and 1000 bytes.
	fixed := 2*idCost(sessionCost, "A") + 2*idCost(streamCost, "p")
	s, fc := newFake(Options{MaxAge: time.Minute, MaxBytes: fixed + 3*eventCost + 1000})
	x := func(d string) string { return strings.Repeat(d, 100) }
	appendAll(t, s, "A", "p", x("a0"))
	appendAll(t, s, "B", "p", x("b"), x("b"), x("b"))
	appendAll(t, s, "A", "p", x("a1"))
	s.Forget("B") // 3 stale records of 5: compacted at once
	checkInvariants(t, s)
	appendAll(t, s, "D", "p", x("d"))
	s.Forget("D") // 1 stale record of 3: left in place
	appendAll(t, s, "C", "p", x("c"), x("c"), x("c"))
	s.mu.Lock()
	stale, records := s.stale, s.order.len()
	s.mu.Unlock()
	if stale != 1 || records != 6 {
		t.Fatalf("stale = %d, records = %d; want 1, 6", stale, records)
	}
	checkInvariants(t, s)
	appendAll(t, s, "A", "p", x("a2a2a2a2")) // evicts a0, a1, skips d, evicts one c
	checkInvariants(t, s)
	if st := stats(s); st != (Stats{Sessions: 2, Streams: 2, Events: 3, Bytes: 1000}) {
		t.Fatalf("Stats = %+v", st)
	}
	if got, err := collect(t, s, "C", "p", 0); err != nil || !slices.Equal(got, []string{x("c"), x("c")}) {
		t.Fatalf("C after 0 = %d events, %v", len(got), err)
	}
	fc.Step(2 * time.Minute)
	s.Sweep()
	checkInvariants(t, s)
	if st := stats(s); st != (Stats{Sessions: 2, Streams: 2}) {
		t.Fatalf("Stats = %+v", st)
	}
}

func TestSessionClosedKeepsEvents(t *testing.T) {
	ctx := context.Background()
	s, _ := newFake(Options{})
	appendAll(t, s, "s1", "", "a", "b")
	if err := s.SessionClosed(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	// The transport for the same session is recreated and reopens its stream.
	if err := s.Open(ctx, "s1", ""); err != nil {
		t.Fatal(err)
	}
	got, err := collect(t, s, "s1", "", 0)
	if err != nil || !slices.Equal(got, []string{"b"}) {
		t.Fatalf("After(0) = %q, %v", got, err)
	}
}

func TestSessionsIsolated(t *testing.T) {
	s, _ := newFake(Options{})
	appendAll(t, s, "s1", "", "a0", "a1")
	appendAll(t, s, "s2", "", "b0")
	appendAll(t, s, "s1", "", "a2")
	for _, tt := range []struct {
		session string
		want    []string
		last    int
	}{
		{"s1", []string{"a0", "a1", "a2"}, 2},
		{"s2", []string{"b0"}, 0},
	} {
		got, err := collect(t, s, tt.session, "", -1)
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("%s: After = %q, %v; want %q", tt.session, got, err, tt.want)
		}
		if i, _ := s.LastIndex(tt.session, ""); i != tt.last {
			t.Errorf("%s: LastIndex = %d, want %d", tt.session, i, tt.last)
		}
	}
	s.Forget("s1")
	if got, err := collect(t, s, "s2", "", -1); err != nil || !slices.Equal(got, []string{"b0"}) {
		t.Errorf("s2 after forgetting s1 = %q, %v", got, err)
	}
}

// waitFor polls cond until it holds or five seconds pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestRunSweepsOnTick(t *testing.T) {
	s, fc := newFake(Options{MaxAge: 10 * time.Minute, CleanupInterval: 5 * time.Minute})
	appendAll(t, s, "s1", "p", "a")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Run(ctx)
	}()
	waitFor(t, "Run's ticker", fc.HasWaiters)

	fc.Step(5 * time.Minute) // tick, but the event is not old enough
	appendAll(t, s, "s1", "p", "b")
	fc.Step(5*time.Minute + time.Second) // tick: "a" is now too old
	waitFor(t, "the sweep", func() bool { return s.Stats().Events == 1 })
	if _, err := collect(t, s, "s1", "p", -1); !errors.Is(err, ErrEvicted) {
		t.Fatalf("After(-1): %v, want ErrEvicted", err)
	}

	cancel()
	<-done
}

// timerOnlyClock hides FakeClock's NewTicker, to exercise Run's fallback.
type timerOnlyClock struct{ clock.Clock }

func TestRunWithTimerOnlyClock(t *testing.T) {
	fc := clocktesting.NewFakeClock(t0)
	s := New(Options{MaxAge: time.Minute, CleanupInterval: time.Minute, Clock: timerOnlyClock{fc}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.Run(ctx)
	waitFor(t, "Run's timer", fc.HasWaiters)
	for i := range 3 {
		appendAll(t, s, "s1", "p", "x")
		fc.Step(2 * time.Minute)
		waitFor(t, fmt.Sprint("sweep ", i), func() bool { return s.Stats().Events == 0 && fc.HasWaiters() })
	}
}

func TestConcurrent(t *testing.T) {
	ctx := context.Background()
	const maxBytes = 16 << 10
	s, fc := newFake(Options{MaxAge: time.Minute, MaxBytes: maxBytes})
	const writers, perWriter = 8, 500
	var wg sync.WaitGroup
	for w := range writers {
		session := fmt.Sprint("s", w%4)
		stream := fmt.Sprint("p", w)
		wg.Go(func() {
			for i := range perWriter {
				d := []byte(fmt.Sprintf("%s/%d", stream, i))
				if i%50 == 0 {
					d = nil
				}
				if err := s.Append(ctx, session, stream, d); err != nil {
					t.Error(err)
					return
				}
			}
		})
		// Readers check that whatever After yields is the gap-free run of
		// events with data that follows the requested index. Session s3 is
		// forgotten while being written, which restarts its numbering, so
		// only its errors are checked.
		checkData := w%4 != 3
		wg.Go(func() {
			for i := range perWriter / 5 {
				from := i*5 - 1
				next := from + 1
				for d, err := range s.After(ctx, session, stream, from) {
					if err != nil {
						if !errors.Is(err, ErrEvicted) && !errors.Is(err, ErrUnknownStream) {
							t.Error(err)
						}
						break
					}
					for next%50 == 0 { // no data: not replayed
						next++
					}
					if checkData && string(d) != fmt.Sprintf("%s/%d", stream, next) {
						t.Errorf("after %d got %q at position %d", from, d, next)
						return
					}
					next++
				}
				_ = s.Check(session, stream, from)
				_, _ = s.LastIndex(session, stream)
			}
		})
	}
	wg.Go(func() {
		for range 50 {
			fc.Step(time.Second)
			s.Sweep()
			_ = s.Stats()
		}
	})
	wg.Go(func() {
		for range 20 {
			s.Forget("s3")
		}
	})
	wg.Wait()
	checkInvariants(t, s)
	if st := s.Stats(); st.Cost > maxBytes {
		t.Fatalf("Cost = %d over MaxBytes", st.Cost)
	}
	for w := range writers {
		if w%4 == 3 {
			continue
		}
		if i, _ := s.LastIndex(fmt.Sprint("s", w%4), fmt.Sprint("p", w)); i != perWriter-1 {
			t.Errorf("writer %d: LastIndex = %d, want %d", w, i, perWriter-1)
		}
	}
}

func TestQueueReleasesPopped(t *testing.T) {
	var q queue[[]byte]
	for i := range 10000 {
		q.push([]byte{byte(i)})
	}
	for range 9990 {
		q.pop()
	}
	if q.len() != 10 || len(q.buf) > 2*compactMin {
		t.Fatalf("len %d, buffer %d after popping most elements", q.len(), len(q.buf))
	}
	for i := range 10 {
		if want := byte(9990 + i); q.at(i)[0] != want {
			t.Fatalf("at(%d) = %d, want %d", i, q.at(i)[0], want)
		}
	}
	for range 10 {
		q.pop()
	}
	if q.buf != nil {
		t.Fatal("empty queue keeps its buffer")
	}
	if got := q.copyFrom(0); got != nil {
		t.Fatalf("copyFrom on empty = %v", got)
	}
}

func TestForgetShrinksSessionMap(t *testing.T) {
	s, _ := newFake(Options{})
	const n = 5000
	for i := range n {
		appendAll(t, s, fmt.Sprint("s", i), "", "x")
	}
	for i := range n - 10 {
		s.Forget(fmt.Sprint("s", i))
	}
	s.mu.Lock()
	peak := s.peak
	s.mu.Unlock()
	if peak >= n {
		t.Fatalf("peak = %d, session map was not rebuilt", peak)
	}
	if st := stats(s); st != (Stats{Sessions: 10, Streams: 10, Events: 10, Bytes: 10}) {
		t.Fatalf("Stats = %+v", st)
	}
	checkInvariants(t, s)
	if got, err := collect(t, s, fmt.Sprint("s", n-1), "", -1); err != nil || !slices.Equal(got, []string{"x"}) {
		t.Fatalf("After = %q, %v", got, err)
	}
}

// primeOK calls Prime and returns the priming index and the backlog as
// "index:data" strings.
func primeOK(t *testing.T, s *Store, session, stream string, index int, skipEvicted bool) (int, []string) {
	t.Helper()
	p, err := s.Prime(session, stream, index, skipEvicted)
	if err != nil {
		t.Fatalf("Prime(%d): %v", index, err)
	}
	var backlog []string
	for _, ev := range p.Backlog {
		backlog = append(backlog, fmt.Sprintf("%d:%s", ev.Index, ev.Data))
	}
	return p.Index, backlog
}

func TestPrime(t *testing.T) {
	s, _ := newFake(Options{})
	appendAll(t, s, "s1", "", "e0", "e1")
	p, backlog := primeOK(t, s, "s1", "", 0, false)
	if p != 2 || !slices.Equal(backlog, []string{"1:e1"}) {
		t.Fatalf("Prime(0) = %d %q, want 2 [1:e1]", p, backlog)
	}
	// To the mcp.EventStore methods the priming event is an empty event.
	if got, err := collect(t, s, "s1", "", 0); err != nil || !slices.Equal(got, []string{"e1"}) {
		t.Fatalf("After(0) = %q, %v", got, err)
	}
	appendAll(t, s, "s1", "", "e3")
	// Resuming from the priming event is resuming from where it resumed:
	// its backlog again, then what came after; priming events are skipped.
	p2, backlog := primeOK(t, s, "s1", "", p, false)
	if p2 != 4 || !slices.Equal(backlog, []string{"1:e1", "3:e3"}) {
		t.Fatalf("Prime(%d) = %d %q, want 4 [1:e1 3:e3]", p, p2, backlog)
	}
	// No backlog: the priming event stands for itself.
	p3, backlog := primeOK(t, s, "s1", "", 3, false)
	if p3 != 5 || backlog != nil {
		t.Fatalf("Prime(3) = %d %q, want 5 []", p3, backlog)
	}
	appendAll(t, s, "s1", "", "e6")
	if _, backlog := primeOK(t, s, "s1", "", p3, false); !slices.Equal(backlog, []string{"6:e6"}) {
		t.Fatalf("Prime(%d) backlog %q, want [6:e6]", p3, backlog)
	}
	if _, backlog := primeOK(t, s, "s1", "", -5, false); !slices.Equal(backlog, []string{"0:e0", "1:e1", "3:e3", "6:e6"}) {
		t.Fatalf("Prime(-5) backlog %q", backlog)
	}
	if st := s.Stats(); st.Events != 4 || st.Bytes != 8 {
		t.Fatalf("Stats = %+v", st)
	}
	checkInvariants(t, s)
}

func TestPrimeErrors(t *testing.T) {
	s, _ := newFake(Options{})
	appendAll(t, s, "s1", "", "e0")
	for _, tt := range []struct {
		session, stream string
		index           int
		want            error
	}{
		{"s1", "", 1, ErrFutureIndex},
		{"s1", "nope", -1, ErrUnknownStream},
		{"nope", "", -1, ErrUnknownStream},
	} {
		if _, err := s.Prime(tt.session, tt.stream, tt.index, true); err != tt.want {
			t.Errorf("Prime(%q, %q, %d) = %v, want %v", tt.session, tt.stream, tt.index, err, tt.want)
		}
	}
	// Nothing was created or appended.
	if st := stats(s); st != (Stats{Sessions: 1, Streams: 1, Events: 1, Bytes: 2}) {
		t.Fatalf("Stats = %+v", st)
	}
}

// A priming event whose backlog was evicted cannot be resumed from, neither
// while it is retained nor once it is the last evicted event; skipEvicted
// starts at the oldest retained event instead.
func TestPrimeEvicted(t *testing.T) {
	s, _ := newFake(Options{})
	evict := func(n int) {
		s.mu.Lock()
		defer s.mu.Unlock()
		for range n {
			s.popOldestLocked(0)
		}
	}
	resumePoints := func() int {
		s.mu.Lock()
		defer s.mu.Unlock()
		return len(s.sessions["s1"].streams[""].resumes)
	}
	appendAll(t, s, "s1", "", "e0")
	p, _ := primeOK(t, s, "s1", "", -1, false) // backlog e0
	appendAll(t, s, "s1", "", "e2")
	evict(1) // e0
	for i, what := range []string{"retained", "just evicted"} {
		if i > 0 {
			evict(1)
		}
		if err := s.Check("s1", "", p); err != nil {
			t.Fatalf("%s: Check(%d) = %v: nothing after the priming event is gone", what, p, err)
		}
		if _, err := s.Prime("s1", "", p, false); err != ErrEvicted {
			t.Fatalf("%s: Prime(%d) = %v, want ErrEvicted", what, p, err)
		}
	}
	if n := resumePoints(); n != 0 {
		t.Fatalf("%d resume points kept for evicted priming events", n)
	}
	if _, backlog := primeOK(t, s, "s1", "", p, true); !slices.Equal(backlog, []string{"2:e2"}) {
		t.Fatalf("Prime(%d, skip) backlog %q, want [2:e2]", p, backlog)
	}
	// A plain event at the cut resumes as before.
	if _, backlog := primeOK(t, s, "s1", "", 2, false); backlog != nil {
		t.Fatalf("Prime(2) backlog %q, want none", backlog)
	}
	checkInvariants(t, s)
}
