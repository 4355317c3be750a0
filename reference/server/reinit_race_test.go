package server

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestReinitializeAfterDelete: a re-initialize whose session a DELETE
// removed between the lookup and the new transport (the race
// TestE2EDeleteRacingRequests runs) gets a whole answer: 404 with a
// JSON-RPC error for its id. The removal killed the request's writer, so
// an answer written through it would be a status line without its body.
func TestReinitializeAfterDelete(t *testing.T) {
	s, err := New(Config{SSEKeepAlive: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sess, err := s.create("", "127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	dw, ctx, _, release := s.bind(rec, context.Background(), sess)
	dw.errs.id = json.RawMessage("7")
	if !s.remove(sess, "deleted", nil) {
		t.Fatal("session not removed")
	}
	body := `{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`
	r := httptest.NewRequestWithContext(ctx, http.MethodPost, "/mcp", strings.NewReader(body))
	s.reinitialize(dw, r, sess)
	release()

	if rec.Code != http.StatusNotFound {
		t.Fatalf("status %d, want 404; body %q", rec.Code, rec.Body)
	}
	var msg struct {
		ID    json.RawMessage `json:"id"`
		Error *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &msg); err != nil || msg.Error == nil || string(msg.ID) != "7" {
		t.Fatalf("body %q (%v): want a JSON-RPC error for id 7", rec.Body, err)
	}
}
