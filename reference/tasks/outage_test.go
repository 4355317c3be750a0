package tasks

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

var errDown = errors.New("store out of reach")

// flaky is a Shared store in memory that can be taken out of reach. It
// keeps a terminal status once stored, as the Redis store does.
type flaky struct {
	mu    sync.Mutex
	down  bool
	tasks map[string]flakyTask
}

type flakyTask struct {
	snap  Snapshot
	lease time.Time
}

func newFlaky() *flaky { return &flaky{tasks: map[string]flakyTask{}} }

func (f *flaky) setDown(down bool) {
	f.mu.Lock()
	f.down = down
	f.mu.Unlock()
}

func (f *flaky) stored(id string) Snapshot {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.tasks[id].snap
}

func (f *flaky) Put(_ context.Context, snap Snapshot, lease time.Time, create bool) (Snapshot, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down {
		return Snapshot{}, errDown
	}
	cur, ok := f.tasks[snap.ID]
	switch {
	case ok && cur.snap.Status.Terminal():
		return cur.snap, nil
	case !ok && !create:
		return Snapshot{}, fmt.Errorf("%w: %q", ErrNotFound, snap.ID)
	}
	f.tasks[snap.ID] = flakyTask{snap, lease}
	return snap, nil
}

func (f *flaky) Load(_ context.Context, id string) (Snapshot, time.Time, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down {
		return Snapshot{}, time.Time{}, errDown
	}
	k, ok := f.tasks[id]
	if !ok {
		return Snapshot{}, time.Time{}, fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	return k.snap, k.lease, nil
}

func (f *flaky) List(_ context.Context, owner string) ([]Snapshot, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down {
		return nil, errDown
	}
	var out []Snapshot
	for _, k := range f.tasks {
		if k.snap.Owner == owner {
			out = append(out, k.snap)
		}
	}
	return out, nil
}

// TestTaskEndsInOutage: a task of this process that ends while the shared
// store is out of reach is answered from memory (get, result), and its
// terminal status reaches the store once it is back.
func TestTaskEndsInOutage(t *testing.T) {
	sh := newFlaky()
	s, _ := newStore(t, Options{Shared: sh})
	release := make(chan struct{})
	k, err := s.Create("alice", "", nil, func(context.Context) Outcome {
		<-release
		return Outcome{Result: []byte(`{"ok":true}`)}
	})
	if err != nil {
		t.Fatal(err)
	}
	sh.setDown(true)
	if got, err := s.Get("alice", k.ID); err != nil || got.Status != Working {
		t.Fatalf("Get of a running task with the store down: %+v %v", got, err)
	}
	if _, err := s.Get("alice", "elsewhere"); !errors.Is(err, errDown) {
		t.Fatalf("Get of a task this process does not hold, store down: %v, want the store's error", err)
	}
	close(release)
	got, err := s.Result(context.Background(), "alice", k.ID)
	if err != nil || got.Status != Completed {
		t.Fatalf("Result with the store down: %+v %v", got, err)
	}
	sh.setDown(false)
	if st := sh.stored(k.ID).Status; st != Working {
		t.Fatalf("stored status before the resync: %s", st)
	}
	// Until it is resynced, this process answers what it knows.
	if got, err := s.Get("alice", k.ID); err != nil || got.Status != Completed {
		t.Fatalf("Get before the resync: %+v %v", got, err)
	}
	s.renew()
	if st := sh.stored(k.ID); st.Status != Completed || st.Outcome == nil {
		t.Fatalf("stored after the resync: %+v", st)
	}
}

// TestNoLapseWhileSettling: a task of another replica whose lease lapsed
// is not failed while the store is settling after an outage (its replica
// may not have renewed yet), and is once that is over; nor is a task this
// process runs, whatever its stored lease says.
func TestNoLapseWhileSettling(t *testing.T) {
	sh := newFlaky()
	settling := true
	s, fc := newStore(t, Options{Shared: sh, Settling: func() bool { return settling }})
	now := fc.Now()
	other := Snapshot{ID: "other", Owner: "alice", Status: Working, CreatedAt: now, LastUpdatedAt: now, TTL: time.Hour}
	sh.Put(context.Background(), other, now.Add(-time.Second), true)
	if got, err := s.Get("alice", "other"); err != nil || got.Status != Working {
		t.Fatalf("lapsed lease while settling: %+v %v", got, err)
	}
	settling = false
	if got, err := s.Get("alice", "other"); err != nil || got.Status != Failed || got.StatusMessage != LostMessage {
		t.Fatalf("lapsed lease once settled: %+v %v", got, err)
	}
	mine, err := s.Create("alice", "", nil, blocked)
	if err != nil {
		t.Fatal(err)
	}
	fc.Step(time.Hour) // its stored lease lapses; it still runs here
	if got, err := s.Get("alice", mine.ID); err != nil || got.Status != Working {
		t.Fatalf("a task of this process with a lapsed stored lease: %+v %v", got, err)
	}
}
