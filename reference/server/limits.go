package server

import (
	"encoding/json"
	"fmt"
)

// Bounds on the work one request or session can start.
const (
	DefaultMaxBatch           = 100
	DefaultMaxCallsPerSession = 100
)

// reserveCall counts a tools/call or a waiting tasks/result of sess, or
// refuses it while the session already has MaxCallsPerSession of them: each
// holds a goroutine (and a connection) for up to an hour, and a batch or a
// client that does not wait could start thousands. The caller releases it
// with sess.calls.Add(-1).
func (s *Server) reserveCall(sess *session) error {
	if n := sess.calls.Add(1); n > int64(s.cfg.MaxCallsPerSession) {
		sess.calls.Add(-1)
		return fmt.Errorf("too many tool calls and tasks/result waits running in this session (limit %d)", s.cfg.MaxCallsPerSession)
	}
	return nil
}

// checkBatch refuses a batch of more than MaxBatch messages before any of
// it is handled.
func (s *Server) checkBatch(batch []json.RawMessage) error {
	if len(batch) > s.cfg.MaxBatch {
		return fmt.Errorf("batch of %d messages, at most %d are accepted", len(batch), s.cfg.MaxBatch)
	}
	return nil
}
