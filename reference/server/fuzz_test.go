package server

import (
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

// FuzzPOST sends arbitrary bodies and headers (Accept, Content-Type,
// MCP-Protocol-Version, none, one or two Mcp-Session-Id) to the POST handler
// of a server with one initialized session. Nothing may panic or hang,
// every error answer must be a JSON-RPC error body, a body that is not
// declared application/json is never served, and two Mcp-Session-Id
// headers are refused (400), never resolved by picking one.
func FuzzPOST(f *testing.F) {
	fc := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	srv, err := New(Config{Clock: fc, SSEKeepAlive: -1, MaxCallsPerSession: 4})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(srv.Close)
	sid := fuzzSession(f, srv)
	const accept, jsonType = "application/json, text/event-stream", "application/json"
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"}]`,
		`{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"f","version":"0"}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"long_operation","arguments":{"steps":2,"interval_ms":18446744073710}}}`,
		`{`, ``,
	} {
		f.Add([]byte(seed), true, "2025-11-25", accept, jsonType, "")
	}
	ping := []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	f.Add(ping, true, "2025-11-25", accept, jsonType, sid) // the same id twice
	for _, ct := range []string{"application/json; charset=utf-8", "APPLICATION/JSON", "text/plain", "application/jsonx", ""} {
		f.Add(ping, true, "2025-11-25", accept, ct, "")
		f.Add(ping, false, modernVersion, accept, ct, "")
	}
	f.Fuzz(func(t *testing.T, body []byte, withSession bool, version, accept, contentType, secondSession string) {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/mcp", strings.NewReader(string(body)))
		req.Header.Set("Content-Type", contentType)
		req.Header.Set("Accept", accept)
		req.Header.Set(headerProtocolVersion, version)
		if withSession {
			req.Header.Set(headerSessionID, sid)
		}
		if secondSession != "" {
			req.Header.Add(headerSessionID, secondSession)
		}
		twoIDs := len(req.Header.Values(headerSessionID)) > 1 && !speaksModern(req) // the sessionless revision ignores ids
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		if rec.Code < 400 {
			if mt, _, _ := mime.ParseMediaType(contentType); mt != jsonType {
				t.Fatalf("HTTP %d for a body of Content-Type %q", rec.Code, contentType)
			}
			if twoIDs {
				t.Fatalf("HTTP %d with two %s headers", rec.Code, headerSessionID)
			}
			return
		}
		if twoIDs && rec.Code != http.StatusBadRequest {
			t.Fatalf("HTTP %d with two %s headers, want 400", rec.Code, headerSessionID)
		}
		var msg struct {
			JSONRPC string
			Error   *struct{ Code int }
		}
		if ct := rec.Header().Get("Content-Type"); ct != "application/json" || json.Unmarshal(rec.Body.Bytes(), &msg) != nil || msg.Error == nil {
			t.Fatalf("HTTP %d %q %q: not a JSON-RPC error", rec.Code, ct, rec.Body.String())
		}
	})
}

// fuzzSession initializes a session on srv in-process.
func fuzzSession(f *testing.F, srv *Server) string {
	post := func(sid, body string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set(headerSessionID, sid)
			req.Header.Set(headerProtocolVersion, "2025-11-25")
		}
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		return rec
	}
	rec := post("", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"fuzz","version":"0"}}}`)
	sid := rec.Header().Get(headerSessionID)
	if rec.Code != http.StatusOK || sid == "" {
		f.Fatalf("initialize: %d %s", rec.Code, rec.Body)
	}
	if rec := post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); rec.Code != http.StatusAccepted {
		f.Fatalf("initialized: %d", rec.Code)
	}
	return sid
}

// FuzzParseEventID: the Last-Event-ID parser never panics, and what it
// accepts names a stream without '_' and an index that formats back to an
// id it parses the same way.
func FuzzParseEventID(f *testing.F) {
	for _, s := range []string{"_0", "_12", "ABC_3", "a_b_1", "_", "_-1", "x_007", "_99999999999999999999", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		stream, index, err := parseEventID(id)
		if err != nil {
			return
		}
		if index < 0 || strings.Contains(stream, "_") {
			t.Fatalf("%q parsed as stream %q index %d", id, stream, index)
		}
		s2, i2, err := parseEventID(fmt.Sprintf("%s_%d", stream, index))
		if err != nil || s2 != stream || i2 != index {
			t.Fatalf("%q: reformatted id parses as %q %d %v", id, s2, i2, err)
		}
	})
}
