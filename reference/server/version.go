package server

import (
	"net/http"
	"slices"
)

// useNegotiatedVersion makes a request whose MCP-Protocol-Version names a
// supported revision other than the one its session negotiated count as
// the negotiated one. The spec asks clients to send the negotiated
// revision; what a stream offers (priming events, the retry hint before
// a close) is the session's, agreed at initialize, so one sloppy header
// does not take it away. A missing header still means 2025-03-26, as the
// spec says.
func useNegotiatedVersion(r *http.Request, g *generation) {
	v := r.Header.Get(headerProtocolVersion)
	if v == "" {
		return
	}
	if n := g.negotiated(); n != "" && n != v {
		r.Header.Set(headerProtocolVersion, n)
	}
}

// negotiated is the protocol revision g's session agreed at initialize
// (the go-sdk's rule: the client's if supported, else the newest), "" before.
func (g *generation) negotiated() string {
	ss := g.serverSession()
	if ss == nil {
		return ""
	}
	p := ss.InitializeParams()
	if p == nil {
		return ""
	}
	if slices.Contains(g.sess.revisions, p.ProtocolVersion) {
		return p.ProtocolVersion
	}
	return g.sess.revisions[0]
}
