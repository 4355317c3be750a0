package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// ErrCancelled is matched (errors.Is) by every error of an operation the
// caller cancelled, so a cancel is told apart from a failure. Such errors
// also match the context's own error (context.Canceled).
var ErrCancelled = errors.New("cancelled")

// ErrClosed is returned by operations on, or interrupted by, a closed client.
var ErrClosed = errors.New("client closed")

// ErrNothingToResume is returned by ResumeCall when no call is stored.
var ErrNothingToResume = errors.New("no call in flight to resume")

// RPCError is a JSON-RPC error object from the server.
type RPCError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
	// HTTPStatus is the HTTP status it came with, when not 200 (2026-07-28).
	HTTPStatus int `json:"-"`
}

func (e *RPCError) Error() string { return fmt.Sprintf("JSON-RPC error %d: %s", e.Code, e.Message) }

// HTTPError is an HTTP answer the client did not expect.
type HTTPError struct {
	Status int
	Body   string
	// RPC is the JSON-RPC error in the body, if there is one.
	RPC *RPCError
}

func (e *HTTPError) Error() string {
	return fmt.Sprintf("HTTP %d: %s", e.Status, e.Body)
}

// ResumeHint is the envelope's data.resume: call Method with the stored
// resume token in the argument Via to continue an interrupted operation.
type ResumeHint struct {
	Method string `json:"method"`
	Via    string `json:"via"`
}

// SessionGoneError is a 404 for a request that carried a session id: the
// server no longer knows the session (spec: start a new one).
type SessionGoneError struct {
	SessionID string
	// Envelope is the -32003 error body, if the server sent one.
	Envelope *RPCError
	Reason   string      // data.reason
	Resume   *ResumeHint // data.resume
	// NewSessionID is the Mcp-Session-Id of the 404 (RESTART-HINT): an
	// already initialized session to retry with at once.
	NewSessionID string
}

func (e *SessionGoneError) Error() string {
	msg := "session not found"
	if e.Envelope != nil && e.Envelope.Message != "" {
		msg = e.Envelope.Message
	}
	return fmt.Sprintf("HTTP 404 for session %s: %s", e.SessionID, msg)
}

// CallLostError reports a call that the server accepted but whose session
// ended before its result could be fetched; it is not re-run blindly, as
// it may have had effects.
type CallLostError struct {
	RequestID string
	Tool      string
	Cause     error
}

func (e *CallLostError) Error() string {
	return fmt.Sprintf("call %s (%s) lost with its session: %v", e.RequestID, e.Tool, e.Cause)
}

func (e *CallLostError) Unwrap() error { return e.Cause }

// cancelError wraps the cause of a caller's cancel.
type cancelError struct {
	op    string
	cause error
}

func (e *cancelError) Error() string { return e.op + ": cancelled: " + e.cause.Error() }
func (e *cancelError) Unwrap() error { return e.cause }
func (e *cancelError) Is(target error) bool {
	return target == ErrCancelled
}

// ctxError turns a done context into the error an operation returns: the
// client's own Close is ErrClosed, anything else the caller's cancel.
func ctxError(ctx context.Context, op string) error {
	cause := context.Cause(ctx)
	if errors.Is(cause, ErrClosed) {
		return fmt.Errorf("%s: %w", op, ErrClosed)
	}
	if cause == nil {
		cause = context.Canceled
	}
	return &cancelError{op: op, cause: cause}
}

// IsCancelled reports whether err is a caller's cancel rather than a failure.
func IsCancelled(err error) bool { return errors.Is(err, ErrCancelled) }

// sessionExpiredMarkers is the allow-list of CLI-RETRY-ONCE: error texts
// that mean the server dropped the session while the token is still good.
// Kept narrow so that ordinary failures never cause a reconnect.
var sessionExpiredMarkers = []string{
	"invalid or expired session",
	"expired session",
	"session expired",
	"session not found",
	"unknown session",
}

// isSessionExpired reports whether err's message is on the allow-list.
// Cancellation and empty messages never are.
func isSessionExpired(err error) bool {
	if err == nil || IsCancelled(err) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrClosed) {
		return false
	}
	msg := err.Error()
	var rpc *RPCError
	if errors.As(err, &rpc) {
		msg = rpc.Message
	}
	msg = strings.ToLower(strings.TrimSpace(msg))
	if msg == "" {
		return false
	}
	for _, m := range sessionExpiredMarkers {
		if strings.Contains(msg, m) {
			return true
		}
	}
	return false
}

// retryOnceMethods are the operations CLI-RETRY-ONCE applies to.
var retryOnceMethods = map[string]bool{
	"tools/call":     true,
	"resources/list": true,
	"resources/read": true,
	"prompts/list":   true,
	"prompts/get":    true,
}
