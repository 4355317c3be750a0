package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/mcp-conform/mcp-conform/reference/store"
)

// A shared store out of reach (Redis down, stopped or cut off) is an
// outage, not the end of any session: what needs the store is answered
// 503 with Retry-After, at once (the store fails fast while a probe finds
// it down; see redisstore), and what this replica holds in memory it
// serves:
//
//   - its own sessions' requests that need nothing of the store: the
//     go-sdk's answers, their streams written live without being stored
//     (torn: such a stream cannot be resumed, and says so);
//   - tasks running here (tasks/get, tasks/result).
//
// Everything else gets 503: an id this replica does not hold (it cannot
// tell a live session from a gone one), initialize, DELETE, the
// standalone GET and resumes (served from the store), the counter, task
// requests about tasks elsewhere. Once the store answers again, each
// replica records its sessions' activity and torn streams there, renews
// its leases, and for settleAfter judges no lease lapsed and expires no
// session: the others' renewals come first.

// retryAfter is the Retry-After of a 503 for an unreachable store, in
// seconds: the store is tried again four times a second.
const retryAfter = "1"

// writeStoreUnavailable answers a request that needs the store while it is
// out of reach.
func writeStoreUnavailable(w http.ResponseWriter, err error, id json.RawMessage) {
	w.Header().Set("Retry-After", retryAfter)
	writeRPCErrorID(w, http.StatusServiceUnavailable, CodeInternalError, "Service Unavailable: "+err.Error()+"; retry shortly",
		map[string]string{"reason": "store_unavailable"}, id)
}

// unavailable reports whether err means the store was out of reach.
func unavailable(err error) bool { return errors.Is(err, store.ErrUnavailable) }

// storeDown reports whether the shared store is out of reach now.
func (s *Server) storeDown() bool {
	av, ok := s.store.(store.Availability)
	if !ok {
		return false
	}
	down, _ := av.Outage()
	return down
}

// settleAfter is how long after an outage a replica judges no lease (of a
// call or a task) lapsed and expires no session: every replica renews its
// leases and records its activity well within it (leaseTTL, at least five
// reaper intervals).
func (s *Server) settleAfter() time.Duration { return leaseTTL(s.cfg.ReaperInterval) }

// settling reports whether the store is out of reach or came back less
// than settleAfter ago: leases and activity it holds may be stale.
func (s *Server) settling() bool {
	av, ok := s.store.(store.Availability)
	if !ok {
		return false
	}
	down, back := av.Outage()
	return down || (!back.IsZero() && time.Since(back) < s.settleAfter())
}

// watchOutages runs afterOutage each time the store comes back, until ctx ends.
func (s *Server) watchOutages(ctx context.Context) {
	av, ok := s.store.(store.Availability)
	if !ok {
		return
	}
	cancel := av.OnRecover(func() {
		if ctx.Err() == nil {
			s.afterOutage()
		}
	})
	<-ctx.Done()
	cancel()
}

// afterOutage records in the store what this replica did while it was out
// of reach: each session's activity, the streams it could not store, the
// leases of its calls.
func (s *Server) afterOutage() {
	ctx := context.Background()
	s.mu.Lock()
	all := make([]*session, 0, len(s.sessions))
	for _, sess := range s.sessions {
		all = append(all, sess)
	}
	s.mu.Unlock()
	now := s.cfg.Clock.Now()
	for _, sess := range all {
		sess.mu.Lock()
		at := sess.lastActivity
		if sess.inflight > 0 {
			at = now
		}
		sess.mu.Unlock()
		s.store.Touch(ctx, sess.id, at)
		sess.markTorn(s.events)
		sess.renewLeases(ctx)
	}
	s.log.Info("session store reachable again", "sessions", len(all))
}

// needsStore reports whether a POST body is a call that only the store can
// answer: counter_increment, whose counter lives there; job_get of a job
// and job_start with a resume token that this replica does not hold.
func (s *Server) needsStore(body []byte) bool {
	var m struct {
		Method string `json:"method"`
		Params struct {
			Name      string `json:"name"`
			Arguments struct {
				JobID       string `json:"job_id"`
				ResumeToken string `json:"resume_token"`
			} `json:"arguments"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &m) != nil || m.Method != "tools/call" {
		return false
	}
	args := m.Params.Arguments
	switch m.Params.Name {
	case "counter_increment":
		return true
	case "job_get":
		return !s.jobs.Holds(args.JobID, "")
	case "job_start":
		return args.ResumeToken != "" && !s.jobs.Holds("", args.ResumeToken)
	}
	return false
}

// tearer is an event store that can mark a stream whose events it missed
// (redisstore): a resume of it is refused rather than replayed with a gap.
type tearer interface {
	Tear(sessionID, streamID string) error
}

// tear records that stream's events could not all be stored: its later
// events are not stored either (their indexes would not match the go-sdk's)
// and a resume of it is refused.
func (s *session) tear(stream string) {
	s.tmu.Lock()
	defer s.tmu.Unlock()
	if s.torn == nil {
		s.torn = map[string]bool{}
	}
	if _, ok := s.torn[stream]; !ok {
		s.torn[stream] = false
		s.ntorn.Add(1)
	}
}

// isTorn reports whether stream is torn.
func (s *session) isTorn(stream string) bool {
	if s.ntorn.Load() == 0 {
		return false
	}
	s.tmu.Lock()
	defer s.tmu.Unlock()
	_, ok := s.torn[stream]
	return ok
}

// markTorn records the torn streams in ev, if it is a store that can mark
// them, so that other replicas refuse their resumes too.
func (s *session) markTorn(ev any) {
	t, ok := ev.(tearer)
	if !ok || s.ntorn.Load() == 0 {
		return
	}
	s.tmu.Lock()
	var todo []string
	for id, marked := range s.torn {
		if !marked {
			todo = append(todo, id)
		}
	}
	s.tmu.Unlock()
	if len(todo) == 0 {
		return
	}
	for _, id := range todo {
		if t.Tear(s.id, id) == nil {
			s.tmu.Lock()
			s.torn[id] = true
			s.tmu.Unlock()
		}
	}
}
