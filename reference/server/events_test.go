package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/reference/server"
)

// TestFinishedCallsLeaveTheStore: many calls on one session keep the replay
// store within --event-max-bytes, POST streams included: a finished call's
// stream goes once its events are evicted. The newest call still resumes;
// the oldest gets the documented 400, never a replay of something else.
func TestFinishedCallsLeaveTheStore(t *testing.T) {
	const maxBytes = 16 << 10
	e := newEnv(t, server.Config{SSEKeepAlive: -1, EventMaxBytes: maxBytes})
	sid := e.connect(e.c)
	var primings []string
	for i := range 300 {
		resp, err := e.c.Call(e.ctx(), sid, "tools/call", wire.ToolParams("echo", map[string]any{"text": "call"}, ""))
		if err != nil || len(resp.Events) != 2 {
			t.Fatalf("call %d: %v, %d events", i, err, len(resp.Events))
		}
		primings = append(primings, resp.Events[0].ID)
	}
	st := e.srv.EventStats()
	if st.Streams+st.Tombstones > 150 || st.Cost > maxBytes {
		t.Fatalf("after 300 calls: %+v", st)
	}

	got := e.getAfter(e.c, sid, primings[len(primings)-1])
	msgs, err := got.Messages()
	if got.Status != http.StatusOK || err != nil || len(msgs) != 1 || !msgs[0].IsResponse() {
		t.Fatalf("resume of the newest call: HTTP %d, %v, %+v", got.Status, err, msgs)
	}
	got = e.getAfter(e.c, sid, primings[0])
	if got.Status != http.StatusBadRequest || !strings.Contains(string(got.Body), `"reason":"unknown_event_id"`) {
		t.Fatalf("resume of the oldest call: HTTP %d %s", got.Status, got.Body)
	}
}
