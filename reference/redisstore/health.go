package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcp-conform/mcp-conform/reference/store"
)

// While Redis is out of reach, every operation fails at once with
// store.ErrUnavailable rather than each waiting for its own timeout: the
// first operation that finds Redis unreachable (refused, reset, or no
// answer within opTimeout) marks the store down, and a probe tries Redis
// every probeInterval until it answers.
const (
	probeInterval = 250 * time.Millisecond
	probeTimeout  = time.Second
)

// health is the store's view of Redis's reachability, kept by a go-redis
// hook that every command and pipeline goes through.
type health struct {
	rdb *redis.Client

	mu      sync.Mutex
	down    bool
	cause   error     // why it is down
	back    time.Time // when it last came back
	probing bool
	closed  bool
	stop    chan struct{}
	hooks   map[uint64]func()
	seq     uint64
}

func newHealth(rdb *redis.Client) *health {
	h := &health{rdb: rdb, stop: make(chan struct{}), hooks: map[uint64]func(){}}
	rdb.AddHook(h)
	return h
}

// probeKey marks the probe's own commands, which the guard lets through.
type probeKey struct{}

// guard refuses an operation at once while the store is down.
func (h *health) guard(ctx context.Context) error {
	if ctx.Value(probeKey{}) != nil {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.down {
		return unavailableErr(h.cause)
	}
	return nil
}

// unavailableErr is cause as store.ErrUnavailable.
func unavailableErr(cause error) error {
	if errors.Is(cause, store.ErrUnavailable) {
		return cause
	}
	return fmt.Errorf("%w: %v", store.ErrUnavailable, cause)
}

// unreachable reports whether err, from a command run with ctx, says that
// Redis could not be reached or did not answer in time, rather than that it
// answered (an error reply, a missing key) or that the caller gave up.
func unreachable(ctx context.Context, err error) bool {
	switch {
	case err == nil, errors.Is(err, redis.Nil), errors.Is(err, redis.ErrClosed), errors.Is(err, store.ErrUnavailable):
		return false
	case errors.Is(err, context.Canceled) && ctx.Err() == context.Canceled:
		return false
	}
	var reply redis.Error
	if errors.As(err, &reply) {
		// Replies that mean Redis cannot serve yet, not that it refused.
		for _, p := range []string{"LOADING", "BUSY", "MASTERDOWN", "TRYAGAIN"} {
			if strings.HasPrefix(reply.Error(), p) {
				return true
			}
		}
		return false
	}
	return true
}

// lost marks the store down because of err and returns err as
// store.ErrUnavailable.
func (h *health) lost(err error) error {
	h.mu.Lock()
	if !h.down {
		h.down = true
		h.cause = err
	}
	if !h.probing && !h.closed {
		h.probing = true
		go h.probe()
	}
	h.mu.Unlock()
	return unavailableErr(err)
}

// probe pings Redis every probeInterval until it answers, then marks the
// store up and runs the recovery hooks.
func (h *health) probe() {
	t := time.NewTicker(probeInterval)
	defer t.Stop()
	for {
		select {
		case <-h.stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.WithValue(context.Background(), probeKey{}, true), probeTimeout)
		err := h.rdb.Ping(ctx).Err()
		cancel()
		h.mu.Lock()
		if err != nil {
			h.cause = err
			h.mu.Unlock()
			continue
		}
		h.down, h.cause, h.probing, h.back = false, nil, false, time.Now()
		hooks := make([]func(), 0, len(h.hooks))
		for _, f := range h.hooks {
			hooks = append(hooks, f)
		}
		h.mu.Unlock()
		for _, f := range hooks {
			go f()
		}
		return
	}
}

func (h *health) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.closed {
		h.closed = true
		close(h.stop)
	}
}

// check is what a command's error becomes: store.ErrUnavailable, marking
// the store down, if Redis was out of reach.
func (h *health) check(ctx context.Context, err error) error {
	if unreachable(ctx, err) {
		return h.lost(err)
	}
	return err
}

func (h *health) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *health) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if err := h.guard(ctx); err != nil {
			cmd.SetErr(err)
			return err
		}
		err := next(ctx, cmd)
		if unreachable(ctx, err) {
			err = h.lost(err)
			cmd.SetErr(err)
		}
		return err
	}
}

func (h *health) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if err := h.guard(ctx); err != nil {
			for _, c := range cmds {
				c.SetErr(err)
			}
			return err
		}
		err := next(ctx, cmds)
		if unreachable(ctx, err) {
			err = h.lost(err)
			for _, c := range cmds {
				if c.Err() != nil {
					c.SetErr(err)
				}
			}
		}
		return err
	}
}

// Outage implements store.Availability.
func (s *Store) Outage() (down bool, back time.Time) {
	s.health.mu.Lock()
	defer s.health.mu.Unlock()
	return s.health.down, s.health.back
}

// OnRecover implements store.Availability.
func (s *Store) OnRecover(f func()) (cancel func()) {
	h := s.health
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seq++
	id := h.seq
	h.hooks[id] = f
	return func() {
		h.mu.Lock()
		delete(h.hooks, id)
		h.mu.Unlock()
	}
}

var _ store.Availability = (*Store)(nil)
