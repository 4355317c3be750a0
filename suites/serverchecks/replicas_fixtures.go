package serverchecks

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/mcp-conform/mcp-conform/fixtures/servers"
	"github.com/mcp-conform/mcp-conform/reference/eventstore"
	"github.com/mcp-conform/mcp-conform/reference/store"
)

// Replicated deployments whose replicas lack a behaviour of the replica checks.
func init() {
	servers.RegisterReplicas(
		servers.ReplicaFixture{Name: servers.ReferenceReplicas, About: "the reference server's replicas on one Redis store"},
		servers.ReplicaFixture{
			Name:   "replicas-share-nothing",
			About:  "each replica keeps its sessions, events and tasks in its own memory: another replica answers 404 (for a task, -32602)",
			Breaks: []string{"REPLICA-SESSION-SHARED", "REPLICA-NOTIFY-ROUTED", "REPLICA-RESUME", "REPLICA-EXPIRE-ONCE", "REPLICA-LOSS", "TASK-DURABLE-CREATE"},
			Store:  func(store.Store) store.Store { return nil },
		},
		servers.ReplicaFixture{
			Name:   "replicas-no-routing",
			About:  "sessions and events are shared, but nothing routes live events between replicas (no pub/sub, no call leases): a stream on B gets only what was stored when it opened",
			Breaks: []string{"REPLICA-NOTIFY-ROUTED", "REPLICA-RESUME", "REPLICA-LOSS"},
			Store:  func(s store.Store) store.Store { return noRouting{s} },
		},
		servers.ReplicaFixture{
			Name:   "replicas-reaper-local",
			About:  "each replica's reaper expires sessions on its own view of their activity, not a shared one: a session active through replica A is expired by replica B",
			Breaks: []string{"REPLICA-EXPIRE-ONCE"},
			Store:  func(s store.Store) store.Store { return newLocalReaper(s) },
		},
		servers.ReplicaFixture{
			Name:   "replicas-reaper-forgets",
			About:  "grace periods start, but no replica ever expires a session: a silent session lives on every replica",
			Breaks: []string{"REPLICA-EXPIRE-ONCE"},
			Store:  func(s store.Store) store.Store { return noExpiry{s} },
		},
	)
}

// noRouting is a shared store without live routing: a follower gets
// nothing after subscribing, and no replica learns of another's GET.
type noRouting struct{ store.Store }

func (noRouting) Follow(ctx context.Context, _, _ string) (<-chan eventstore.Event, error) {
	ch := make(chan eventstore.Event)
	context.AfterFunc(ctx, func() { close(ch) })
	return ch, nil
}

func (noRouting) Listening(context.Context, string) (bool, error) { return false, nil }

// Leased says every call runs on: a follower never learns otherwise.
func (noRouting) Leased(context.Context, string, string) (bool, []json.RawMessage, error) {
	return true, nil, nil
}

// noExpiry never expires a session.
type noExpiry struct{ store.Store }

func (noExpiry) Expire(context.Context, time.Time) ([]string, error) { return nil, nil }

// localReaper decides grace and expiry from the activity this replica saw.
type localReaper struct {
	store.Store
	mu     sync.Mutex
	active map[string]time.Time
	grace  map[string]time.Time
}

func newLocalReaper(s store.Store) *localReaper {
	return &localReaper{Store: s, active: map[string]time.Time{}, grace: map[string]time.Time{}}
}

func (l *localReaper) Create(ctx context.Context, rec store.Session, now time.Time) error {
	l.mu.Lock()
	l.active[rec.ID] = now
	l.mu.Unlock()
	return l.Store.Create(ctx, rec, now)
}

func (l *localReaper) Touch(ctx context.Context, id string, now time.Time) (bool, error) {
	if _, ok, err := l.Store.Load(ctx, id); err != nil || !ok {
		return false, errors.Join(store.ErrGone, err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.active[id] = now
	_, cancelled := l.grace[id]
	delete(l.grace, id)
	return cancelled, nil
}

func (l *localReaper) StartGrace(_ context.Context, idleSince, deadline time.Time) ([]string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var ids []string
	for id, at := range l.active {
		if _, in := l.grace[id]; !in && at.Before(idleSince) {
			l.grace[id] = deadline
			ids = append(ids, id)
		}
	}
	return ids, nil
}

func (l *localReaper) Expire(ctx context.Context, now time.Time) ([]string, error) {
	l.mu.Lock()
	var due []string
	for id, d := range l.grace {
		if !d.After(now) {
			due = append(due, id)
			delete(l.grace, id)
			delete(l.active, id)
		}
	}
	l.mu.Unlock()
	var out []string
	for _, id := range due {
		if ok, _ := l.Store.Remove(ctx, id); ok {
			out = append(out, id)
		}
	}
	return out, nil
}
