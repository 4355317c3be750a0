package eventstore

import (
	"context"
	"time"

	"k8s.io/utils/clock"
)

// Sweep evicts what is older than MaxAge now: events, resume points,
// openings and tombstones. It does nothing if MaxAge is not set. Records
// are in append order, so it stops at the first one young enough to keep.
func (s *Store) Sweep() {
	if s.maxAge <= 0 {
		return
	}
	now := s.clk.Since(s.epoch) // before s.mu, as in Append
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.order.len() > 0 {
		if r := s.order.front(); !r.stale() && now-r.at <= s.maxAge {
			return
		}
		s.popOldestLocked(now)
	}
}

// Run calls Sweep every CleanupInterval until ctx is done.
func (s *Store) Run(ctx context.Context) {
	var tick <-chan time.Time
	rearm := func() {}
	// clock.Clock does not require NewTicker, though RealClock and
	// FakeClock both have it; otherwise fall back to a rearmed timer.
	if tc, ok := s.clk.(clock.WithTicker); ok {
		t := tc.NewTicker(s.interval)
		defer t.Stop()
		tick = t.C()
	} else {
		t := s.clk.NewTimer(s.interval)
		defer t.Stop()
		tick = t.C()
		rearm = func() { t.Reset(s.interval) }
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick:
			s.Sweep()
			rearm()
		}
	}
}
