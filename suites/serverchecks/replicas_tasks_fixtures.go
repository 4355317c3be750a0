package serverchecks

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/mcp-conform/mcp-conform/fixtures/servers"
	"github.com/mcp-conform/mcp-conform/reference/store"
	"github.com/mcp-conform/mcp-conform/reference/tasks"
)

// taskStoreLag is how long a replica of replicas-task-late keeps a new task
// to itself before storing it where the other replicas read it: far longer
// than a client takes to ask another replica right after the answer.
const taskStoreLag = 2 * time.Second

func init() {
	servers.RegisterReplicas(servers.ReplicaFixture{
		Name:   "replicas-task-late",
		About:  "a replica answers the CreateTaskResult before the shared store has the task (it stores it 2 s later): the replica that created it finds it, another answers -32602",
		Breaks: []string{"TASK-DURABLE-CREATE"},
		Store:  func(s store.Store) store.Store { return lateTasks{s, newLateShared(s.Tasks(), taskStoreLag)} },
	})
}

// lateTasks is a shared store whose tasks are stored late.
type lateTasks struct {
	store.Store
	tasks *lateShared
}

func (l lateTasks) Tasks() tasks.Shared { return l.tasks }

// lateShared holds each new task in this replica's memory for lag, then
// stores its latest state in the shared store; until then this replica
// reads and updates it there alone.
type lateShared struct {
	tasks.Shared
	lag     time.Duration
	mu      sync.Mutex
	pending map[string]leased
}

type leased struct {
	snap  tasks.Snapshot
	lease time.Time
}

func newLateShared(s tasks.Shared, lag time.Duration) *lateShared {
	return &lateShared{Shared: s, lag: lag, pending: map[string]leased{}}
}

func (l *lateShared) Put(ctx context.Context, snap tasks.Snapshot, lease time.Time, create bool) (tasks.Snapshot, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	p, held := l.pending[snap.ID]
	switch {
	case held && p.snap.Status.Terminal():
		return p.snap, nil // as the store: a terminal status stays
	case held:
		l.pending[snap.ID] = leased{snap, lease}
		return snap, nil
	case create:
		l.pending[snap.ID] = leased{snap, lease}
		time.AfterFunc(l.lag, func() { l.store(snap.ID) })
		return snap, nil
	}
	return l.Shared.Put(ctx, snap, lease, create)
}

// store moves task id from memory to the shared store. The lock is held
// meanwhile so that no update lands between the two.
func (l *lateShared) store(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	p := l.pending[id]
	delete(l.pending, id)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, _ = l.Shared.Put(ctx, p.snap, p.lease, true) // a replica closed meanwhile loses it
}

func (l *lateShared) Load(ctx context.Context, id string) (tasks.Snapshot, time.Time, error) {
	l.mu.Lock()
	p, held := l.pending[id]
	l.mu.Unlock()
	if held {
		return p.snap, p.lease, nil
	}
	return l.Shared.Load(ctx, id)
}

func (l *lateShared) List(ctx context.Context, owner string) ([]tasks.Snapshot, error) {
	l.mu.Lock() // a task moves to the shared store under it: listed once
	defer l.mu.Unlock()
	out, err := l.Shared.List(ctx, owner)
	if err != nil {
		return nil, err
	}
	for _, p := range l.pending {
		if p.snap.Owner == owner {
			out = append(out, p.snap)
		}
	}
	slices.SortStableFunc(out, func(a, b tasks.Snapshot) int { return a.CreatedAt.Compare(b.CreatedAt) })
	return out, nil
}
