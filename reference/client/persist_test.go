package client_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcp-conform/mcp-conform/reference/client"
	"github.com/mcp-conform/mcp-conform/reference/client/storage"
	"github.com/mcp-conform/mcp-conform/reference/server"
)

// onDisk reads the state file as another process would.
func onDisk(t *testing.T, dir string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "state.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Items map[string]string `json:"items"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	return f.Items
}

// TestPersist covers CLI-PERSIST: once connected, the server URL, session id,
// protocol version and token are on disk; during a call its request id,
// progress token and stream position are; afterwards the last result and
// the log lines are, and the standalone stream's last event id.
func TestPersist(t *testing.T) {
	e := newEnv(t, server.Config{})
	dir := t.TempDir()
	st, err := storage.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rec := &recorder{}
	o := e.options(st, rec)
	o.BearerToken = "tok"
	c := e.newClient(o)
	got := onDisk(t, dir)
	for key, want := range map[string]string{
		client.KeyServerURL: e.url, client.KeySessionID: c.SessionID(), client.KeyProtocolVersion: "2025-11-25", client.KeyBearerToken: "tok",
	} {
		if got[key] != want {
			t.Errorf("%s = %q, want %q", key, got[key], want)
		}
	}
	done := make(chan error, 1)
	go func() {
		_, err := c.CallTool(ctx(t), "long_operation", map[string]any{"steps": 2, "interval_ms": 1000})
		done <- err
	}()
	e.step()
	eventually(t, "step 1", func() bool { return rec.count() == 2 })
	var inflight map[string]client.InFlightCall
	json.Unmarshal([]byte(onDisk(t, dir)[client.KeyInFlight]), &inflight)
	if len(inflight) != 1 {
		t.Fatalf("in flight on disk: %v", inflight)
	}
	for id, call := range inflight {
		ids := rec.eventIDs()
		if call.RequestID != id || call.Tool != "long_operation" || call.ProgressToken == "" || call.SessionID != c.SessionID() || call.LastEventID != ids[len(ids)-1] {
			t.Fatalf("stored call %+v; last event handled %s", call, ids[len(ids)-1])
		}
	}
	e.step()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	got = onDisk(t, dir)
	if _, ok := got[client.KeyInFlight]; ok {
		t.Error("the finished call is still stored as in flight")
	}
	var last client.LastResult
	json.Unmarshal([]byte(got[client.KeyLastResult]), &last)
	if last.Tool != "long_operation" || !json.Valid(last.Result) || len(last.Result) == 0 {
		t.Errorf("last result %+v", last)
	}
	var logs []client.LogEntry
	json.Unmarshal([]byte(got[client.KeyLogs]), &logs)
	if len(logs) != 2 || logs[0].EventID == "" {
		t.Errorf("logs %+v, want the two log lines with their event ids", logs)
	}
	if got[client.KeyLastEventID] == "" {
		t.Error("no last event id of the standalone stream")
	}
}

// TestClearOnDisconnect covers CLI-CLEAR-ON-DISCONNECT: closing (a closed
// page, a crash) keeps the stored session; an explicit disconnect with
// ClearSession ends it on the server and removes it; clearing tokens
// removes the token and the session bound to it.
func TestClearOnDisconnect(t *testing.T) {
	e := newEnv(t, server.Config{})
	st := storage.NewMemory()
	a := e.newClient(e.options(st, nil))
	sid := a.SessionID()
	if _, err := a.CallTool(ctx(t), "echo", map[string]any{"text": "x"}); err != nil {
		t.Fatal(err)
	}
	a.Close()
	if got, _ := st.Get(client.KeySessionID); got != sid || e.srv.SessionCount() != 1 {
		t.Fatalf("after Close: stored %q, %d sessions; want both kept", got, e.srv.SessionCount())
	}

	rec := &recorder{}
	b := e.newClient(e.options(st, rec))
	if err := b.Disconnect(ctx(t), client.DisconnectOptions{ClearSession: true}); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{client.KeySessionID, client.KeyLastResult, client.KeyLogs, client.KeyInFlight} {
		if v, ok := st.Get(key); ok {
			t.Errorf("%s = %q after an explicit disconnect", key, v)
		}
	}
	if e.srv.SessionCount() != 0 {
		t.Error("the session was not ended on the server (DELETE)")
	}
	if got := rec.trail(); got != "reconnecting connected(reconnected) disconnected" {
		t.Errorf("status trail %q", got)
	}

	o := e.options(st, nil)
	o.BearerToken = "tok"
	c := e.newClient(o)
	if err := c.ClearTokens(); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{client.KeySessionID, client.KeyBearerToken} {
		if v, ok := st.Get(key); ok {
			t.Errorf("%s = %q after ClearTokens", key, v)
		}
	}
}
