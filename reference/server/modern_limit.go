package server

import (
	"fmt"
	"net/http"
	"sync"
)

// DefaultMaxSessionlessPerClient bounds the sessionless requests one client
// has in flight, as MaxCallsPerSession bounds a session's calls.
const DefaultMaxSessionlessPerClient = 100

// inflight counts the sessionless requests in flight per client: with no
// session to hang a count on, a client could otherwise park thousands of
// calls, each holding a goroutine and a connection for up to an hour.
type inflight struct {
	mu sync.Mutex
	n  map[string]int
}

// reserveSessionless books a sessionless request of r, or refuses it while
// its client (the principal when authenticated, else the client address
// the anonymous session rate counts) has MaxSessionlessPerClient of them.
// The caller runs release when the request ends.
func (s *Server) reserveSessionless(r *http.Request, principal string) (release func(), err error) {
	key, who := "principal "+principal, fmt.Sprintf("principal %q", principal)
	if principal == "" {
		addr := s.clientAddr(r)
		key, who = "address "+addr, "address "+addr
	}
	f := &s.modern.inflight
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n[key] >= s.cfg.MaxSessionlessPerClient {
		return nil, fmt.Errorf("too many requests in flight from %s (limit %d); retry once one of them has ended", who, s.cfg.MaxSessionlessPerClient)
	}
	f.n[key]++
	return func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.n[key]--; f.n[key] == 0 {
			delete(f.n, key) // an idle client holds no entry
		}
	}, nil
}

// SessionlessInFlight reports how many 2026-07-28 requests are being
// served, of every client.
func (s *Server) SessionlessInFlight() int {
	f := &s.modern.inflight
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.n {
		n += c
	}
	return n
}
