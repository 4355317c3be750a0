package server

import (
	"errors"
	"fmt"
	"net"
	"time"
)

// Per-client session limits: a cap per principal, and for anonymous
// clients, who share one principal, a rate of new sessions per remote
// address (a token bucket on the server's clock).
const (
	DefaultMaxSessionsPerPrincipal = 1000
	DefaultAnonymousSessionRate    = 1.0 // new sessions per second per address
	DefaultAnonymousSessionBurst   = 60
)

var (
	// errPrincipalSessions and errSessionRate are answered with 429.
	errPrincipalSessions = errors.New("too many sessions for this principal")
	errSessionRate       = errors.New("too many new sessions from this address")
)

// bucket is a token bucket of new anonymous sessions for one address.
type bucket struct {
	tokens float64
	at     time.Time
}

// refill brings b up to now and reports whether it is full.
func (b *bucket) refill(now time.Time, rate, burst float64) bool {
	b.tokens = min(burst, b.tokens+now.Sub(b.at).Seconds()*rate)
	b.at = now
	return b.tokens >= burst
}

// admitLocked checks a new session of principal from remote against the
// per-client limits and books it. s.mu must be held.
func (s *Server) admitLocked(principal, remote string, now time.Time) error {
	if principal != "" {
		if n := s.perPrincipal[principal]; n >= s.cfg.MaxSessionsPerPrincipal {
			return fmt.Errorf("%w (limit %d)", errPrincipalSessions, s.cfg.MaxSessionsPerPrincipal)
		}
		return nil
	}
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	b := s.buckets[host]
	if b == nil {
		b = &bucket{tokens: float64(s.cfg.AnonymousSessionBurst), at: now}
		s.buckets[host] = b
	}
	b.refill(now, s.cfg.AnonymousSessionRate, float64(s.cfg.AnonymousSessionBurst))
	if b.tokens < 1 {
		return fmt.Errorf("%w (at most %g per second, bursts of %d)", errSessionRate, s.cfg.AnonymousSessionRate, s.cfg.AnonymousSessionBurst)
	}
	b.tokens--
	return nil
}

// pruneBuckets forgets addresses whose bucket has refilled: they are back
// to the state a new address starts in. The reaper calls it.
func (s *Server) pruneBuckets(now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for host, b := range s.buckets {
		if b.refill(now, s.cfg.AnonymousSessionRate, float64(s.cfg.AnonymousSessionBurst)) {
			delete(s.buckets, host)
		}
	}
}

// looksIssued reports whether id has the form of the ids this server
// issues (rand.Text: 26 characters of the base32 alphabet). Only such ids
// get a recovery session.
func looksIssued(id string) bool {
	if len(id) != 26 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; !(c >= 'A' && c <= 'Z' || c >= '2' && c <= '7') {
			return false
		}
	}
	return true
}
