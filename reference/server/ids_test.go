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
