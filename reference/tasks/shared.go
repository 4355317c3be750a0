package tasks

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Shared keeps tasks where every replica of the server reads them (Redis):
// the replica running a task writes each status change and renews a lease
// while it runs; any replica answers get, result, cancel and list from it.
type Shared interface {
	// Put stores snap with its lease (the time until which its replica
	// vouches for a running task) unless a terminal status is stored
	// already; it returns what is stored afterwards. create is false for
	// an update, which stores nothing once the task is gone (ErrNotFound).
	Put(ctx context.Context, snap Snapshot, lease time.Time, create bool) (Snapshot, error)
	// Load returns the task id and its lease, or ErrNotFound.
	Load(ctx context.Context, id string) (Snapshot, time.Time, error)
	// List returns owner's stored tasks, oldest first.
	List(ctx context.Context, owner string) ([]Snapshot, error)
}

// Defaults of the shared mode.
const (
	// DefaultLease is how long a running task's lease lasts unrenewed; its
	// replica renews it every fifth of that.
	DefaultLease = 2 * time.Second
	// DefaultResultPoll bounds how late tasks/result notices that a task
	// running on another replica ended.
	DefaultResultPoll = 50 * time.Millisecond
)

// Messages of tasks whose replica stopped running them.
const (
	LostMessage     = "the replica running this task stopped (its lease lapsed) before the task finished"
	ShutdownMessage = "the replica running this task shut down before the task finished"
)

// lostOutcome is what tasks/result answers for a task its replica lost.
func lostOutcome(msg string) *Outcome {
	return &Outcome{Error: &Error{Code: -32603, Message: msg, Data: map[string]any{"reason": "replica_lost"}}}
}

// op bounds one shared-store operation.
func (s *Store) op() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 5*time.Second)
}

// loadShared returns owner's task id from the shared store; a running task
// whose lease lapsed is turned failed there first, unless it is mine (runs
// here: this process knows better).
func (s *Store) loadShared(owner, id string, mine bool) (Snapshot, error) {
	ctx, cancel := s.op()
	defer cancel()
	snap, lease, err := s.opts.Shared.Load(ctx, id)
	if err != nil {
		return Snapshot{}, err
	}
	now := s.opts.Clock.Now()
	if snap.Owner != owner || expired(snap, now) {
		return Snapshot{}, fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	if !snap.Status.Terminal() && now.After(lease) && !mine && !s.settling() {
		return s.lapse(ctx, snap, now)
	}
	return snap, nil
}

func (s *Store) settling() bool { return s.opts.Settling != nil && s.opts.Settling() }

// local returns owner's task id as this process holds it (one it runs or
// ran), for when the shared store cannot be read.
func (s *Store) local(owner, id string) (*task, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k, err := s.lookupLocked(owner, id)
	return k, err == nil
}

// getShared is Get on a shared store. A task this process holds is
// answered from memory when the store cannot be read, or when it ended
// here and the store does not know yet (see sync).
func (s *Store) getShared(owner, id string) (Snapshot, error) {
	k, mine := s.local(owner, id)
	snap, err := s.loadShared(owner, id, mine)
	if !mine {
		return snap, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if (err != nil && !errors.Is(err, ErrNotFound)) || (err == nil && !snap.Status.Terminal() && k.Status.Terminal()) {
		return k.Snapshot, nil
	}
	return snap, err
}

// lapse stores snap as failed: its replica no longer runs it.
func (s *Store) lapse(ctx context.Context, snap Snapshot, now time.Time) (Snapshot, error) {
	snap.Status, snap.StatusMessage, snap.LastUpdatedAt = Failed, LostMessage, now
	snap.Outcome = lostOutcome(LostMessage)
	return s.opts.Shared.Put(ctx, snap, now, false)
}

// renew extends the lease of every task running here; a task another
// replica cancelled meanwhile is stopped. A terminal status the store
// missed (it was out of reach) is stored now.
func (s *Store) renew() {
	s.mu.Lock()
	var running []Snapshot
	var unsynced []*task
	for _, k := range s.tasks {
		switch {
		case !k.Status.Terminal():
			running = append(running, k.Snapshot)
		case k.unsynced:
			unsynced = append(unsynced, k)
		}
	}
	s.mu.Unlock()
	for _, k := range unsynced {
		s.sync(k)
	}
	lease := s.opts.Clock.Now().Add(s.opts.Lease)
	for _, snap := range running {
		ctx, cancel := s.op()
		stored, err := s.opts.Shared.Put(ctx, snap, lease, false)
		cancel()
		if err == nil && stored.Status.Terminal() {
			s.adopt(stored)
		}
	}
}

// sync stores k's terminal status, which the store missed.
func (s *Store) sync(k *task) {
	s.mu.Lock()
	snap := k.Snapshot
	s.mu.Unlock()
	ctx, cancel := s.op()
	_, err := s.opts.Shared.Put(ctx, snap, snap.LastUpdatedAt, false)
	cancel()
	if err == nil || errors.Is(err, ErrNotFound) {
		s.mu.Lock()
		k.unsynced = false
		s.mu.Unlock()
	}
}

// adopt ends the local task of stored, a terminal snapshot decided
// elsewhere (a cancel on another replica).
func (s *Store) adopt(stored Snapshot) {
	s.mu.Lock()
	k := s.tasks[stored.ID]
	s.mu.Unlock()
	if k != nil {
		s.finishLocal(k, stored)
	}
}

// sharedResult waits until owner's task id is terminal, wherever it runs:
// a task of this process wakes it at once, another's within ResultPoll.
func (s *Store) sharedResult(ctx context.Context, owner, id string) (Snapshot, error) {
	for {
		snap, err := s.getShared(owner, id)
		if err != nil || snap.Status.Terminal() {
			return snap, err
		}
		var done chan struct{}
		s.mu.Lock()
		if k := s.tasks[id]; k != nil {
			done = k.done
		}
		s.mu.Unlock()
		select {
		case <-done:
		case <-s.opts.Clock.After(s.opts.ResultPoll):
		case <-ctx.Done():
			return Snapshot{}, ctx.Err()
		}
	}
}

// sharedCancel stores the cancelled status for every replica; the replica
// running the task stops it at once if it is this one, else at its next
// lease renewal.
func (s *Store) sharedCancel(owner, id string) (Snapshot, error) {
	_, mine := s.local(owner, id)
	snap, err := s.loadShared(owner, id, mine)
	if err != nil {
		return Snapshot{}, err
	}
	if snap.Status.Terminal() {
		return Snapshot{}, fmt.Errorf("%w: %q is %s", ErrTerminal, id, snap.Status)
	}
	now := s.opts.Clock.Now()
	snap.Status, snap.StatusMessage, snap.LastUpdatedAt, snap.Outcome = Cancelled, "cancelled by the requestor", now, nil
	ctx, cancel := s.op()
	defer cancel()
	stored, err := s.opts.Shared.Put(ctx, snap, now, false)
	if err != nil {
		return Snapshot{}, err
	}
	if stored.Status != Cancelled {
		return Snapshot{}, fmt.Errorf("%w: %q is %s", ErrTerminal, id, stored.Status)
	}
	s.adopt(stored)
	return stored, nil
}

// sharedList pages owner's tasks as List does, from the shared store.
func (s *Store) sharedList(owner, cursor string) (page []Snapshot, next string, err error) {
	ctx, cancel := s.op()
	all, err := s.opts.Shared.List(ctx, owner)
	cancel()
	if err != nil {
		return nil, "", err
	}
	start := 0
	if cursor != "" {
		i := slices.IndexFunc(all, func(k Snapshot) bool { return k.ID == cursor })
		if i < 0 {
			return nil, "", fmt.Errorf("invalid cursor %q", cursor)
		}
		start = i + 1
	}
	now := s.opts.Clock.Now()
	for _, k := range all[start:] {
		if k.Owner != owner || expired(k, now) {
			continue
		}
		if !k.Status.Terminal() {
			// Its lease may have lapsed.
			if k, err = s.getShared(owner, k.ID); err != nil {
				continue
			}
		}
		if len(page) == pageSize {
			return page, page[len(page)-1].ID, nil
		}
		page = append(page, k)
	}
	return page, "", nil
}
