package jobs

import (
	"context"
	"time"

	"k8s.io/utils/clock"
)

// Sweep removes expired tokens and completed jobs past their retention.
// Running jobs are never removed.
func (s *Store) Sweep() {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clk.Now()
	for tok, e := range s.tokens {
		if !now.Before(e.expires) {
			delete(s.tokens, tok)
		}
	}
	for _, j := range s.jobs {
		if s.jobExpiredLocked(j, now) {
			s.dropLocked(j, false) // its token has a TTL of its own
		}
	}
	s.compactLocked()
}

// Run calls Sweep every half of the shorter of TokenTTL and JobTTL (at least
// one second) until ctx is done or the store is closed.
func (s *Store) Run(ctx context.Context) {
	every := s.sweepEvery()
	var tick <-chan time.Time
	rearm := func() {}
	// clock.Clock does not require NewTicker, though RealClock and
	// FakeClock both have it; otherwise fall back to a rearmed timer.
	if tc, ok := s.clk.(clock.WithTicker); ok {
		t := tc.NewTicker(every)
		defer t.Stop()
		tick = t.C()
	} else {
		t := s.clk.NewTimer(every)
		defer t.Stop()
		tick = t.C()
		rearm = func() { t.Reset(every) }
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.done:
			return
		case <-tick:
			s.Sweep()
			rearm()
		}
	}
}

// sweepEvery is half the shorter TTL, so nothing outlives its TTL by more
// than half again, but at least a second to keep an idle store cheap.
func (s *Store) sweepEvery() time.Duration {
	d := min(s.tokenTTL, s.jobTTL) / 2
	return max(d, time.Second)
}
