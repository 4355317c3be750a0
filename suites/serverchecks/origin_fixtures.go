package serverchecks

import (
	"net/http"

	"github.com/mcp-conform/mcp-conform/fixtures/servers"
	"github.com/mcp-conform/mcp-conform/reference/server"
)

// A fixture that breaks a check at one revision of a server that speaks
// both: a run of one revision passes it, a run of both catches it
// (--protocol-version all).
func init() {
	servers.Register(servers.Fixture{
		Name:         "origin-unchecked-sessionless",
		About:        "requests of protocol 2026-07-28 are served whatever their Origin, as if the new revision's handler had been added after the Origin check; 2025-11-25 requests from a disallowed Origin still get 403",
		ModernBreaks: []string{"ORIGIN-403"},
		Wrap:         originUncheckedSessionless,
	})
}

func originUncheckedSessionless(next http.Handler, _ server.Config) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if isModern(r) {
			r.Header.Del("Origin")
		}
		next.ServeHTTP(w, r)
	})
}
