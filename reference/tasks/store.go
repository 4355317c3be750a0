// Package tasks is the reference server's task store: durable handles on
// long-running tool calls (the 2025-11-25 tasks utility and the
// io.modelcontextprotocol/tasks extension of 2026-07-28). A task belongs to
// an owner (the bearer principal, or "" for anonymous requestors, whose
// unguessable task ids are their only claim), never to an MCP session or a
// connection: it outlives both, and dropping a stream does not cancel it.
package tasks

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// Status is a task's state; completed, failed and cancelled are terminal.
type Status string

const (
	Working       Status = "working"
	InputRequired Status = "input_required"
	Completed     Status = "completed"
	Failed        Status = "failed"
	Cancelled     Status = "cancelled"
)

// Terminal reports whether the status never changes again.
func (s Status) Terminal() bool { return s == Completed || s == Failed || s == Cancelled }

// Defaults for zero Options fields.
const (
	DefaultTTL          = time.Hour
	DefaultMaxTTL       = 24 * time.Hour
	DefaultPollInterval = time.Second
	DefaultMaxTasks     = 10000
	DefaultMaxPerOwner  = 100
	DefaultMaxRetained  = 100
	// pageSize is how many tasks one tasks/list page holds.
	pageSize = 50
)

// Errors of the store; the server maps both to -32602.
var (
	// ErrNotFound: no such task for this owner (unknown, purged, or another's).
	ErrNotFound = errors.New("task not found")
	// ErrTerminal: tasks/cancel of a task that has already finished.
	ErrTerminal = errors.New("task is already in a terminal status")
	// ErrFull: too many running tasks, in all or for the client.
	ErrFull = errors.New("too many tasks")
)

// Error is a JSON-RPC error a task's request ended with.
type Error struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

// Outcome is what the underlying request returned: a result or an error.
type Outcome struct {
	Result json.RawMessage
	Error  *Error
	// IsError marks a result that reports a failure (a tool's isError):
	// the task ends failed, and its result is still what was returned.
	IsError bool
}

// RunFunc does a task's work. Its context ends only when the task is
// cancelled or the store closes, never when a connection drops.
type RunFunc func(ctx context.Context) Outcome

// Options configures a Store.
type Options struct {
	// DefaultTTL applies when the requestor asks for none; MaxTTL caps
	// what it may ask for (the actual ttl is always reported).
	DefaultTTL   time.Duration
	MaxTTL       time.Duration
	PollInterval time.Duration
	// MaxTasks bounds the tasks held, running and finished: past it the
	// oldest finished task is dropped before its ttl, and a create is
	// refused only when every task held is running. MaxPerOwner bounds the
	// tasks one client runs at once, and MaxRetained the finished tasks
	// kept per client (its oldest go first), so that no client's tasks
	// crowd out another's. A client is what Create's client names.
	MaxTasks    int
	MaxPerOwner int
	MaxRetained int
	Clock       clock.WithTicker // nil means the real clock
	// OnStatus, if set, is called (outside the store's lock) after every
	// status change, for notifications/tasks/status.
	OnStatus func(Snapshot)
	// Shared, if set, holds the tasks for every replica (see Shared);
	// nil keeps them in this process only.
	Shared Shared
	// Lease and ResultPoll apply with Shared (zero: the defaults).
	Lease      time.Duration
	ResultPoll time.Duration
	// Settling, if set, reports that the shared store is out of reach or
	// just came back: a lease that lapsed then may only have gone
	// unrenewed in the outage, so no task is failed for it.
	Settling func() bool
}

// Snapshot is a task as a requestor sees it.
type Snapshot struct {
	ID            string
	Owner         string
	Status        Status
	StatusMessage string
	CreatedAt     time.Time
	LastUpdatedAt time.Time
	TTL           time.Duration
	PollInterval  time.Duration
	// Outcome is set once the status is completed or failed.
	Outcome *Outcome
}

type task struct {
	Snapshot
	client string // what the limits count it against (see Create)
	cancel context.CancelFunc
	done   chan struct{} // closed at the terminal status
	// unsynced: its terminal status is not in the shared store yet (it
	// was out of reach); renew stores it.
	unsynced bool
}

// Store holds tasks in memory; a process restart loses them.
type Store struct {
	opts Options
	ctx  context.Context
	stop context.CancelFunc
	wg   sync.WaitGroup

	mu    sync.Mutex
	tasks map[string]*task
	order []string // ids by creation, for tasks/list
}

// New returns an empty store; Run sweeps expired tasks.
func New(opts Options) *Store {
	if opts.DefaultTTL <= 0 {
		opts.DefaultTTL = DefaultTTL
	}
	if opts.MaxTTL <= 0 {
		opts.MaxTTL = DefaultMaxTTL
	}
	opts.DefaultTTL = min(opts.DefaultTTL, opts.MaxTTL)
	if opts.PollInterval <= 0 {
		opts.PollInterval = DefaultPollInterval
	}
	if opts.MaxTasks <= 0 {
		opts.MaxTasks = DefaultMaxTasks
	}
	if opts.MaxPerOwner <= 0 {
		opts.MaxPerOwner = DefaultMaxPerOwner
	}
	if opts.MaxRetained <= 0 {
		opts.MaxRetained = DefaultMaxRetained
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.Lease <= 0 {
		opts.Lease = DefaultLease
	}
	if opts.ResultPoll <= 0 {
		opts.ResultPoll = DefaultResultPoll
	}
	ctx, stop := context.WithCancel(context.Background())
	return &Store{opts: opts, ctx: ctx, stop: stop, tasks: map[string]*task{}}
}

// NewID returns a task id: 26 base32 characters of crypto randomness (130
// bits), so an anonymous requestor's id cannot be guessed.
func NewID() string { return rand.Text() }

// Create stores a working task for owner and starts run. The task is in
// the store when Create returns, so a tasks/get sent right after the
// CreateTaskResult resolves. ttl nil means the default; it is capped.
// client is what the limits count the task against ("" means owner): the
// principal, or something finer for anonymous requestors, who share the
// empty owner.
func (s *Store) Create(owner, client string, ttl *time.Duration, run RunFunc) (Snapshot, error) {
	if client == "" {
		client = owner
	}
	now := s.opts.Clock.Now()
	t := s.opts.DefaultTTL
	if ttl != nil {
		t = min(max(*ttl, 0), s.opts.MaxTTL)
	}
	s.mu.Lock()
	s.purgeLocked(now)
	if !s.roomLocked(client) {
		s.mu.Unlock()
		return Snapshot{}, ErrFull
	}
	ctx, cancel := context.WithCancel(s.ctx)
	k := &task{Snapshot: Snapshot{
		ID: NewID(), Owner: owner, Status: Working, CreatedAt: now, LastUpdatedAt: now,
		TTL: t, PollInterval: s.opts.PollInterval,
	}, client: client, cancel: cancel, done: make(chan struct{})}
	s.tasks[k.ID] = k
	s.order = append(s.order, k.ID)
	snap := k.Snapshot
	s.mu.Unlock()
	if s.opts.Shared != nil {
		pctx, pcancel := s.op()
		_, err := s.opts.Shared.Put(pctx, snap, now.Add(s.opts.Lease), true)
		pcancel()
		if err != nil {
			s.mu.Lock()
			delete(s.tasks, k.ID)
			s.order = slices.DeleteFunc(s.order, func(id string) bool { return id == k.ID })
			s.mu.Unlock()
			cancel()
			return Snapshot{}, fmt.Errorf("storing task: %w", err)
		}
	}

	s.wg.Go(func() {
		out := run(ctx)
		if s.ctx.Err() != nil {
			// The store closes (shutdown or restart): the work was cut.
			s.finish(k, Failed, lostOutcome(ShutdownMessage), ShutdownMessage)
			return
		}
		st := Completed
		if out.Error != nil || out.IsError {
			st = Failed
		}
		s.finish(k, st, &out, "")
	})
	return snap, nil
}

// roomLocked makes room for a new task of client, dropping finished tasks
// (client's own past MaxRetained, then the oldest of all past MaxTasks),
// and reports whether there is room: false when client runs MaxPerOwner
// tasks, or every task held is running.
func (s *Store) roomLocked(client string) bool {
	running, finished := 0, 0
	for _, k := range s.tasks {
		switch {
		case k.client != client:
		case k.Status.Terminal():
			finished++
		default:
			running++
		}
	}
	if running >= s.opts.MaxPerOwner {
		return false
	}
	s.dropFinishedLocked(finished-s.opts.MaxRetained+1, func(k *task) bool { return k.client == client })
	s.dropFinishedLocked(len(s.tasks)-s.opts.MaxTasks+1, func(*task) bool { return true })
	return len(s.tasks) < s.opts.MaxTasks
}

// dropFinishedLocked drops up to n of the oldest finished tasks that match.
// On a shared store they stay readable there until their ttl.
func (s *Store) dropFinishedLocked(n int, match func(*task) bool) {
	if n <= 0 {
		return
	}
	s.order = slices.DeleteFunc(s.order, func(id string) bool {
		k := s.tasks[id]
		if n == 0 || k == nil || !k.Status.Terminal() || !match(k) {
			return false
		}
		delete(s.tasks, id)
		n--
		return true
	})
}

// finish moves k to a terminal status unless it has one already; it
// reports whether it did.
func (s *Store) finish(k *task, st Status, out *Outcome, msg string) bool {
	s.mu.Lock()
	if k.Status.Terminal() {
		s.mu.Unlock()
		return false
	}
	snap := k.Snapshot
	s.mu.Unlock()
	snap.Status, snap.Outcome, snap.StatusMessage = st, out, msg
	snap.LastUpdatedAt = s.opts.Clock.Now()
	unsynced := false
	if s.opts.Shared != nil {
		// A terminal status stored first (a cancel on another replica) wins.
		ctx, cancel := s.op()
		stored, err := s.opts.Shared.Put(ctx, snap, snap.LastUpdatedAt, false)
		switch {
		case err == nil && stored.Status.Terminal():
			snap = stored
		case err != nil && !errors.Is(err, ErrNotFound):
			unsynced = true // the store is out of reach: renew stores it later
		}
		cancel()
	}
	s.mu.Lock()
	k.unsynced = unsynced
	s.mu.Unlock()
	return s.finishLocal(k, snap)
}

// finishLocal gives k the terminal snapshot snap unless it has one already.
func (s *Store) finishLocal(k *task, snap Snapshot) bool {
	s.mu.Lock()
	if k.Status.Terminal() {
		s.mu.Unlock()
		return false
	}
	k.Snapshot = snap
	close(k.done)
	s.mu.Unlock()
	k.cancel()
	if s.opts.OnStatus != nil {
		s.opts.OnStatus(snap)
	}
	return true
}

// lookupLocked finds owner's live task id: another owner's task is
// reported as not found, exactly like a missing one.
func (s *Store) lookupLocked(owner, id string) (*task, error) {
	k, ok := s.tasks[id]
	if !ok || k.Owner != owner || s.expiredLocked(k, s.opts.Clock.Now()) {
		return nil, fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	return k, nil
}

// expiredLocked: a terminal task is deleted once ttl has passed since its
// creation; a running one is kept until it ends.
func (s *Store) expiredLocked(k *task, now time.Time) bool { return expired(k.Snapshot, now) }

func expired(k Snapshot, now time.Time) bool {
	return k.Status.Terminal() && !now.Before(k.CreatedAt.Add(k.TTL))
}

// Get returns owner's task id.
func (s *Store) Get(owner, id string) (Snapshot, error) {
	if s.opts.Shared != nil {
		return s.getShared(owner, id)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k, err := s.lookupLocked(owner, id)
	if err != nil {
		return Snapshot{}, err
	}
	return k.Snapshot, nil
}

// Result waits until owner's task id is terminal (or ctx ends) and returns
// it. It can be called any number of times until the task is purged.
func (s *Store) Result(ctx context.Context, owner, id string) (Snapshot, error) {
	if s.opts.Shared != nil {
		return s.sharedResult(ctx, owner, id)
	}
	s.mu.Lock()
	k, err := s.lookupLocked(owner, id)
	s.mu.Unlock()
	if err != nil {
		return Snapshot{}, err
	}
	select {
	case <-k.done:
	case <-ctx.Done():
		return Snapshot{}, ctx.Err()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return k.Snapshot, nil
}

// Cancel cancels owner's task id. A terminal task is refused with
// ErrTerminal; the task is cancelled before Cancel returns.
func (s *Store) Cancel(owner, id string) (Snapshot, error) {
	if s.opts.Shared != nil {
		return s.sharedCancel(owner, id)
	}
	s.mu.Lock()
	k, err := s.lookupLocked(owner, id)
	if err == nil && k.Status.Terminal() {
		err = fmt.Errorf("%w: %q is %s", ErrTerminal, id, k.Status)
	}
	s.mu.Unlock()
	if err != nil {
		return Snapshot{}, err
	}
	s.finish(k, Cancelled, nil, "cancelled by the requestor")
	return s.Get(owner, id)
}

// List returns a page of owner's tasks, oldest first, after cursor (a task
// id from a previous page's next; "" for the first page). next is "" on
// the last page.
func (s *Store) List(owner, cursor string) (page []Snapshot, next string, err error) {
	if s.opts.Shared != nil {
		return s.sharedList(owner, cursor)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.opts.Clock.Now()
	start := 0
	if cursor != "" {
		i := slices.Index(s.order, cursor)
		if i < 0 {
			return nil, "", fmt.Errorf("invalid cursor %q", cursor)
		}
		start = i + 1
	}
	for _, id := range s.order[start:] {
		k := s.tasks[id]
		if k == nil || k.Owner != owner || s.expiredLocked(k, now) {
			continue
		}
		if len(page) == pageSize {
			return page, page[len(page)-1].ID, nil
		}
		page = append(page, k.Snapshot)
	}
	return page, "", nil
}

// Sweep deletes expired tasks now (Run does it every poll interval).
func (s *Store) Sweep() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.purgeLocked(s.opts.Clock.Now())
}

func (s *Store) purgeLocked(now time.Time) {
	kept := s.order[:0]
	for _, id := range s.order {
		if k := s.tasks[id]; k != nil && s.expiredLocked(k, now) {
			delete(s.tasks, id)
			continue
		}
		kept = append(kept, id)
	}
	s.order = kept
}

// Len reports how many tasks the store holds, expired ones not yet swept included.
func (s *Store) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.tasks)
}

// Run sweeps expired tasks until ctx ends.
func (s *Store) Run(ctx context.Context) {
	t := s.opts.Clock.NewTicker(max(s.opts.PollInterval, time.Second))
	defer t.Stop()
	var renew <-chan time.Time
	if s.opts.Shared != nil {
		r := s.opts.Clock.NewTicker(s.opts.Lease / 5)
		defer r.Stop()
		renew = r.C()
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
			s.Sweep()
		case <-renew:
			s.renew()
		}
	}
}

// Close cancels every running task and waits for their work to return.
func (s *Store) Close() {
	s.stop()
	s.wg.Wait()
}
