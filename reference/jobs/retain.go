package jobs

import "time"

// CancelSession cancels the running jobs started in session (it was
// deleted or expired: nobody is left to ask for their results) and reports
// how many there were. They end as StatusCancelled at now, with no resume
// token. The caller gives the time: a session expires in a clock callback,
// where a fake clock must not be asked.
func (s *Store) CancelSession(session string, now time.Time) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, j := range s.jobs {
		if j.status == StatusRunning && j.owner.Session == session {
			j.status = StatusCancelled
			j.completedAt = now
			close(j.stop)
			s.endLocked(j)
			s.mirrorJob(j, s.snapshotLocked(j))
			n++
		}
	}
	return n
}

// endLocked books a job that completed or was cancelled: its running slots
// are freed, and it is retained within the retention bounds, which drop the
// oldest ended jobs (and their resume tokens) first. Lists are in end order,
// so entries already dropped (by a bound or a sweep) are at their fronts.
func (s *Store) endLocked(j *job) {
	s.running--
	oj := s.owners[j.owner.Key()]
	oj.running--
	oj.ended = append(oj.ended, j)
	s.finished = append(s.finished, j)
	s.retained++
	close(j.finished)
	for len(oj.ended) > s.maxRetainedPerOwner {
		s.dropLocked(oj.ended[0], true)
		oj.ended = oj.ended[1:]
	}
	for s.retained > s.maxRetained {
		s.dropLocked(s.finished[0], true)
		s.finished = s.finished[1:]
	}
}

// dropLocked forgets an ended job, and its resume token if withToken (a
// retention bound, not an expiry: the token would otherwise outlive it).
func (s *Store) dropLocked(j *job, withToken bool) {
	if j.dropped {
		return
	}
	j.dropped = true
	s.retained--
	delete(s.jobs, j.id)
	if withToken && j.token != "" {
		delete(s.tokens, j.token)
	}
}

// compactLocked removes dropped jobs from the ended lists, and owners with
// nothing left (Sweep calls it).
func (s *Store) compactLocked() {
	keep := func(l []*job) []*job {
		var out []*job
		for _, j := range l {
			if !j.dropped {
				out = append(out, j)
			}
		}
		return out
	}
	s.finished = keep(s.finished)
	for k, oj := range s.owners {
		oj.ended = keep(oj.ended)
		if oj.running == 0 && len(oj.ended) == 0 {
			delete(s.owners, k)
		}
	}
}
