package server

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Bounds on the work one request or session can start.
const (
	DefaultMaxBatch           = 100
	DefaultMaxCallsPerSession = 100
)

// callLimit refuses a tools/call while the session already runs
// MaxCallsPerSession of them: each runs on its own goroutine for up to an
// hour, and a batch or a client that does not wait could start thousands.
func (s *Server) callLimit(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		sess := sessionOf(ctx)
		if method != "tools/call" || sess == nil {
			return next(ctx, method, req)
		}
		if n := sess.calls.Add(1); n > int64(s.cfg.MaxCallsPerSession) {
			sess.calls.Add(-1)
			return nil, fmt.Errorf("too many tool calls running in this session (limit %d)", s.cfg.MaxCallsPerSession)
		}
		defer sess.calls.Add(-1)
		return next(ctx, method, req)
	}
}

// checkBatch refuses a batch of more than MaxBatch messages before any of
// it is handled.
func (s *Server) checkBatch(batch []json.RawMessage) error {
	if len(batch) > s.cfg.MaxBatch {
		return fmt.Errorf("batch of %d messages, at most %d are accepted", len(batch), s.cfg.MaxBatch)
	}
	return nil
}
