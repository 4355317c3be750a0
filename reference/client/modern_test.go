package client_test

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/reference/client"
	"github.com/mcp-conform/mcp-conform/reference/client/storage"
	"github.com/mcp-conform/mcp-conform/reference/server"
)

func modernOptions(e *env, st storage.Storage) client.Options {
	o := e.options(st, nil)
	o.ProtocolVersion = client.ModernProtocolVersion
	return o
}

// TestModernTaskSurvivesRestart: under 2026-07-28 the client asks
// server/discover, never makes a session, stores the task id of the flat
// CreateTaskResult, and a restarted client polls the same task to its
// inline result, never creating it again and never asking tasks/result.
func TestModernTaskSurvivesRestart(t *testing.T) {
	e := newEnv(t, server.Config{TaskPollInterval: 20 * time.Millisecond})
	taskRestart(t, e, func(st storage.Storage, _ *recorder) client.Options { return modernOptions(e, st) })
	reqs := e.reqs.all()
	if len(reqs) == 0 || reqs[0].RPC != "server/discover" {
		t.Fatalf("first request: %+v", reqs)
	}
	for _, r := range reqs {
		if r.Method != http.MethodPost || r.Session != "" || r.Version != client.ModernProtocolVersion || r.RPC == "initialize" || r.RPC == "tasks/result" {
			t.Fatalf("request not of the sessionless revision: %+v", r)
		}
	}
	if n := e.reqs.count(isMethod("server/discover")); n != 1 {
		t.Fatalf("%d server/discover, want one: the restarted client knows the revision from its storage", n)
	}
}

// TestModernTaskLost: -32602 for the stored task forgets it; there is no
// session to end.
func TestModernTaskLost(t *testing.T) {
	e := newEnv(t, server.Config{TaskPollInterval: 20 * time.Millisecond})
	st := storage.NewMemory()
	if err := st.Set(client.KeyTask, `{"task_id":"GONEGONEGONEGONEGONEGONEGO","tool":"long_operation","status":"working"}`); err != nil {
		t.Fatal(err)
	}
	c := e.newClient(modernOptions(e, st))
	_, err := c.ResumeTask(ctx(t))
	var lost *client.TaskLostError
	if !errors.As(err, &lost) || lost.TaskID != "GONEGONEGONEGONEGONEGONEGO" || !strings.Contains(err.Error(), "forgotten") {
		t.Fatalf("ResumeTask of an unknown task: %v", err)
	}
	if _, ok := c.StoredTask(); ok {
		t.Fatal("the lost task is still stored")
	}
	if err := c.Disconnect(ctx(t), client.DisconnectOptions{ClearSession: true}); !errors.Is(err, client.ErrSessionless) {
		t.Fatalf("disconnect: %v", err)
	}
	if err := client.CheckProtocolVersion("2099-01-01"); err == nil || !strings.Contains(err.Error(), client.ModernProtocolVersion) {
		t.Fatalf("unsupported version: %v", err)
	}
}

// TestModernUndeclared: a -32021 from the server (the extension not seen
// as declared) is reported as such, and the task stays stored.
func TestModernUndeclared(t *testing.T) {
	e := newEnv(t, server.Config{TaskPollInterval: 20 * time.Millisecond})
	st := storage.NewMemory()
	if err := st.Set(client.KeyTask, `{"task_id":"SOMESOMESOMESOMESOMESOMESO","tool":"long_operation","status":"working"}`); err != nil {
		t.Fatal(err)
	}
	o := modernOptions(e, st)
	o.HTTPClient.Transport = roundTrip(func(r *http.Request) (*http.Response, error) {
		m, rest := peekMethod(r)
		r.Body = rest
		if m == "tasks/get" {
			body := `{"jsonrpc":"2.0","id":"x","error":{"code":-32021,"message":"extension not declared"}}`
			return &http.Response{StatusCode: 400, Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(strings.NewReader(body)), Request: r}, nil
		}
		return http.DefaultTransport.RoundTrip(r)
	})
	c := e.newClient(o)
	_, err := c.ResumeTask(ctx(t))
	if err == nil || !strings.Contains(err.Error(), "-32021") || !strings.Contains(err.Error(), "stays stored") {
		t.Fatalf("ResumeTask answered -32021: %v", err)
	}
	if _, ok := c.StoredTask(); !ok {
		t.Fatal("the task was forgotten")
	}
}
