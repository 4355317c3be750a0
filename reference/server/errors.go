package server

import (
	"encoding/json"
	"errors"
	"net/http"
)

// JSON-RPC error codes used at the HTTP layer.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	// CodeSessionNotFound is the TypeScript SDK's convention, used by the plain answer.
	CodeSessionNotFound = -32001
	// CodeSessionExpired is the envelope code from the design documents.
	CodeSessionExpired = -32003
)

// ResumeHint tells a client which tool continues an interrupted operation
// and which of its arguments carries the resume token.
type ResumeHint struct {
	Method string `json:"method"`
	Via    string `json:"via"`
}

// referenceResumeHint names the reference server's job_start tool.
var referenceResumeHint = ResumeHint{Method: "job_start", Via: "resume_token"}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

type rpcErrorResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	Error   rpcError        `json:"error"`
	ID      json.RawMessage `json:"id"`
}

// expiredData is the envelope's data member.
type expiredData struct {
	Reason string      `json:"reason"`
	Resume *ResumeHint `json:"resume,omitempty"`
}

// writeRPCError writes a JSON-RPC error response with id null, so that clients
// that only parse JSON-RPC still get a readable reason with any status.
// Not inlined: the error paths would widen the frames of the handlers
// that stay on a stream's stack (see Server.ServeHTTP).
//
//go:noinline
func writeRPCError(w http.ResponseWriter, status, code int, message string, data any) {
	writeRPCErrorID(w, status, code, message, data, nil)
}

// writeRPCErrorID is writeRPCError answering the request with id (nil: null).
func writeRPCErrorID(w http.ResponseWriter, status, code int, message string, data any, id json.RawMessage) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	body, _ := json.Marshal(rpcErrorResponse{
		JSONRPC: "2.0",
		Error:   rpcError{Code: code, Message: message, Data: data},
		ID:      id,
	})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(body)
}

// writeCreateError answers an initialize refused by a session limit: 503
// when the server is full, 429 when this client has had its share.
func writeCreateError(w http.ResponseWriter, err error) {
	if errors.Is(err, errStore) {
		writeStoreUnavailable(w, err, nil)
		return
	}
	if errors.Is(err, errTooManySessions) {
		writeRPCError(w, http.StatusServiceUnavailable, CodeInvalidRequest, "Service Unavailable: "+err.Error(), nil)
		return
	}
	w.Header().Set("Retry-After", "1")
	writeRPCError(w, http.StatusTooManyRequests, CodeInvalidRequest, "Too Many Requests: "+err.Error(), nil)
}

// writePeekError answers a body peek refused: an ambiguous message is
// invalid (-32600), anything else does not parse (-32700).
func writePeekError(w http.ResponseWriter, err error) {
	if errors.Is(err, errAmbiguous) {
		writeRPCError(w, http.StatusBadRequest, CodeInvalidRequest, "Invalid Request: "+err.Error(), nil)
		return
	}
	writeRPCError(w, http.StatusBadRequest, CodeParseError, "Parse error: "+err.Error(), nil)
}

// writeSessionGone answers a request whose session id is unknown or expired.
func (s *Server) writeSessionGone(w http.ResponseWriter) {
	if s.cfg.ExpiredResponse == ExpiredPlain {
		writeRPCError(w, http.StatusNotFound, CodeSessionNotFound, "Session not found", nil)
		return
	}
	hint := referenceResumeHint
	writeRPCError(w, http.StatusNotFound, CodeSessionExpired, "Session expired; reinitialize",
		expiredData{Reason: "session_expired", Resume: &hint})
}

// writeReplayError answers a GET whose Last-Event-ID cannot be replayed.
// Not 404 (that means the session is gone) and not 5xx: 400 with a
// machine-readable reason (malformed_event_id, unknown_event_id, events_evicted).
func writeReplayError(w http.ResponseWriter, reason, message string) {
	writeRPCError(w, http.StatusBadRequest, CodeInvalidRequest, "Bad Request: "+message, map[string]string{"reason": reason})
}
