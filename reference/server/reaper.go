package server

import (
	"context"
	"time"
)

// runReaper checks the table every reaper interval until ctx ends. A browser
// refresh sends no close signal, so idleness is the only way to find orphans.
func (s *Server) runReaper(ctx context.Context) {
	t := s.cfg.Clock.NewTicker(s.cfg.ReaperInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
			s.Reap()
			s.pruneBuckets(s.cfg.Clock.Now())
		}
	}
}

// Reap starts the grace period of every session idle for longer than the
// idle threshold. A session with a request in flight, a connected GET stream
// included, is never idle (GRACE-LIVE-STREAM). Run calls it on every tick.
func (s *Server) Reap() {
	if s.shared {
		s.reapShared()
		return
	}
	now := s.cfg.Clock.Now()
	s.mu.Lock()
	all := make([]*session, 0, len(s.sessions))
	for _, sess := range s.sessions {
		all = append(all, sess)
	}
	s.mu.Unlock()
	for _, sess := range all {
		if idle, ok := s.startGrace(sess, now); ok {
			s.log.Info("session grace started", "session", sess.id, "idle", idle.Round(time.Millisecond), "expires_in", s.cfg.GracePeriod)
		}
	}
}

// startGrace starts sess's grace period if it is idle. The clock is not
// called under the session lock: a fake clock runs timer callbacks, which
// take that lock, under its own.
func (s *Server) startGrace(sess *session, now time.Time) (time.Duration, bool) {
	sess.mu.Lock()
	idle := now.Sub(sess.lastActivity)
	if sess.gone || sess.inGrace || sess.inflight > 0 || idle <= s.cfg.IdleThreshold {
		sess.mu.Unlock()
		return idle, false
	}
	sess.inGrace = true
	sess.graceSeq++
	seq := sess.graceSeq
	sess.mu.Unlock()
	due := now.Add(s.cfg.GracePeriod)
	s.cfg.Clock.AfterFunc(s.cfg.GracePeriod, func() {
		// A request during the grace period moved graceSeq on: no expiry.
		s.removeAt(sess, "expired", func() bool { return sess.inGrace && sess.graceSeq == seq }, due)
	})
	return idle, true
}
