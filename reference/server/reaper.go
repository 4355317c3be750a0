package server

import (
	"context"
	"time"

	"k8s.io/utils/clock"
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
		}
	}
}

// Reap starts the grace period of every session idle for longer than the
// idle threshold. A session with a request in flight, a connected GET stream
// included, is never idle (GRACE-LIVE-STREAM). Run calls it on every tick.
func (s *Server) Reap() {
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

func (s *Server) startGrace(sess *session, now time.Time) (time.Duration, bool) {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	idle := now.Sub(sess.lastActivity)
	if sess.gone || sess.graceTimer != nil || sess.inflight > 0 || idle <= s.cfg.IdleThreshold {
		return idle, false
	}
	var timer clock.Timer
	timer = s.cfg.Clock.AfterFunc(s.cfg.GracePeriod, func() {
		// A request during the grace period cleared or replaced the timer.
		s.remove(sess, "expired", func() bool { return sess.graceTimer == timer })
	})
	sess.graceTimer = timer
	return idle, true
}
