package serverchecks

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"

	"github.com/mcp-conform/mcp-conform/fixtures/servers"
	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/reference/server"
)

// Fixtures that answer the sessionless revision (2026-07-28) the way a
// server of the sessions' era would, or validate less than it must. They
// change only requests of that revision: against 2025-11-25 they are the
// reference.
func init() {
	servers.Register(
		servers.Fixture{
			Name:         "version-refused-as-invalid",
			About:        "a request naming an unsupported protocol version of the sessionless era gets 400 with a plain -32600 and id null, not UnsupportedProtocolVersionError",
			ModernBreaks: []string{"MODERN-VERSION-UNSUPPORTED", "MODERN-ERROR-ID"},
			Wrap:         versionRefusedAsInvalid,
		},
		servers.Fixture{
			Name:         "header-mismatch-served",
			About:        "MCP-Protocol-Version, Mcp-Method and Mcp-Name are taken from the body when they disagree with it or are missing: the request is served instead of refused with -32020",
			ModernBreaks: []string{"MODERN-HEADER-MISMATCH", "MODERN-ERROR-ID"},
			Wrap:         headersFromBody(func(method string) bool { return !strings.HasPrefix(method, "tasks/") }),
		},
		servers.Fixture{
			Name:         "unknown-method-400",
			About:        "a request of a method the server does not implement gets 400 with -32600, not 404 with -32601",
			ModernBreaks: []string{"MODERN-METHOD-404", "TASK-REMOVED-METHODS"},
			Wrap:         unknownMethod400,
		},
		servers.Fixture{
			Name:         "legacy-get-delete",
			About:        "GET naming protocol 2026-07-28 opens an SSE stream and DELETE answers 204, as if sessions and the standalone stream still existed",
			ModernBreaks: []string{"MODERN-GET-405", "MODERN-DELETE-405"},
			Wrap:         legacyGETDelete,
		},
		servers.Fixture{
			Name:         "session-id-minted",
			About:        "every answer of protocol 2026-07-28 carries a new Mcp-Session-Id",
			ModernBreaks: []string{"MODERN-SESSION-IGNORED"},
			Wrap:         sessionIDMinted,
		},
		servers.Fixture{
			Name:         "last-event-id-replays",
			About:        "a request carrying Last-Event-ID gets the events of the principal's earlier streams replayed before its answer",
			ModernBreaks: []string{"MODERN-LAST-EVENT-ID-IGNORED"},
			Wrap:         lastEventIDReplays,
		},
		servers.Fixture{
			Name:         "sse-buffered",
			About:        "SSE answers of protocol 2026-07-28 lack X-Accel-Buffering: no, so nginx buffers them",
			ModernBreaks: []string{"MODERN-SSE-UNBUFFERED"},
			Wrap:         sseBuffered,
		},
		servers.Fixture{
			Name:         "task-undeclared-served",
			About:        "tasks/get and tasks/cancel are served to a request that does not declare io.modelcontextprotocol/tasks, instead of refused with -32021",
			ModernBreaks: []string{"TASK-UNDECLARED"},
			Wrap:         taskUndeclaredServed,
		},
		servers.Fixture{
			Name:         "task-mcp-name-unchecked",
			About:        "tasks/* requests are served whatever their Mcp-Name header says, or without one",
			ModernBreaks: []string{"TASK-MCP-NAME"},
			Wrap:         headersFromBody(func(method string) bool { return strings.HasPrefix(method, "tasks/") }),
		},
	)
}

// isModern reports a request that names protocol 2026-07-28 or later.
func isModern(r *http.Request) bool {
	return wire.Revision(r.Header.Get(wire.HeaderProtocolVersion)).Sessionless()
}

// modernBody is a sessionless request's body, decoded loosely.
type modernBody struct {
	raw map[string]any
}

func (b modernBody) method() string { s, _ := b.raw["method"].(string); return s }

func (b modernBody) params() map[string]any {
	p, _ := b.raw["params"].(map[string]any)
	if p == nil {
		p = map[string]any{}
		b.raw["params"] = p
	}
	return p
}

func (b modernBody) meta() map[string]any {
	m, _ := b.params()["_meta"].(map[string]any)
	if m == nil {
		m = map[string]any{}
		b.params()["_meta"] = m
	}
	return m
}

// readModern decodes r's body; ok is false for anything but a JSON
// object (b is then empty, and safe to ask).
func readModern(r *http.Request) (modernBody, bool) {
	b := modernBody{raw: map[string]any{}}
	var raw map[string]any
	d := json.NewDecoder(bytes.NewReader(servers.PeekBody(r)))
	d.UseNumber() // ids and numbers pass through exactly
	if d.Decode(&raw) != nil || raw == nil {
		return b, false
	}
	b.raw = raw
	return b, true
}

// setBody replaces r's body with b.
func setBody(r *http.Request, b modernBody) {
	data, _ := json.Marshal(b.raw)
	r.Body = io.NopCloser(bytes.NewReader(data))
	r.ContentLength = int64(len(data))
}

func versionRefusedAsInvalid(next http.Handler, _ server.Config) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if v := r.Header.Get(wire.HeaderProtocolVersion); r.Method == http.MethodPost && wire.Revision(v).Compare(wire.Revision20260728) > 0 {
			writeError(w, http.StatusBadRequest, "Bad Request: unsupported MCP-Protocol-Version "+v)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// headersFromBody sets the headers a sessionless request repeats from its
// body (and the body's _meta version from the header), for the methods
// which says, so that no mismatch is ever seen.
func headersFromBody(which func(method string) bool) func(http.Handler, server.Config) http.Handler {
	return func(next http.Handler, _ server.Config) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, ok := readModern(r)
			if !isModern(r) || !ok || !which(b.method()) {
				next.ServeHTTP(w, r)
				return
			}
			r.Header.Set(wire.HeaderMcpMethod, b.method())
			p := b.params()
			for _, k := range []string{"name", "uri", "taskId"} {
				if v, ok := p[k].(string); ok {
					r.Header.Set(wire.HeaderMcpName, v)
				}
			}
			b.meta()[wire.MetaProtocolVersion] = r.Header.Get(wire.HeaderProtocolVersion)
			setBody(r, b)
			next.ServeHTTP(w, r)
		})
	}
}

func unknownMethod400(next http.Handler, _ server.Config) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !isModern(r) {
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
			ew.OnBody = func(p []byte) []byte { return bytes.ReplaceAll(p, []byte(`"code":-32601`), []byte(`"code":-32600`)) }
		})
	})
}

func legacyGETDelete(next http.Handler, _ server.Config) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case !isModern(r):
		case r.Method == http.MethodGet:
			w.Header().Set("Content-Type", wire.MediaTypeSSE)
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write([]byte(": the standalone stream\n\n"))
			return
		case r.Method == http.MethodDelete:
			w.WriteHeader(http.StatusNoContent)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func sessionIDMinted(next http.Handler, _ server.Config) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !isModern(r) {
			next.ServeHTTP(w, r)
			return
		}
		servers.ServeWith(next, w, r, func(ew *servers.EventWriter) {
			ew.OnStatus = func(code int, h http.Header) int { h.Set(wire.HeaderSessionID, rand.Text()); return code }
		})
	})
}

func sseBuffered(next http.Handler, _ server.Config) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !isModern(r) {
			next.ServeHTTP(w, r)
			return
		}
		servers.ServeWith(next, w, r, func(ew *servers.EventWriter) {
			ew.OnStatus = func(code int, h http.Header) int { h.Del("X-Accel-Buffering"); return code }
		})
	})
}

func taskUndeclaredServed(next http.Handler, _ server.Config) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if b, ok := readModern(r); isModern(r) && ok && strings.HasPrefix(b.method(), "tasks/") {
			caps, _ := b.meta()[wire.MetaClientCapabilities].(map[string]any)
			if caps == nil {
				caps = map[string]any{}
			}
			ext, _ := caps["extensions"].(map[string]any)
			if ext == nil {
				ext = map[string]any{}
			}
			ext[wire.TasksExtension] = map[string]any{}
			caps["extensions"] = ext
			b.meta()[wire.MetaClientCapabilities] = caps
			setBody(r, b)
		}
		next.ServeHTTP(w, r)
	})
}

// lastEventIDReplays keeps the SSE events of each principal's sessionless
// answers and replays them before the answer to a request that carries
// Last-Event-ID.
func lastEventIDReplays(next http.Handler, _ server.Config) http.Handler {
	var mu sync.Mutex
	kept := map[string][][]byte{} // Authorization -> events, oldest first
	const keep = 64
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !isModern(r) || r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		who := r.Header.Get("Authorization")
		if r.Header.Get(wire.HeaderLastEventID) == "" {
			servers.ServeWith(next, w, r, func(ew *servers.EventWriter) {
				ew.OnEvent = func(ev []byte) []byte {
					if servers.ParseEvent(ev).Data != "" {
						mu.Lock()
						kept[who] = append(kept[who], ev)
						if n := len(kept[who]); n > keep {
							kept[who] = kept[who][n-keep:]
						}
						mu.Unlock()
					}
					return ev
				}
			})
			return
		}
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		mu.Lock()
		replay := append([][]byte(nil), kept[who]...)
		mu.Unlock()
		w.Header().Set("Content-Type", wire.MediaTypeSSE)
		w.WriteHeader(rec.Code)
		for _, ev := range replay {
			_, _ = w.Write(ev)
		}
		if strings.HasPrefix(rec.Header().Get("Content-Type"), wire.MediaTypeSSE) {
			_, _ = w.Write(rec.Body.Bytes())
			return
		}
		_, _ = w.Write(servers.MessageEvent(strings.TrimSpace(rec.Body.String())))
	})
}
