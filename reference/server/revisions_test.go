package server_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/reference/server"
)

// modernCodes are the errors only a server of 2026-07-28 answers with
// (HeaderMismatch, MissingRequiredClientCapability,
// UnsupportedProtocolVersion): a legacy server must give none of them.
var modernCodes = []int{-32020, -32021, -32022}

// raw sends body (a JSON-RPC message, or nil) with exactly the headers
// given besides the content negotiation ones, and reads the answer.
func (e *env) raw(method string, headers map[string]string, body any) *wire.Response {
	e.t.Helper()
	c := wire.New(e.url)
	c.ProtocolVersion = "" // only the headers given
	req, err := c.NewHTTPRequest(e.ctx(), method, "", body)
	if err != nil {
		e.t.Fatal(err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		e.t.Fatalf("%s: %v", method, err)
	}
	return resp
}

// rpcError returns the answer's JSON-RPC error, failing unless it has one.
func rpcError(t *testing.T, what string, resp *wire.Response) wire.Message {
	t.Helper()
	m, err := resp.Result()
	if err != nil || m.Error == nil {
		t.Fatalf("%s: HTTP %d, want a JSON-RPC error: %v %s", what, resp.Status, err, resp.Body)
	}
	return m
}

func initializeBody(id any, version string) map[string]any {
	return map[string]any{"jsonrpc": "2.0", "id": id, "method": "initialize", "params": map[string]any{
		"protocolVersion": version, "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "test", "version": "1"}}}
}

// modernBody is a request of 2026-07-28 with its _meta, and its headers.
func modernBody(id any, method string, params map[string]any) (map[string]any, map[string]string) {
	params["_meta"] = modernMeta(false)
	h := map[string]string{"Mcp-Protocol-Version": modern, "Mcp-Method": method}
	if n, ok := params["name"].(string); ok {
		h["Mcp-Name"] = n
	}
	return map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}, h
}

// TestRevisionsValidated: a revision the server cannot speak is refused
// by name, with the ones it can.
func TestRevisionsValidated(t *testing.T) {
	_, err := server.New(server.Config{Revisions: []string{"2025-11-25", "2025-01-01"}})
	if err == nil || !strings.Contains(err.Error(), `unknown protocol revision "2025-01-01"`) || !strings.Contains(err.Error(), "2026-07-28, 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05") {
		t.Fatalf("server.New with revision 2025-01-01: %v", err)
	}
}

// TestModernOnly: a server of 2026-07-28 alone refuses every request of
// another revision with 400 and UnsupportedProtocolVersionError (-32022)
// listing 2026-07-28 alone, the version requested and the request's id,
// and never makes or echoes a session; a request without the version
// header fails header validation (-32020); GET and DELETE get 405;
// server/discover lists 2026-07-28 alone and requests of 2026-07-28 work.
func TestModernOnly(t *testing.T) {
	e := newEnv(t, server.Config{Revisions: []string{modern}})
	unsupported := func(what string, resp *wire.Response, id, requested string) {
		t.Helper()
		m := rpcError(t, what, resp)
		var data struct {
			Supported []string `json:"supported"`
			Requested *string  `json:"requested"`
		}
		_ = json.Unmarshal(m.Error.Data, &data)
		switch {
		case resp.Status != http.StatusBadRequest || m.Error.Code != -32022:
			t.Errorf("%s: HTTP %d, error %d %q; want 400 and -32022", what, resp.Status, m.Error.Code, m.Error.Message)
		case !slices.Equal(data.Supported, []string{modern}) || data.Requested == nil || *data.Requested != requested:
			t.Errorf("%s: data %s; want supported [%s] and requested %q", what, m.Error.Data, modern, requested)
		case string(m.ID) != id:
			t.Errorf("%s: id %s, want %s", what, m.ID, id)
		case !strings.Contains(m.Error.Message, modern):
			t.Errorf("%s: message %q does not name the supported version", what, m.Error.Message)
		}
		if sid := resp.SessionID(); sid != "" {
			t.Errorf("%s: answered with session %s", what, sid)
		}
	}
	unsupported("initialize without the header", e.raw(http.MethodPost, nil, initializeBody(1, "2025-11-25")), "1", "2025-11-25")
	unsupported("initialize naming 2025-06-18 in its header", e.raw(http.MethodPost, map[string]string{"Mcp-Protocol-Version": "2025-06-18"}, initializeBody("i", "2025-06-18")), `"i"`, "2025-06-18")
	call := map[string]any{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": map[string]any{"name": "echo", "arguments": map[string]any{"text": "x"}}}
	unsupported("a call on a session of 2025-11-25", e.raw(http.MethodPost, map[string]string{"Mcp-Protocol-Version": "2025-11-25", "Mcp-Session-Id": "OLDSESSION"}, call), "7", "2025-11-25")
	unsupported("notifications/initialized", e.raw(http.MethodPost, map[string]string{"Mcp-Protocol-Version": "2025-11-25", "Mcp-Session-Id": "OLDSESSION"}, wire.Notification("notifications/initialized")), "null", "2025-11-25")

	resp := e.raw(http.MethodPost, map[string]string{"Mcp-Session-Id": "OLDSESSION"}, call)
	if m := rpcError(t, "a call without the version header", resp); resp.Status != http.StatusBadRequest || m.Error.Code != -32020 || string(m.ID) != "7" || !strings.Contains(m.Error.Message, "Mcp-Protocol-Version") {
		t.Errorf("a call without the version header: HTTP %d, error %d %q, id %s; want 400 and -32020 naming the header", resp.Status, m.Error.Code, m.Error.Message, m.ID)
	}
	for _, method := range []string{http.MethodGet, http.MethodDelete} {
		resp := e.raw(method, map[string]string{"Mcp-Protocol-Version": "2025-11-25", "Mcp-Session-Id": "OLDSESSION"}, nil)
		if resp.Status != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != http.MethodPost {
			t.Errorf("%s: HTTP %d, Allow %q; want 405 and Allow: POST", method, resp.Status, resp.Header.Get("Allow"))
		}
	}

	status, m := e.modernCall(e.c, "server/discover", map[string]any{}, false, "")
	var disc struct {
		SupportedVersions []string `json:"supportedVersions"`
	}
	if err := json.Unmarshal(m.Result, &disc); status != http.StatusOK || err != nil || !slices.Equal(disc.SupportedVersions, []string{modern}) {
		t.Errorf("server/discover: HTTP %d, error %v, result %s; want supportedVersions [%s]", status, m.Error, m.Result, modern)
	}
	body, h := modernBody(8, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "modern"}})
	h["Mcp-Session-Id"] = "OLDSESSION"
	resp = e.raw(http.MethodPost, h, body)
	if m, err := resp.Result(); err != nil || m.Error != nil || !strings.Contains(string(m.Result), "modern") || resp.SessionID() != "" {
		t.Errorf("a call of 2026-07-28 with a stray session id: HTTP %d %v %v %s, session %q", resp.Status, err, m.Error, m.Result, resp.SessionID())
	}
	if n := e.srv.SessionCount(); n != 0 {
		t.Errorf("%d sessions after requests of 2025-11-25; a server of %s alone makes none", n, modern)
	}
}

// TestLegacyOnly: a server of 2025-11-25 alone answers requests of
// 2026-07-28 as such a server does, with 400 and no error of 2026-07-28
// (a client tells a legacy server by that), and serves initialize.
func TestLegacyOnly(t *testing.T) {
	e := newEnv(t, server.Config{Revisions: []string{"2025-11-25"}})
	legacy := func(what string, resp *wire.Response) {
		t.Helper()
		m := rpcError(t, what, resp)
		if resp.Status != http.StatusBadRequest || slices.Contains(modernCodes, m.Error.Code) {
			t.Errorf("%s: HTTP %d, error %d %q; want 400 without an error of %s", what, resp.Status, m.Error.Code, m.Error.Message, modern)
		}
		if sid := resp.SessionID(); sid != "" {
			t.Errorf("%s: answered with session %s", what, sid)
		}
	}
	body, h := modernBody(1, "server/discover", map[string]any{})
	legacy("server/discover", e.raw(http.MethodPost, h, body))
	body, h = modernBody(2, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "x"}})
	legacy("tools/call of 2026-07-28", e.raw(http.MethodPost, h, body))
	delete(h, "Mcp-Protocol-Version")
	legacy("tools/call with 2026-07-28 in _meta alone", e.raw(http.MethodPost, h, body))
	h["Mcp-Protocol-Version"] = "2027-01-01" // a later, sessionless revision
	legacy("tools/call of 2027-01-01", e.raw(http.MethodPost, h, body))
	h["Mcp-Protocol-Version"] = "2025-06-18" // not among those spoken
	legacy("tools/call naming 2025-06-18", e.raw(http.MethodPost, h, body))
	resp := e.raw(http.MethodGet, map[string]string{"Mcp-Protocol-Version": modern}, nil)
	if resp.Status != http.StatusBadRequest {
		t.Errorf("GET of 2026-07-28: HTTP %d, want 400", resp.Status)
	}

	resp = e.raw(http.MethodPost, nil, initializeBody(3, modern))
	m, err := resp.Result()
	if err != nil || m.Error != nil || resp.SessionID() == "" || !strings.Contains(string(m.Result), `"protocolVersion":"2025-11-25"`) {
		t.Fatalf("initialize asking for %s: HTTP %d %v %v %s, session %q; want 2025-11-25 and a session", modern, resp.Status, err, m.Error, m.Result, resp.SessionID())
	}
	if out := e.tool(e.c, e.connect(e.c), "echo", map[string]any{"text": "legacy"}); !strings.Contains(out, "legacy") {
		t.Errorf("echo on a session: %q", out)
	}
}

// TestLegacyRevisionsNarrowed: the revisions with sessions listed are the
// ones negotiated: a client asking for another gets the newest of them,
// its session speaks it, and a header naming a revision not listed is
// refused.
func TestLegacyRevisionsNarrowed(t *testing.T) {
	e := newEnv(t, server.Config{Revisions: []string{"2025-06-18", "2025-03-26"}})
	resp := e.raw(http.MethodPost, nil, initializeBody(1, "2025-11-25"))
	sid := resp.SessionID()
	if m, err := resp.Result(); err != nil || sid == "" || !strings.Contains(string(m.Result), `"protocolVersion":"2025-06-18"`) {
		t.Fatalf("initialize asking for 2025-11-25: %v %s, session %q; want 2025-06-18, the newest spoken", err, m.Result, sid)
	}
	c := e.client()
	c.ProtocolVersion = "2025-06-18"
	if resp := e.do(c, http.MethodPost, sid, wire.Notification("notifications/initialized")); resp.Status != http.StatusAccepted {
		t.Fatalf("notifications/initialized: HTTP %d %s", resp.Status, resp.Body)
	}
	resp = e.raw(http.MethodPost, map[string]string{"Mcp-Protocol-Version": "2025-11-25", "Mcp-Session-Id": sid}, c.Request("tools/list", nil))
	if m := rpcError(t, "tools/list naming 2025-11-25", resp); resp.Status != http.StatusBadRequest || !strings.Contains(m.Error.Message, "supported: 2025-06-18, 2025-03-26") {
		t.Errorf("tools/list naming 2025-11-25: HTTP %d %q; want 400 listing 2025-06-18, 2025-03-26", resp.Status, m.Error.Message)
	}
	if out := e.tool(c, sid, "echo", map[string]any{"text": "negotiated"}); !strings.Contains(out, "negotiated") {
		t.Errorf("echo at 2025-06-18: %q", out)
	}
	// A header naming another revision spoken counts as the negotiated one
	// (useNegotiatedVersion), which is 2025-06-18, not the 2025-11-25 asked for.
	c.ProtocolVersion = "2025-03-26"
	if out := e.tool(c, sid, "echo", map[string]any{"text": "sloppy"}); !strings.Contains(out, "sloppy") {
		t.Errorf("echo naming 2025-03-26: %q", out)
	}
}

// TestBothRevisions: by default the server speaks every revision it
// knows, and server/discover lists them.
func TestBothRevisions(t *testing.T) {
	e := newEnv(t, server.Config{})
	_, m := e.modernCall(e.c, "server/discover", map[string]any{}, false, "")
	var disc struct {
		SupportedVersions []string `json:"supportedVersions"`
	}
	if err := json.Unmarshal(m.Result, &disc); err != nil || !slices.Equal(disc.SupportedVersions, server.KnownRevisions()) {
		t.Errorf("server/discover: %v %s; want %v", err, m.Result, server.KnownRevisions())
	}
}
