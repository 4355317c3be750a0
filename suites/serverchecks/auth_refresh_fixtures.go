package serverchecks

import (
	"net/http"
	"sync"

	"github.com/mcp-conform/mcp-conform/fixtures/servers"
	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/reference/server"
)

// A fixture that binds sessions to the literal bearer token.
func init() {
	servers.Register(servers.Fixture{
		Name: "sessions-bound-to-token",
		About: "a session is bound to the exact bearer token that created it, not to its principal: " +
			"after a token refresh the same principal is refused (403) on its own session",
		Breaks: []string{"AUTH-REFRESH-REJOIN"},
		Wrap:   sessionsBoundToToken,
	})
}

// sessionsBoundToToken answers 403 to a request for a session whose
// Authorization differs from the one the session was created with.
func sessionsBoundToToken(next http.Handler, _ server.Config) http.Handler {
	var mu sync.Mutex
	creator := map[string]string{} // session -> Authorization
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		if sid := r.Header.Get(wire.HeaderSessionID); sid != "" {
			mu.Lock()
			c, ok := creator[sid]
			mu.Unlock()
			if ok && c != auth {
				writeError(w, http.StatusForbidden, "Forbidden: session belongs to another token")
				return
			}
		}
		servers.ServeWith(next, w, r, func(ew *servers.EventWriter) {
			ew.OnStatus = func(code int, h http.Header) int {
				if sid := h.Get(wire.HeaderSessionID); sid != "" && code < 300 {
					mu.Lock()
					if _, ok := creator[sid]; !ok {
						creator[sid] = auth
					}
					mu.Unlock()
				}
				return code
			}
		})
	})
}
