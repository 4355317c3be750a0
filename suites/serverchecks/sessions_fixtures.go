package serverchecks

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/mcp-conform/mcp-conform/fixtures/servers"
	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/reference/server"
)

// Fixtures that get session ids, their checks and their lifecycle wrong.
func init() {
	servers.Register(
		servers.Fixture{
			Name:   "session-id-non-ascii",
			About:  `session ids start with "é", a byte outside visible ASCII`,
			Breaks: []string{"SESS-ID-CHARS"},
			Wrap:   nonASCIIIDs,
		},
		servers.Fixture{
			Name:   "session-id-sequential",
			About:  "session ids are short and sequential (s1, s2, ...): guessable",
			Breaks: []string{"SESS-ID-ENTROPY"},
			Wrap:   sequentialIDs,
		},
		servers.Fixture{
			Name: "speaks-2025-03-26-only",
			About: "a server of 2025-03-26 alone, without what later revisions added: it ignores MCP-Protocol-Version (new in 2025-06-18) " +
				"and refuses a foreign Origin with 400 (403 is required from 2025-11-25); no check may fail it on a rule its revision does not have",
			Configure: func(c *server.Config) { c.Revisions = []string{string(wire.Revision20250326)} },
			Wrap:      asOf20250326,
		},
		servers.Fixture{
			Name:   "missing-id-404",
			About:  "a request other than initialize without Mcp-Session-Id gets 404 instead of 400",
			Breaks: []string{"SESS-MISSING-400"},
			Wrap:   missingID404,
		},
		servers.Fixture{
			Name:   "unknown-id-400",
			About:  "GET and DELETE with an unknown session id get 400 instead of 404",
			Breaks: []string{"SESS-UNKNOWN-404"},
			Wrap:   unknownID400,
		},
		servers.Fixture{
			Name: "unknown-id-400-everywhere",
			About: "every request with an unknown session id (POST too, and another principal's) gets 400 \"Bad Request: session not found\" instead of 404 " +
				"and its envelope; a new initialize works, so SESS-REINIT-NEW passes, and every check that reads the 404 is blocked by SESS-UNKNOWN-404",
			// RESUME-TOKEN-OWNER skips: the envelope names no resume token.
			Breaks: []string{"SESS-UNKNOWN-404", "RESUME-TOKEN-OWNER"},
			// One defect: the checks after the first are blocked by it.
			Wrap: unknownID400Everywhere,
		},
		servers.Fixture{
			Name:   "delete-keeps-session",
			About:  "DELETE answers 204 but the session lives on",
			Breaks: []string{"SESS-DELETE"},
			Wrap:   deleteKeepsSession,
		},
		servers.Fixture{
			Name:   "reinit-reuses-gone-id",
			About:  "the first session started after a 404 (on the same connection) gets the id that was just refused",
			Breaks: []string{"SESS-REINIT-NEW"},
			Wrap:   reuseGoneID,
		},
		servers.Fixture{
			Name:   "version-unchecked",
			About:  "an unsupported MCP-Protocol-Version is ignored instead of refused with 400",
			Breaks: []string{"VER-INVALID-400"},
			Wrap:   versionUnchecked,
		},
		servers.Fixture{
			Name:         "origin-unchecked",
			About:        "any Origin is accepted: no 403 for a disallowed one",
			Breaks:       []string{"ORIGIN-403"},
			ModernBreaks: []string{"ORIGIN-403"},
			Wrap:         originUnchecked,
		},
	)
}

// nonASCIIPrefix is put before every session id the client sees.
const nonASCIIPrefix = "é"

func nonASCIIIDs(next http.Handler, _ server.Config) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if sid, ok := strings.CutPrefix(r.Header.Get(wire.HeaderSessionID), nonASCIIPrefix); ok {
			r.Header.Set(wire.HeaderSessionID, sid)
		}
		servers.ServeWith(next, w, r, func(ew *servers.EventWriter) {
			ew.OnStatus = servers.RewriteSessionHeader(func(sid string) string { return nonASCIIPrefix + sid })
		})
	})
}

// idMap translates the reference's ids to the ids the client sees.
type idMap struct {
	mu      sync.Mutex
	toReal  map[string]string
	toShown map[string]string
}

func newIDMap() *idMap { return &idMap{toReal: map[string]string{}, toShown: map[string]string{}} }

// real returns the reference's id for a shown one (unknown ids unchanged).
func (m *idMap) real(shown string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r, ok := m.toReal[shown]; ok {
		return r
	}
	return shown
}

// alias makes shown stand for real.
func (m *idMap) alias(shown, real string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.toReal[shown], m.toShown[real] = real, shown
}

// shown returns the id shown for real, making one with next if it has none.
func (m *idMap) shown(real string, next func() string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s, ok := m.toShown[real]; ok {
		return s
	}
	s := next()
	m.toReal[s], m.toShown[real] = real, s
	return s
}

func sequentialIDs(next http.Handler, _ server.Config) http.Handler {
	ids := newIDMap()
	n := 0 // under ids.mu
	seq := func() string { n++; return fmt.Sprintf("s%d", n) }
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if sid := r.Header.Get(wire.HeaderSessionID); sid != "" {
			r.Header.Set(wire.HeaderSessionID, ids.real(sid))
		}
		servers.ServeWith(next, w, r, func(ew *servers.EventWriter) {
			ew.OnStatus = servers.RewriteSessionHeader(func(real string) string { return ids.shown(real, seq) })
		})
	})
}

func missingID404(next http.Handler, _ server.Config) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(wire.HeaderSessionID) != "" || servers.IsNewSession(r, servers.PeekRPC(r)) {
			next.ServeHTTP(w, r)
			return
		}
		servers.ServeWith(next, w, r, func(ew *servers.EventWriter) {
			ew.OnStatus = func(code int, _ http.Header) int {
				if code == http.StatusBadRequest {
					return http.StatusNotFound
				}
				return code
			}
		})
	})
}

func unknownID400(next http.Handler, _ server.Config) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		servers.ServeWith(next, w, r, func(ew *servers.EventWriter) {
			ew.OnStatus = func(code int, _ http.Header) int {
				if code == http.StatusNotFound {
					return http.StatusBadRequest
				}
				return code
			}
		})
	})
}

// unknownID400Everywhere answers 400 with a plain JSON-RPC error where
// the reference answers 404 for an unknown session, on every method.
func unknownID400Everywhere(next http.Handler, _ server.Config) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if sid := r.Header.Get(wire.HeaderSessionID); sid != "" && !servers.Alive(next, sid, r.Header) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Bad Request: session not found"}}`))
			return
		}
		next.ServeHTTP(w, r)
	})
}

func deleteKeepsSession(next http.Handler, _ server.Config) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sid := r.Header.Get(wire.HeaderSessionID)
		if r.Method == http.MethodDelete && sid != "" && servers.Alive(next, sid, r.Header) {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// reuseGoneID remembers the last session id answered 404 and hands it to
// the next new session, as an alias of that session's real id.
// reuseGoneID remembers a refused id per connection, so that the defect
// stays with the client that met the 404 and does not reach the sessions
// of other clients (checks running beside it).
func reuseGoneID(next http.Handler, _ server.Config) http.Handler {
	ids := newIDMap()
	var mu sync.Mutex
	gone := map[string]string{} // remote address -> the id refused there
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		shown := r.Header.Get(wire.HeaderSessionID)
		if shown != "" {
			r.Header.Set(wire.HeaderSessionID, ids.real(shown))
		}
		fresh := servers.IsNewSession(r, servers.PeekRPC(r))
		servers.ServeWith(next, w, r, func(ew *servers.EventWriter) {
			ew.OnStatus = func(code int, h http.Header) int {
				mu.Lock()
				defer mu.Unlock()
				switch g := gone[r.RemoteAddr]; {
				case code == http.StatusNotFound && shown != "":
					gone[r.RemoteAddr] = shown
				case code == http.StatusOK && fresh && g != "" && h.Get(wire.HeaderSessionID) != "":
					ids.alias(g, h.Get(wire.HeaderSessionID))
					h.Set(wire.HeaderSessionID, g)
					delete(gone, r.RemoteAddr)
				}
				return code
			}
		})
	})
}

// supportedVersions are the revisions the reference speaks.
var supportedVersions = []string{wire.SessionlessProtocolVersion, wire.DefaultProtocolVersion, "2025-06-18", "2025-03-26", "2024-11-05"}

func versionUnchecked(next http.Handler, _ server.Config) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if v := r.Header.Get(wire.HeaderProtocolVersion); v != "" && !slices.Contains(supportedVersions, v) {
			r.Header.Del(wire.HeaderProtocolVersion)
		}
		next.ServeHTTP(w, r)
	})
}

func originUnchecked(next http.Handler, _ server.Config) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Del("Origin")
		next.ServeHTTP(w, r)
	})
}

// asOf20250326 drops the MCP-Protocol-Version header before the reference
// sees it, and refuses a foreign Origin (neither allowed by cfg nor a
// localhost one) with 400 before the reference would with 403.
func asOf20250326(next http.Handler, cfg server.Config) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Del(wire.HeaderProtocolVersion)
		if o := r.Header.Get("Origin"); o != "" && !localOrAllowed(o, cfg.AllowedOrigins) {
			http.Error(w, "Bad Request: origin not allowed", http.StatusBadRequest)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// localOrAllowed reports an Origin the reference lets call it: one of
// allowed, or with none given, a localhost one.
func localOrAllowed(origin string, allowed []string) bool {
	if len(allowed) > 0 {
		return slices.Contains(allowed, origin)
	}
	u, err := url.Parse(origin)
	return err == nil && slices.Contains([]string{"localhost", "127.0.0.1", "::1"}, u.Hostname())
}
