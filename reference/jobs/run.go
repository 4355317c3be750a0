package jobs

import (
	"crypto/rand"
	"fmt"
)

// run advances j one step per interval on the store's clock until it
// completes or the store is closed. j.interval is positive (Start
// completes a job without one).
func (s *Store) run(j *job) {
	defer s.wg.Done()

	timer := s.clk.NewTimer(j.interval)
	defer timer.Stop()
	for {
		select {
		case <-timer.C():
		case <-s.done:
			return
		case <-j.stop:
			return
		}

		s.mu.Lock()
		if j.status != StatusRunning { // cancelled meanwhile
			s.mu.Unlock()
			return
		}
		j.progress++
		last := j.progress == j.steps
		if last {
			s.completeLocked(j)
		}
		snap := s.snapshotLocked(j)
		s.mu.Unlock()
		s.mirrorJob(j, snap)
		if last {
			return
		}
		// Rearm only after progress is recorded, so anyone who sees the
		// timer armed again also sees the step.
		timer.Reset(j.interval)
	}
}

func (s *Store) completeLocked(j *job) {
	now := s.clk.Now()
	j.status = StatusCompleted
	j.completedAt = now
	j.result = fmt.Sprintf("conversation %s turn %d: completed %d steps", j.convID, j.turn, j.steps)
	j.token = rand.Text()
	s.tokens[j.token] = tokenEntry{principal: j.owner.Principal, convID: j.convID, turn: j.turn, expires: now.Add(s.tokenTTL)}
	if s.mirror != nil {
		s.mirror.SaveToken(j.token, j.owner.Principal, j.convID, j.turn, s.tokenTTL)
	}
	s.endLocked(j)
}
