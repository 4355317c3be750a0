package store

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcp-conform/mcp-conform/reference/eventstore"
	"github.com/mcp-conform/mcp-conform/reference/jobs"
	"github.com/mcp-conform/mcp-conform/reference/tasks"
)

// Memory is the in-process Store: one replica owns every session, and its
// own reaper decides expiry (see the server's reaper), so the grace and
// routing methods only keep the records consistent.
type Memory struct {
	events *eventstore.Store

	mu       sync.RWMutex
	sessions map[string]*memSession
}

type memSession struct {
	rec       Session
	counter   atomic.Int64
	active    time.Time
	grace     time.Time // zero: not in grace
	listeners int
	delivered int
}

// NewMemory returns a Memory store over events.
func NewMemory(events *eventstore.Store) *Memory {
	return &Memory{events: events, sessions: map[string]*memSession{}}
}

func (m *Memory) Shared() bool   { return false }
func (m *Memory) Events() Events { return m.events }
func (m *Memory) Close() error   { return nil }

// Jobs is nil: the jobs store of the one process holds every job.
func (m *Memory) Jobs() jobs.Mirror { return nil }

func (m *Memory) Tasks() tasks.Shared { return nil }

func (m *Memory) Create(_ context.Context, s Session, now time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sessions[s.ID] = &memSession{rec: s, active: now, delivered: -1}
	return nil
}

func (m *Memory) Save(_ context.Context, s Session) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	ms := m.sessions[s.ID]
	if ms == nil {
		return ErrGone
	}
	ms.rec = s
	return nil
}

func (m *Memory) get(id string) *memSession {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.sessions[id]
}

func (m *Memory) Load(_ context.Context, id string) (Session, bool, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if ms := m.sessions[id]; ms != nil {
		return ms.rec, true, nil
	}
	return Session{}, false, nil
}

func (m *Memory) Touch(_ context.Context, id string, now time.Time) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ms := m.sessions[id]
	if ms == nil {
		return false, ErrGone
	}
	ms.active = now
	cancelled := !ms.grace.IsZero()
	ms.grace = time.Time{}
	return cancelled, nil
}

func (m *Memory) Remove(_ context.Context, id string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.sessions[id] == nil {
		return false, nil
	}
	delete(m.sessions, id)
	return true, nil
}

func (m *Memory) Increment(_ context.Context, id string) (int64, error) {
	ms := m.get(id)
	if ms == nil {
		return 0, ErrGone
	}
	return ms.counter.Add(1), nil
}

func (m *Memory) StartGrace(_ context.Context, idleSince, deadline time.Time) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var ids []string
	for id, ms := range m.sessions {
		if ms.grace.IsZero() && ms.active.Before(idleSince) {
			ms.grace = deadline
			ids = append(ids, id)
		}
	}
	return ids, nil
}

func (m *Memory) Expire(_ context.Context, now time.Time) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var ids []string
	for id, ms := range m.sessions {
		if !ms.grace.IsZero() && !ms.grace.After(now) {
			delete(m.sessions, id)
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// Gone never reports anything: no other process shares this store.
func (m *Memory) Gone(context.Context) <-chan string { return nil }

func (m *Memory) Listen(_ context.Context, id string, delta int) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if ms := m.sessions[id]; ms != nil {
		ms.listeners += delta
	}
	return nil
}

func (m *Memory) Listening(_ context.Context, id string) (bool, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	ms := m.sessions[id]
	return ms != nil && ms.listeners > 0, nil
}

func (m *Memory) Delivered(_ context.Context, id string, index int) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if ms := m.sessions[id]; ms != nil && index > ms.delivered {
		ms.delivered = index
	}
	return nil
}

func (m *Memory) LastDelivered(_ context.Context, id string) (int, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if ms := m.sessions[id]; ms != nil {
		return ms.delivered, nil
	}
	return -1, nil
}

// errNoFollow: one process sees its own streams through the go-sdk.
var errNoFollow = errors.New("store: the in-memory store has no cross-process routing")

// Follow is not needed in one process: the go-sdk delivers live events.
func (m *Memory) Follow(context.Context, string, string) (<-chan eventstore.Event, error) {
	return nil, errNoFollow
}

// Replay is not needed in one process: the go-sdk replays its streams.
func (m *Memory) Replay(context.Context, string, string, int) ([]eventstore.Event, error) {
	return nil, errNoFollow
}

// Requests is not needed in one process.
func (m *Memory) Requests(context.Context, string, string) int { return 1 }

// Lease does nothing: in one process a call ends with its process.
func (m *Memory) Lease(context.Context, string, string, []json.RawMessage, time.Duration) error {
	return nil
}

// Leased reports every stream held.
func (m *Memory) Leased(context.Context, string, string) (bool, []json.RawMessage, error) {
	return true, nil, nil
}

// Claim is not needed in one process.
func (m *Memory) Claim(context.Context, string, time.Duration) (bool, error) { return true, nil }
