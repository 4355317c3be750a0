package client_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcp-conform/mcp-conform/reference/client"
	"github.com/mcp-conform/mcp-conform/reference/client/storage"
)

// TestModernPlainCall: under 2026-07-28 a plain call is a tools/call of
// its own, with no session and the revision's _meta, and its result comes
// back; a call the server turns into a task is polled to its result.
func TestModernPlainCall(t *testing.T) {
	s := newModernServer(t)
	s.handle = func(w http.ResponseWriter, r *http.Request, m *modernRequest) bool {
		var name string
		m.arg("name", &name)
		switch {
		case m.Method == "tools/call" && name == "echo":
			writeJSON(w, m.ID, map[string]any{"resultType": "complete", "content": []any{map[string]any{"type": "text", "text": "hi"}}}, nil)
		case m.Method == "tools/call" && name == "slow":
			writeJSON(w, m.ID, map[string]any{"resultType": "task", "taskId": "T1", "status": "working"}, nil)
		case m.Method == "tasks/get":
			writeJSON(w, m.ID, map[string]any{"resultType": "complete", "taskId": "T1", "status": "completed", "result": map[string]any{"content": []any{map[string]any{"type": "text", "text": "done"}}}}, nil)
		default:
			return false
		}
		return true
	}
	c := connectTo(t, s.options())
	res, err := c.CallTool(ctx(t), "echo", map[string]any{"a": 1})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Result.Content[0]; !strings.Contains(mustJSON(t, got), `"hi"`) {
		t.Fatalf("result %s", res.Raw)
	}
	calls := s.requests("tools/call")
	if len(calls) != 1 || calls[0].Header.Get("Mcp-Session-Id") != "" || calls[0].Header.Get("Mcp-Method") != "tools/call" || calls[0].Header.Get("Mcp-Name") != "echo" {
		t.Fatalf("tools/call requests: %+v", calls)
	}
	var meta map[string]json.RawMessage
	if !calls[0].arg("_meta", &meta) || string(meta["io.modelcontextprotocol/protocolVersion"]) != `"2026-07-28"` || meta["progressToken"] == nil {
		t.Fatalf("_meta %v", meta)
	}
	res, err = c.CallTool(ctx(t), "slow", nil)
	if err != nil || !strings.Contains(string(res.Raw), "done") {
		t.Fatalf("a call the server made a task: %v %s", err, res.Raw)
	}
	if _, ok := c.StoredTask(); ok {
		t.Fatal("the finished task is still stored")
	}
	if len(c.InFlight()) != 0 {
		t.Fatalf("calls left in flight: %+v", c.InFlight())
	}
}

// TestModernReissueAfterBrokenStream: a response stream that ends before
// its response loses the request (the revision resumes no stream): the
// client sends it again, once, as a new request with a new id.
func TestModernReissueAfterBrokenStream(t *testing.T) {
	s := newModernServer(t)
	var breaks atomic.Int32 // response streams still to break
	breaks.Store(1)
	s.handle = func(w http.ResponseWriter, r *http.Request, m *modernRequest) bool {
		if m.Method != "tools/call" {
			return false
		}
		if breaks.Add(-1) >= 0 {
			sseHeader(w)
			sseEvent(w, "", progressJSON(1))
			return true // the stream ends without the response
		}
		writeJSON(w, m.ID, map[string]any{"resultType": "complete", "content": []any{}}, nil)
		return true
	}
	rec := &recorder{}
	o := s.options()
	o.OnNotification = rec.notify
	c := connectTo(t, o)
	if _, err := c.CallTool(ctx(t), "t", nil); err != nil {
		t.Fatalf("the re-issued call: %v", err)
	}
	calls := s.requests("tools/call")
	if len(calls) != 2 || string(calls[0].ID) == string(calls[1].ID) {
		t.Fatalf("want the call and one re-issue with a new id, got %d: %s %s", len(calls), calls[0].ID, calls[len(calls)-1].ID)
	}
	// A second break of the re-issued request is the call's failure.
	breaks.Store(2)
	_, err := c.CallTool(ctx(t), "t", nil)
	if err == nil || !strings.Contains(err.Error(), "response stream ended before the response") {
		t.Fatalf("a call whose re-issue broke too: %v", err)
	}
	if n := len(s.requests("tools/call")); n != 4 {
		t.Fatalf("%d tools/call, want 4 (no second re-issue)", n)
	}
}

// TestModernResumeReissues: a call a killed client left in flight is sent
// again as a new request by the next one (--resume), and then forgotten.
func TestModernResumeReissues(t *testing.T) {
	s := newModernServer(t)
	st := storage.NewMemory()
	st.Set(client.KeyInFlight, `{"OLD-1":{"request_id":"OLD-1","tool":"t","arguments":{"x":1},"progress_token":"p-OLD-1","session_id":"","started":"2026-01-01T00:00:00Z"}}`)
	o := s.options()
	o.Storage = st
	c := connectTo(t, o)
	if _, err := c.ResumeCall(ctx(t)); err != nil {
		t.Fatal(err)
	}
	calls := s.requests("tools/call")
	var args map[string]int
	if len(calls) != 1 || string(calls[0].ID) == `"OLD-1"` || !calls[0].arg("arguments", &args) || args["x"] != 1 {
		t.Fatalf("re-issued calls: %+v", calls)
	}
	if len(c.InFlight()) != 0 {
		t.Fatal("the re-issued call is still stored in flight")
	}
}

// TestModernUnsupportedVersionRetry: a -32022 that lists the client's
// revision gets one retry; one that lists only an older revision the client
// speaks makes it initialize instead.
func TestModernUnsupportedVersionRetry(t *testing.T) {
	s := newModernServer(t)
	var rejected atomic.Bool
	s.handle = func(w http.ResponseWriter, r *http.Request, m *modernRequest) bool {
		if rejected.Swap(true) {
			return false
		}
		writeError(w, http.StatusBadRequest, m.ID, client.RPCError{Code: -32022, Message: "Unsupported protocol version", Data: json.RawMessage(`{"supported":["2026-07-28"],"requested":"2026-07-28"}`)})
		return true
	}
	c := connectTo(t, s.options())
	if d := s.requests("server/discover"); len(d) != 2 || string(d[0].ID) == string(d[1].ID) {
		t.Fatalf("server/discover sent %d times, want the rejected one and one retry with a new id", len(d))
	}
	if v := c.ProtocolVersion(); v != client.ModernProtocolVersion {
		t.Fatalf("protocol version %q", v)
	}

	legacy := newScripted(t)
	legacy.post = func(w http.ResponseWriter, r *http.Request, sid, method string, id json.RawMessage) bool {
		if method != "server/discover" {
			return false
		}
		writeError(w, http.StatusBadRequest, id, client.RPCError{Code: -32022, Message: "Unsupported protocol version", Data: json.RawMessage(`{"supported":["2025-11-25","2025-06-18"]}`)})
		return true
	}
	o := legacy.options(nil)
	o.ProtocolVersion = client.ModernProtocolVersion
	c = connectTo(t, o)
	if v, sid := c.ProtocolVersion(), c.SessionID(); v != "2025-11-25" || sid != "S1" {
		t.Fatalf("after the fallback: version %q, session %q", v, sid)
	}
	var init struct{ ProtocolVersion string }
	json.Unmarshal(legacy.init, &init)
	if init.ProtocolVersion != "2025-11-25" {
		t.Fatalf("initialize offered %q", init.ProtocolVersion)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
