package server

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
)

// hint is a recovery session made for one stale id (RESTART-HINT). Concurrent
// requests with the same stale id wait on ready and share it, so a burst of
// stale requests yields one session, never duplicates or half-initialized ones.
type hint struct {
	ready chan struct{}
	id    string
	err   error
}

// recover returns the id of an initialized session that replaces staleID for
// principal, creating it on first use.
func (s *Server) recover(r *http.Request, principal, staleID string) (string, error) {
	key := principal + "\x00" + staleID
	s.mu.Lock()
	h := s.hints[key]
	if h != nil {
		select {
		case <-h.ready:
			if h.err != nil || s.sessions[h.id] == nil {
				h = nil // failed or since expired: make a fresh one
			}
		default: // being made by another request: wait for it below
		}
	}
	owner := h == nil
	if owner {
		h = &hint{ready: make(chan struct{})}
		s.hints[key] = h
	}
	s.mu.Unlock()

	if !owner {
		<-h.ready
		return h.id, h.err
	}
	h.id, h.err = s.startRecovered(principal, s.clientAddr(r), key, r.Header.Get(headerProtocolVersion))
	if h.err != nil {
		s.mu.Lock()
		if s.hints[key] == h {
			delete(s.hints, key)
		}
		s.mu.Unlock()
	} else {
		s.log.Info("session created by recovery hint", "session", h.id, "stale", staleID)
	}
	close(h.ready)
	return h.id, h.err
}

// startRecovered creates a session and runs the initialize handshake on it
// in-process, so it is fully initialized before the 404 carrying its id is
// written: an immediate retry with the id succeeds.
func (s *Server) startRecovered(principal, remote, key, version string) (string, error) {
	if version == "" {
		version = "2025-03-26" // spec: assume this when the header is absent
	}
	sess, err := s.create(principal, remote)
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	sess.hintKey = key
	s.mu.Unlock()

	gen, _, _ := sess.begin(s.cfg.Clock.Now())
	defer s.ended(sess)
	initialize := fmt.Sprintf(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"mcp-conform-recovery","version":%q}}}`, version, Version)
	code := s.inProcess(gen, "", version, initialize)
	if code != http.StatusOK || gen.serverSession() == nil {
		s.remove(sess, "dropped: recovery initialize failed", nil)
		return "", fmt.Errorf("in-process initialize answered %d", code)
	}
	if code := s.inProcess(gen, sess.id, version, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); code != http.StatusAccepted {
		s.remove(sess, "dropped: recovery initialized notification failed", nil)
		return "", fmt.Errorf("in-process initialized notification answered %d", code)
	}
	s.saveShared(sess, gen)
	return sess.id, nil
}

// inProcess sends one JSON-RPC message to a generation's handler and returns the status.
func (s *Server) inProcess(gen *generation, sessionID, version, body string) int {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, "/", strings.NewReader(body))
	if err != nil {
		return http.StatusInternalServerError
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set(headerProtocolVersion, version)
	if sessionID != "" {
		req.Header.Set(headerSessionID, sessionID)
	}
	rec := httptest.NewRecorder()
	gen.handler.ServeHTTP(rec, req)
	return rec.Code
}
