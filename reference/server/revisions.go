package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

// The revisions a server speaks (Config.Revisions). By default both eras:
// 2026-07-28 without sessions and the revisions with initialize and
// sessions. Either alone makes the server one side of a rolling upgrade,
// a legacy server restarted as a modern one or the reverse, and it then
// answers the other era's requests as a server of its own era alone must.

// KnownRevisions returns every protocol revision the server can speak,
// newest first.
func KnownRevisions() []string { return append([]string{modernVersion}, legacyVersions...) }

// withRevisions fills the derived revision fields of c; no Revisions
// means all of them.
func (c *Config) withRevisions() {
	if len(c.Revisions) == 0 {
		c.Revisions = KnownRevisions()
	}
	c.sessionless = slices.Contains(c.Revisions, modernVersion)
	c.legacy = slices.DeleteFunc(slices.Clone(legacyVersions), func(v string) bool { return !slices.Contains(c.Revisions, v) })
}

// revisionAtLeast reports whether v, a protocol revision (a date,
// YYYY-MM-DD), is min or newer. Revisions are ordered by date, not as
// strings: a value that is not a date (a malformed header) is not.
func revisionAtLeast(v, min string) bool {
	d, err := time.Parse(time.DateOnly, v)
	m, _ := time.Parse(time.DateOnly, min)
	return err == nil && len(v) == len(time.DateOnly) && !d.Before(m)
}

// validateRevisions rejects a revision the server cannot speak.
func (c Config) validateRevisions() error {
	for _, v := range c.Revisions {
		if !slices.Contains(KnownRevisions(), v) {
			return fmt.Errorf("unknown protocol revision %q (known: %s)", v, strings.Join(KnownRevisions(), ", "))
		}
	}
	return nil
}

// supportedRevisions is what the server speaks, newest first: data.supported
// of UnsupportedProtocolVersionError and server/discover's supportedVersions.
func (c Config) supportedRevisions() []string {
	if !c.sessionless {
		return c.legacy
	}
	return append([]string{modernVersion}, c.legacy...)
}

// answersSessionless reports a request the sessionless revision answers.
// A legacy-only server reads every request as one of its own revisions,
// as a 2025-11-25 server does: a request of 2026-07-28 then fails its
// version and session checks with a 400 that holds no error of
// 2026-07-28, which is how a client tells a legacy server ("If the body
// is empty or is not a recognized modern JSON-RPC error, fall back to
// initialize"). A modern-only server answers every request itself: what
// names another revision is refused there (refuseRevision).
func (s *Server) answersSessionless(r *http.Request) bool {
	switch {
	case !s.cfg.sessionless:
		return false
	case len(s.cfg.legacy) == 0:
		return true
	}
	return speaksModern(r)
}

// refuseRevision answers a POST naming version v (its MCP-Protocol-Version
// header) of a revision the sessionless path does not speak: "If the
// server does not implement the requested protocol version (whether the
// version is unknown to the server, or is a known version the server has
// chosen not to support), it MUST respond with 400 Bad Request and an
// UnsupportedProtocolVersionError listing its supported versions", with
// the request's id. An initialize without the header names its version in
// params.protocolVersion: "A server that supports only modern versions
// SHOULD name the protocol versions it supports in any error it returns
// to an initialize request". Any other request without the header fails
// validation: "A server that does not support such clients MUST reject a
// request without the header per Server Validation" (400, HeaderMismatch).
// No session is made nor echoed.
func (s *Server) refuseRevision(w http.ResponseWriter, v string, body []byte) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"params"`
	}
	_ = json.Unmarshal(body, &m) // what does not parse is refused all the same, id null
	supported := s.cfg.supportedRevisions()
	if v == "" && m.Method == "initialize" {
		v = m.Params.ProtocolVersion
	} else if v == "" {
		writeRPCErrorID(w, http.StatusBadRequest, CodeHeaderMismatch,
			fmt.Sprintf("Header mismatch: the %s header is missing (supported: %s)", headerProtocolVersion, strings.Join(supported, ", ")), nil, m.ID)
		return
	}
	writeRPCErrorID(w, http.StatusBadRequest, CodeUnsupportedVersion,
		fmt.Sprintf("Unsupported protocol version %q (supported: %s)", v, strings.Join(supported, ", ")),
		map[string]any{"supported": supported, "requested": v}, m.ID)
}

// sessionRevisions are the revisions the server negotiates at initialize,
// newest first. A modern-only server has none, and no request reaches its
// sessions; they keep every revision with sessions so that the go-sdk,
// which reads an empty list as all of its own, never offers 2026-07-28 there.
func (s *Server) sessionRevisions() []string {
	if len(s.cfg.legacy) == 0 {
		return legacyVersions
	}
	return s.cfg.legacy
}
