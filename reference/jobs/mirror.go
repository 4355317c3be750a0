package jobs

import "time"

// Mirror shares jobs and resume tokens with other processes (replicas of
// one deployment): every change of a job is saved to it, and a job or token
// this store does not hold is looked up there. Jobs still run in the
// process that started them.
type Mirror interface {
	// SaveJob records a job's state for ttl.
	SaveJob(principal string, snap Snapshot, ttl time.Duration)
	// LoadJob returns a job saved by any process.
	LoadJob(jobID string) (principal string, snap Snapshot, ok bool)
	// SaveToken records a resume token for ttl.
	SaveToken(token, principal, convID string, turn int, ttl time.Duration)
	// LoadToken returns a token saved by any process, with its remaining life.
	LoadToken(token string) (principal, convID string, turn int, ok bool)
}

// mirrorTTL is how long a job's state is kept in the mirror: its longest
// run, then its retention.
func (s *Store) mirrorTTL(j *job) time.Duration {
	return time.Duration(j.steps)*j.interval + s.jobTTL
}

// mirrorJob saves j's snapshot, taken under s.mu, to the mirror.
func (s *Store) mirrorJob(j *job, snap Snapshot) {
	if s.mirror != nil {
		s.mirror.SaveJob(j.owner.Principal, snap, s.mirrorTTL(j))
	}
}

// mirroredToken looks a resume token this store does not hold up in the mirror.
func (s *Store) mirroredToken(token string) (tokenEntry, bool) {
	if s.mirror == nil {
		return tokenEntry{}, false
	}
	p, conv, turn, ok := s.mirror.LoadToken(token)
	// The mirror keeps a token only for its life: a found one is valid now.
	return tokenEntry{principal: p, convID: conv, turn: turn, expires: s.clk.Now().Add(time.Minute)}, ok
}

// Holds reports whether this store holds job jobID, if jobID is set, and
// resume token token, if token is set: what it answers without the mirror,
// which may be out of reach.
func (s *Store) Holds(jobID, token string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if jobID != "" {
		if _, ok := s.lookupLocked(jobID); !ok {
			return false
		}
	}
	if token != "" {
		if _, ok := s.tokens[token]; !ok {
			return false
		}
	}
	return true
}
