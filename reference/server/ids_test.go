package server_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/mcp-conform/mcp-conform/reference/server"
)

// TestRequestIDsEchoedExactly: a response carries its request's id exactly;
// an id the server could not echo exactly is refused with -32600.
func TestRequestIDsEchoedExactly(t *testing.T) {
	e := newEnv(t, server.Config{})
	sid := e.connect(e.c)
	for _, id := range []string{`42`, `-7`, `0`, `9007199254740992`, `"x-1"`, `"9007199254740993"`} {
		resp := e.do(e.c, http.MethodPost, sid, `{"jsonrpc":"2.0","id":`+id+`,"method":"ping"}`)
		msgs, err := resp.Messages()
		if resp.Status != http.StatusOK || err != nil || len(msgs) != 1 || string(msgs[0].ID) != id {
			t.Errorf("id %s: HTTP %d %v %+v", id, resp.Status, err, msgs)
		}
	}
	for _, id := range []string{`9007199254740993`, `1.5`, `123456789012345678901234567890`, `1e2`, `-0`} {
		for _, body := range []string{`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`, `[{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}]`} {
			resp := e.do(e.c, http.MethodPost, sid, body)
			var got struct {
				Error struct{ Code int }
				ID    json.RawMessage
			}
			if resp.Status != http.StatusBadRequest || json.Unmarshal(resp.Body, &got) != nil || got.Error.Code != -32600 || !bytes.Equal(got.ID, []byte("null")) {
				t.Errorf("%s: HTTP %d %s, want 400 -32600 with id null", body, resp.Status, resp.Body)
			}
		}
	}
}

// TestAmbiguousEnvelopeRefused: a message the go-sdk could read differently
// from the server's own pre-parser (a repeated envelope member, a key that
// differs from one only in case) is refused with -32600 before the go-sdk
// sees it, so neither the id guard nor the call accounting can be bypassed.
func TestAmbiguousEnvelopeRefused(t *testing.T) {
	e := newEnv(t, server.Config{})
	sid := e.connect(e.c)
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":9007199254740993,"ID":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","Id":1,"id":9007199254740993,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","id":9007199254740993}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","METHOD":"","params":{"name":"echo","arguments":{"text":"x"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","method":"ping","params":{}}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","PARAMS":{}}`,
		`{"jsonrpc":"2.0","\u0069d":9007199254740993,"iD":1,"method":"ping"}`,
		`[{"jsonrpc":"2.0","id":9007199254740993,"ID":1,"method":"ping"}]`,
	} {
		resp := e.do(e.c, http.MethodPost, sid, body)
		var got struct {
			Error struct{ Code int }
		}
		if resp.Status != http.StatusBadRequest || json.Unmarshal(resp.Body, &got) != nil || got.Error.Code != -32600 {
			t.Errorf("%s: HTTP %d %s, want 400 -32600", body, resp.Status, resp.Body)
		}
	}
	// Exact keys alone are read as the go-sdk reads them: a key that only
	// looks like a member is not one.
	resp := e.do(e.c, http.MethodPost, sid, `{"jsonrpc":"2.0","id":7,"method":"ping","idx":9007199254740993}`)
	if msgs, err := resp.Messages(); resp.Status != http.StatusOK || err != nil || len(msgs) != 1 || string(msgs[0].ID) != "7" {
		t.Errorf("ping with an unrelated key: HTTP %d %v %+v", resp.Status, err, msgs)
	}
}

// TestModernIDsGuarded: the sessionless revision has the same id guard and
// envelope check as the revisions with sessions.
func TestModernIDsGuarded(t *testing.T) {
	e := newEnv(t, server.Config{})
	meta := `"params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}}}`
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":9007199254740993,"method":"tools/list",` + meta + `}`,
		`{"jsonrpc":"2.0","id":1,"ID":9007199254740993,"method":"tools/list",` + meta + `}`,
	} {
		req, err := e.c.NewHTTPRequest(e.ctx(), http.MethodPost, "", body)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Mcp-Protocol-Version", modern)
		req.Header.Set("Mcp-Method", "tools/list")
		resp, err := e.c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			Error struct{ Code int }
		}
		if resp.Status != http.StatusBadRequest || json.Unmarshal(resp.Body, &got) != nil || got.Error.Code != -32600 {
			t.Errorf("%s: HTTP %d %.200s, want 400 -32600", body, resp.Status, resp.Body)
		}
	}
}
