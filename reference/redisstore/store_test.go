package redisstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/internal/redistest"
	"github.com/mcp-conform/mcp-conform/reference/eventstore"
	"github.com/mcp-conform/mcp-conform/reference/store"
)

func newStore(t testing.TB, o Options) *Store {
	t.Helper()
	srv := redistest.Start(t)
	o.URL = srv.URL(0)
	s, err := New(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestBadURL(t *testing.T) {
	if _, err := New(context.Background(), Options{URL: "http://x"}); err == nil {
		t.Fatal("want an error for a non-redis URL")
	}
}

func TestSessions(t *testing.T) {
	s := newStore(t, Options{})
	ctx := context.Background()
	now := time.Now()
	rec := store.Session{ID: "A", Principal: "p", Version: "2025-11-25", Init: []byte(`{"x":1}`)}
	if err := s.Create(ctx, rec, now); err != nil {
		t.Fatal(err)
	}
	got, ok, err := s.Load(ctx, "A")
	if err != nil || !ok || got.Principal != "p" || got.Version != rec.Version || string(got.Init) != `{"x":1}` {
		t.Fatalf("Load = %+v %v %v", got, ok, err)
	}
	for want := int64(1); want <= 3; want++ {
		if n, err := s.Increment(ctx, "A"); err != nil || n != want {
			t.Fatalf("Increment = %d, %v; want %d", n, err, want)
		}
	}
	if _, err := s.Increment(ctx, "B"); !errors.Is(err, store.ErrGone) {
		t.Fatalf("Increment of unknown id: %v, want ErrGone", err)
	}
	if _, err := s.Touch(ctx, "B", now); !errors.Is(err, store.ErrGone) {
		t.Fatalf("Touch of unknown id: %v", err)
	}
	// Idle since before now+1s: grace; a touch cancels it.
	ids, err := s.StartGrace(ctx, now.Add(time.Second), now.Add(2*time.Second))
	if err != nil || len(ids) != 1 {
		t.Fatalf("StartGrace = %v, %v", ids, err)
	}
	if c, err := s.Touch(ctx, "A", now.Add(time.Second)); err != nil || !c {
		t.Fatalf("Touch in grace = %v, %v; want cancelled", c, err)
	}
	if ids, _ := s.Expire(ctx, now.Add(time.Hour)); len(ids) != 0 {
		t.Fatalf("expired %v after the grace was cancelled", ids)
	}
	n := 0
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			ok, err := s.Remove(ctx, "A")
			if err != nil {
				t.Error(err)
			}
			if ok {
				mu.Lock()
				n++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if n != 1 {
		t.Fatalf("%d removals succeeded, want exactly 1", n)
	}
}

// TestExpireOnce: replicas reaping at the same time expire every session
// exactly once between them.
func TestExpireOnce(t *testing.T) {
	s := newStore(t, Options{})
	ctx := context.Background()
	now := time.Now()
	const sessions = 200
	for i := range sessions {
		if err := s.Create(ctx, store.Session{ID: fmt.Sprint("S", i)}, now); err != nil {
			t.Fatal(err)
		}
	}
	if ids, err := s.StartGrace(ctx, now.Add(time.Second), now.Add(time.Second)); err != nil || len(ids) != sessions {
		t.Fatalf("StartGrace: %d, %v", len(ids), err)
	}
	seen := map[string]int{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 5 {
				ids, err := s.Expire(ctx, now.Add(2*time.Second))
				if err != nil {
					t.Error(err)
				}
				mu.Lock()
				for _, id := range ids {
					seen[id]++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(seen) != sessions {
		t.Fatalf("%d sessions expired, want %d", len(seen), sessions)
	}
	for id, n := range seen {
		if n != 1 {
			t.Fatalf("%s expired %d times", id, n)
		}
	}
}

func collect(t *testing.T, e store.Events, sid, st string, ix int) []string {
	t.Helper()
	var out []string
	for d, err := range e.After(context.Background(), sid, st, ix) {
		if err != nil {
			t.Fatalf("After(%d): %v", ix, err)
		}
		out = append(out, string(d))
	}
	return out
}

func TestEvents(t *testing.T) {
	s := newStore(t, Options{MaxBytes: 100})
	e := s.Events()
	ctx := context.Background()
	if err := e.Check("S", "p", 0); err != eventstore.ErrUnknownStream {
		t.Fatalf("Check of unknown stream: %v", err)
	}
	e.Open(ctx, "S", "p")
	e.Append(ctx, "S", "p", nil) // priming, index 0
	for i := 1; i <= 3; i++ {
		e.Append(ctx, "S", "p", fmt.Appendf(nil, "m%d", i))
	}
	if got := collect(t, e, "S", "p", 1); fmt.Sprint(got) != "[m2 m3]" {
		t.Fatalf("After(1) = %v", got)
	}
	if err := e.Check("S", "p", 4); err != eventstore.ErrFutureIndex {
		t.Fatalf("Check(4) = %v", err)
	}
	// 100 bytes: a 96-byte event evicts the oldest before it.
	e.Append(ctx, "S", "p", make([]byte, 96))
	if err := e.Check("S", "p", 0); err != eventstore.ErrEvicted {
		t.Fatalf("Check(0) after eviction = %v", err)
	}
	if err := e.Check("S", "p", 3); err != nil {
		t.Fatalf("Check(3) = %v", err)
	}
	// Standalone stream: priming events map to their resume points.
	e.Append(ctx, "S", "", []byte("a"))
	p, err := e.Prime("S", "", -1, false)
	if err != nil || p.Index != 1 || len(p.Backlog) != 1 || p.Backlog[0].Index != 0 {
		t.Fatalf("Prime = %+v, %v", p, err)
	}
	again, err := e.Prime("S", "", p.Index, false)
	if err != nil || len(again.Backlog) != 1 {
		t.Fatalf("Prime from a priming event = %+v, %v; want the backlog again", again, err)
	}
	e.Forget("S")
	if err := e.Check("S", "p", 3); err != eventstore.ErrUnknownStream {
		t.Fatalf("Check after Forget = %v", err)
	}
	if st := e.Stats(); st.Events != 0 || st.Bytes != 0 {
		t.Fatalf("Stats after Forget = %+v", st)
	}
}

func TestSweepAge(t *testing.T) {
	s := newStore(t, Options{MaxAge: 50 * time.Millisecond})
	e := s.Events()
	ctx := context.Background()
	e.Append(ctx, "S", "", []byte("old"))
	deadline := time.Now().Add(5 * time.Second)
	for e.Check("S", "", -1) == nil {
		if time.Now().After(deadline) {
			t.Fatal("event not evicted by age")
		}
		time.Sleep(20 * time.Millisecond)
		e.Sweep()
	}
	if err := e.Check("S", "", -1); err != eventstore.ErrEvicted {
		t.Fatalf("Check = %v", err)
	}
}

func TestFollow(t *testing.T) {
	s := newStore(t, Options{})
	e := s.Events()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch, err := s.Follow(ctx, "S", "x")
	if err != nil {
		t.Fatal(err)
	}
	e.Append(ctx, "S", "x", nil)
	e.Append(ctx, "S", "x", []byte("hello\nworld"))
	select {
	case ev := <-ch:
		if ev.Index != 1 || string(ev.Data) != "hello\nworld" {
			t.Fatalf("followed %+v", ev)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no event followed")
	}
}
