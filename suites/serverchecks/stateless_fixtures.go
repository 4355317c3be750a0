package serverchecks

import (
	"encoding/json"
	"net/http"

	"github.com/mcp-conform/mcp-conform/fixtures/servers"
	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/reference/server"
)

// Stateless targets: they issue no Mcp-Session-Id, like the SDKs'
// stateless mode, so only the catalogue's Sessionless checks apply.
func init() {
	servers.Register(
		servers.Fixture{
			Name: "stateless",
			About: "a correct stateless server: it issues no Mcp-Session-Id and serves each request (a GET too) in a session of its own " +
				"that the client never sees, ignores a session id sent to it and answers DELETE with 405; it breaks nothing",
			Stateless: true,
			Wrap:      stateless(nil),
		},
		servers.Fixture{
			Name:      "stateless-version-unchecked",
			About:     "stateless (as fixture stateless), and an unsupported MCP-Protocol-Version is ignored instead of refused with 400",
			Breaks:    []string{"VER-INVALID-400"},
			Stateless: true,
			Wrap:      stateless(versionUnchecked),
		},
	)
}

// legacyDefaultVersion is the revision a request without
// MCP-Protocol-Version is taken to speak (the spec's rule).
const legacyDefaultVersion = "2025-03-26"

// stateless makes the reference server (behind inner, if set) keep no
// sessions as its clients see them. The client's initialize is answered
// by the reference and its session ended at once; every other request is
// served in a new session made for it alone (initialize and
// notifications/initialized in process, with the request's credentials
// and protocol version) and ended when it is answered. A request the
// reference refuses to make a session for (a bad token, origin or
// version) goes on without one, and gets the reference's own refusal.
func stateless(inner func(http.Handler, server.Config) http.Handler) func(http.Handler, server.Config) http.Handler {
	return func(next http.Handler, cfg server.Config) http.Handler {
		if inner != nil {
			next = inner(next, cfg)
		}
		hide := func(ew *servers.EventWriter) {
			ew.OnStatus = func(code int, h http.Header) int { h.Del(wire.HeaderSessionID); return code }
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			r.Header.Del(wire.HeaderSessionID) // a stateless server reads no session id
			if r.Method == http.MethodDelete {
				w.Header().Set("Allow", "GET, POST")
				http.Error(w, "Method Not Allowed: this server keeps no sessions", http.StatusMethodNotAllowed)
				return
			}
			if r.Method == http.MethodPost && servers.PeekRPC(r).Method == "initialize" {
				var made string
				servers.ServeWith(next, w, r, func(ew *servers.EventWriter) {
					ew.OnStatus = func(code int, h http.Header) int {
						made = h.Get(wire.HeaderSessionID)
						h.Del(wire.HeaderSessionID)
						return code
					}
				})
				endSession(next, made, r.Header)
				return
			}
			if sid := openSession(next, r.Header); sid != "" {
				r.Header.Set(wire.HeaderSessionID, sid)
				defer endSession(next, sid, r.Header)
			}
			servers.ServeWith(next, w, r, hide)
		})
	}
}

// openSession makes and initializes a session in process with the
// client's headers for one request; "" if the reference refused it.
func openSession(h http.Handler, hdr http.Header) string {
	version := hdr.Get(wire.HeaderProtocolVersion)
	if version == "" {
		version = legacyDefaultVersion
	}
	init, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "fixture-stateless", "method": "initialize", "params": map[string]any{
		"protocolVersion": version, "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "fixture-stateless", "version": "0"},
	}})
	rec := servers.InProcess(h, http.MethodPost, "", hdr, string(init))
	sid := rec.Header().Get(wire.HeaderSessionID)
	if rec.Code != http.StatusOK || sid == "" {
		return ""
	}
	servers.InProcess(h, http.MethodPost, sid, hdr, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return sid
}

// endSession deletes a session the fixture made.
func endSession(h http.Handler, sid string, hdr http.Header) {
	if sid != "" {
		servers.InProcess(h, http.MethodDelete, sid, hdr, "")
	}
}
