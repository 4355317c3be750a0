package serverchecks

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/mcp-conform/mcp-conform/fixtures/servers"
	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/reference/server"
)

// Fixtures that get re-initialize, ownership or reuse after a refresh wrong.
func init() {
	servers.Register(
		servers.Fixture{
			Name:   "reinit-rejected",
			About:  `initialize carrying a session id gets 400 "Server already initialized"`,
			Breaks: []string{"RECREATE-REINIT-200", "RECREATE-OWNER-ONLY"},
			Wrap:   rejectReinitialize,
		},
		servers.Fixture{
			Name:   "reinit-loses-state",
			About:  "re-initialize keeps the session id but starts a fresh session behind it: its state is lost",
			Breaks: []string{"RECREATE-STATE-KEPT", "RECREATE-CONCURRENT", "RECREATE-INFLIGHT"},
			Wrap:   reinitLosesState,
		},
		servers.Fixture{
			Name: "reinit-aborts-calls",
			About: "a re-initialize of a live session cancels the calls still running in it, which never return a result: " +
				"the page refreshed in the middle of a tool loses its answer",
			Breaks: []string{"RECREATE-INFLIGHT"},
			Wrap:   reinitAbortsCalls,
		},
		servers.Fixture{
			Name:   "reinit-forgets-tools",
			About:  "after a re-initialize, tools/list on the session lists no tools: the new transport's server was built without them",
			Breaks: []string{"RECREATE-WORKS-AFTER"},
			Wrap:   reinitForgetsTools,
		},
		servers.Fixture{
			Name:   "reinit-breaks-get",
			About:  "after a re-initialize the session's GET stream gets 409: the old transport still holds it",
			Breaks: []string{"RECREATE-WORKS-AFTER", "RECREATE-CONCURRENT", "RECREATE-INFLIGHT"},
			Wrap:   reinitBreaksGET,
		},
		servers.Fixture{
			Name:   "sessions-unbound",
			About:  "sessions are not bound to the principal that created them: any valid token may use any session",
			Breaks: []string{"RECREATE-OWNER-ONLY"},
			// It lets the other principal in, which RECREATE-OWNER-ONLY grades.
			Wrap: sessionsUnbound,
		},
		servers.Fixture{
			Name: "unbound-and-unknown-400",
			About: "sessions are not bound to their principal (any valid token may use any session), and an unknown session id gets 400: " +
				"the open session is its own defect, not the 400 showing through",
			Breaks: []string{"SESS-UNKNOWN-404", "RECREATE-OWNER-ONLY", "RESUME-TOKEN-OWNER"},
			// Blocked by the 400, as with unknown-id-400-everywhere, but for
			// RECREATE-OWNER-ONLY, whose own result is another principal
			// served; AUTH-REFRESH-REJOIN stands on it.
			Wrap: func(next http.Handler, cfg server.Config) http.Handler {
				return sessionsUnbound(unknownID400Everywhere(next, cfg), cfg)
			},
		},
		servers.Fixture{
			Name: "reinit-not-concurrent",
			About: `a re-initialize of a session while another one of it is served, or less than a second after one, ` +
				`gets 409 "initialize already in progress"`,
			Breaks: []string{"RECREATE-CONCURRENT"},
			Wrap:   reinitNotConcurrent,
		},
		servers.Fixture{
			Name:   "new-get-needs-init",
			About:  `a GET stream that replaces the previous one (a reloaded page) resets the session: POSTs get 400 "Server not initialized" until the client initializes again`,
			Breaks: []string{"RESUME-NO-INIT"},
			// Refused calls after a replacing GET leave nothing to see.
			Skips: []string{"GET-LIVE-REPLACED"},
			Wrap:  newGETNeedsInit,
		},
	)
}

// rejectReinitialize answers 400 to an initialize that carries a session id.
func rejectReinitialize(next http.Handler, _ server.Config) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(wire.HeaderSessionID) != "" && servers.PeekRPC(r).Method == "initialize" {
			writeError(w, http.StatusBadRequest, "Invalid Request: Server already initialized")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// reinitLosesState serves a re-initialize of a live session as a new
// session, shown under the old id, and deletes the old one.
func reinitLosesState(next http.Handler, _ server.Config) http.Handler {
	ids := newIDMap()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		shown := r.Header.Get(wire.HeaderSessionID)
		if shown == "" {
			next.ServeHTTP(w, r)
			return
		}
		old := ids.real(shown)
		r.Header.Set(wire.HeaderSessionID, old)
		if servers.PeekRPC(r).Method != "initialize" || !servers.Alive(next, old, r.Header) {
			next.ServeHTTP(w, r) // includes another principal's: 403
			return
		}
		r.Header.Del(wire.HeaderSessionID)
		servers.ServeWith(next, w, r, func(ew *servers.EventWriter) {
			ew.OnStatus = func(code int, h http.Header) int {
				if fresh := h.Get(wire.HeaderSessionID); code == http.StatusOK && fresh != "" {
					ids.alias(shown, fresh)
					h.Set(wire.HeaderSessionID, shown)
				}
				return code
			}
		})
		if ids.real(shown) != old {
			servers.InProcess(next, http.MethodDelete, old, r.Header, "")
		}
	})
}

// reinitBreaksGET answers 409 to a fresh GET on a session that was re-initialized.
func reinitBreaksGET(next http.Handler, _ server.Config) http.Handler {
	var reinit reinitialized
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sid := r.Header.Get(wire.HeaderSessionID)
		switch {
		case sid != "" && r.Method == http.MethodGet && r.Header.Get(wire.HeaderLastEventID) == "":
			if reinit.has(sid) {
				writeError(w, http.StatusConflict, "Conflict: stream ID conflicts with ongoing stream")
				return
			}
			next.ServeHTTP(w, r)
		case sid != "" && servers.PeekRPC(r).Method == "initialize":
			reinit.serve(next, w, r, sid)
		default:
			next.ServeHTTP(w, r)
		}
	})
}

// reinitialized records the sessions a re-initialize succeeded on.
type reinitialized struct {
	mu   sync.Mutex
	sids map[string]bool
}

// serve serves the initialize r of session sid, recording sid when it
// is answered 200.
func (ri *reinitialized) serve(next http.Handler, w http.ResponseWriter, r *http.Request, sid string) {
	servers.ServeWith(next, w, r, func(ew *servers.EventWriter) {
		ew.OnStatus = func(code int, _ http.Header) int {
			if code == http.StatusOK {
				ri.mu.Lock()
				if ri.sids == nil {
					ri.sids = map[string]bool{}
				}
				ri.sids[sid] = true
				ri.mu.Unlock()
			}
			return code
		}
	})
}

// has reports whether session sid was re-initialized.
func (ri *reinitialized) has(sid string) bool {
	ri.mu.Lock()
	defer ri.mu.Unlock()
	return ri.sids[sid]
}

// sessionsUnbound presents every request with a valid token as made by the
// principal that created the session.
func sessionsUnbound(next http.Handler, cfg server.Config) http.Handler {
	var mu sync.Mutex
	owner := map[string]string{} // session -> Authorization
	valid := func(auth string) bool {
		scheme, token, _ := strings.Cut(auth, " ")
		return strings.EqualFold(scheme, "Bearer") && cfg.BearerTokens[token] != ""
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		if sid := r.Header.Get(wire.HeaderSessionID); sid != "" && valid(auth) {
			mu.Lock()
			o, ok := owner[sid]
			mu.Unlock()
			if ok {
				r.Header.Set("Authorization", o)
			}
		}
		servers.ServeWith(next, w, r, func(ew *servers.EventWriter) {
			ew.OnStatus = func(code int, h http.Header) int {
				if sid := h.Get(wire.HeaderSessionID); sid != "" && code < 300 {
					mu.Lock()
					if _, ok := owner[sid]; !ok {
						owner[sid] = auth
					}
					mu.Unlock()
				}
				return code
			}
		})
	})
}

// reinitSettle is how long after a re-initialize reinit-not-concurrent
// still takes another one of the same session for a duplicate.
const reinitSettle = time.Second

// reinitNotConcurrent admits one re-initialize of a session at a time, and
// refuses those that arrive while one is served or within reinitSettle of
// its end.
func reinitNotConcurrent(next http.Handler, _ server.Config) http.Handler {
	type state struct {
		busy    bool
		lastEnd time.Time
	}
	var mu sync.Mutex
	sessions := map[string]*state{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sid := r.Header.Get(wire.HeaderSessionID)
		if sid == "" || servers.PeekRPC(r).Method != "initialize" {
			next.ServeHTTP(w, r)
			return
		}
		mu.Lock()
		st := sessions[sid]
		if st == nil {
			st = &state{}
			sessions[sid] = st
		}
		refuse := st.busy || time.Since(st.lastEnd) < reinitSettle
		if !refuse {
			st.busy = true
		}
		mu.Unlock()
		if refuse {
			writeError(w, http.StatusConflict, "Conflict: initialize already in progress")
			return
		}
		defer func() {
			mu.Lock()
			st.busy, st.lastEnd = false, time.Now()
			mu.Unlock()
		}()
		next.ServeHTTP(w, r)
	})
}

// reloadWindow is how soon after the previous GET stream ended a new one
// counts as the same page reloaded.
const reloadWindow = 200 * time.Millisecond

// newGETNeedsInit takes a GET stream that replaces the session's previous
// one (opened while it is served, or within reloadWindow of its end) for a
// reloaded page, and then refuses POSTs other than initialize.
func newGETNeedsInit(next http.Handler, _ server.Config) http.Handler {
	type state struct {
		open      int       // fresh GET streams being served
		lastEnd   time.Time // when the last one ended
		needsInit bool
	}
	var mu sync.Mutex
	sessions := map[string]*state{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sid := r.Header.Get(wire.HeaderSessionID)
		if sid == "" {
			next.ServeHTTP(w, r)
			return
		}
		fresh := r.Method == http.MethodGet && r.Header.Get(wire.HeaderLastEventID) == ""
		init := servers.PeekRPC(r).Method == "initialize"
		mu.Lock()
		st := sessions[sid]
		if st == nil {
			st = &state{}
			sessions[sid] = st
		}
		switch {
		case fresh:
			if st.open > 0 || (!st.lastEnd.IsZero() && time.Since(st.lastEnd) < reloadWindow) {
				st.needsInit = true
			}
			st.open++
		case init:
			st.needsInit = false
		}
		refuse := r.Method == http.MethodPost && !init && st.needsInit
		mu.Unlock()
		if refuse {
			writeError(w, http.StatusBadRequest, "Bad Request: Server not initialized")
			return
		}
		if fresh {
			defer func() {
				mu.Lock()
				st.open--
				st.lastEnd = time.Now()
				mu.Unlock()
			}()
		}
		next.ServeHTTP(w, r)
	})
}

// reinitAbortsCalls remembers the ids of every session's tools/call and,
// when a live session is initialized again, cancels them all
// (notifications/cancelled, as a server that tears the session's running
// work down with its old transport would).
func reinitAbortsCalls(next http.Handler, _ server.Config) http.Handler {
	var mu sync.Mutex
	calls := map[string][]string{} // session -> tools/call ids
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sid := r.Header.Get(wire.HeaderSessionID)
		m := servers.PeekRPC(r)
		switch {
		case sid == "" || r.Method != http.MethodPost:
		case m.Method == "tools/call" && len(m.ID) > 0:
			mu.Lock()
			calls[sid] = append(calls[sid], string(m.ID))
			mu.Unlock()
		case m.Method == "initialize":
			mu.Lock()
			ids := calls[sid]
			delete(calls, sid)
			mu.Unlock()
			for _, id := range ids {
				servers.InProcess(next, http.MethodPost, sid, r.Header,
					`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":`+id+`,"reason":"session re-initialized"}}`)
			}
		}
		next.ServeHTTP(w, r)
	})
}

// reinitForgetsTools answers tools/list with no tools on a session that
// was initialized again.
func reinitForgetsTools(next http.Handler, _ server.Config) http.Handler {
	var reinit reinitialized
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sid := r.Header.Get(wire.HeaderSessionID)
		m := servers.PeekRPC(r)
		switch {
		case sid == "" || r.Method != http.MethodPost:
		case m.Method == "initialize":
			reinit.serve(next, w, r, sid)
			return
		case m.Method == "tools/list" && reinit.has(sid):
			w.Header().Set("Content-Type", wire.MediaTypeJSON)
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[]}}`, m.ID)
			return
		}
		next.ServeHTTP(w, r)
	})
}
