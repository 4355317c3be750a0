package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/reference/client"
	"github.com/mcp-conform/mcp-conform/reference/server"
)

// fiveOps are the operations CLI-RETRY-ONCE covers, each as a client call.
var fiveOps = []struct {
	method string
	call   func(context.Context, *client.Client) error
}{
	{"tools/call", func(ctx context.Context, c *client.Client) error {
		_, err := c.CallTool(ctx, "echo", map[string]any{"text": "x"})
		return err
	}},
	{"resources/list", request("resources/list", map[string]any{})},
	{"resources/read", request("resources/read", map[string]any{"uri": "file:///x"})},
	{"prompts/list", request("prompts/list", map[string]any{})},
	{"prompts/get", request("prompts/get", map[string]any{"name": "p"})},
}

// request is an operation through Client.Request, which the typed calls
// (ListTools, CallTool) share.
func request(method string, params any) func(context.Context, *client.Client) error {
	return func(ctx context.Context, c *client.Client) error {
		_, err := c.Request(ctx, method, params)
		return err
	}
}

// okResult is a result every one of the five operations can decode.
var okResult = map[string]any{
	"content": []any{map[string]any{"type": "text", "text": "ok"}}, "resources": []any{}, "contents": []any{}, "prompts": []any{}, "messages": []any{},
}

// failOn answers method with message on the sessions in bad, and okResult elsewhere.
func failOn(method, message string, bad ...string) func(*http.Request, string, string, json.RawMessage) (any, *client.RPCError) {
	return func(_ *http.Request, sid, m string, _ json.RawMessage) (any, *client.RPCError) {
		if m == method {
			for _, b := range bad {
				if sid == b {
					return nil, &client.RPCError{Code: -32602, Message: message}
				}
			}
		}
		return okResult, nil
	}
}

// TestRetryOnce covers CLI-RETRY-ONCE: every allow-listed message, in any
// case, on each of the five operations, makes the client reconnect (a new
// session) and retry exactly once, against the new session.
func TestRetryOnce(t *testing.T) {
	messages := []string{
		"Invalid params: Invalid or expired session",
		"EXPIRED SESSION",
		"Session expired; reinitialize",
		"mcp: session not found",
		"Unknown Session 42",
	}
	for _, op := range fiveOps {
		for _, msg := range messages {
			t.Run(op.method+"/"+msg, func(t *testing.T) {
				s := newScripted(t)
				s.answer = failOn(op.method, msg, "S1")
				rec := &recorder{}
				c := connectTo(t, s.options(rec))
				if err := op.call(ctx(t), c); err != nil {
					t.Fatalf("%s: %v", op.method, err)
				}
				sent := s.requests(rpc(op.method))
				if len(sent) != 2 || sent[0].Session != "S1" || sent[1].Session != "S2" {
					t.Fatalf("%s sent %+v, want once to S1 then once to S2", op.method, sent)
				}
				if n := len(s.requests(rpc("initialize"))); n != 2 {
					t.Fatalf("%d initializes, want 2", n)
				}
				if got := rec.trail(); got != "connecting connected reconnecting connected(reconnected)" {
					t.Fatalf("status trail %q", got)
				}
			})
		}
	}
}

// TestRetryOnceNot: unrelated errors, empty messages, operations outside
// the five and cancellation never reconnect; a failed retry surfaces its own
// error and is not retried again.
func TestRetryOnceNot(t *testing.T) {
	for _, tc := range []struct {
		name, method, message string
		call                  func(context.Context, *client.Client) error
	}{
		{"unrelated error", "tools/call", "tool exploded: the session of the user was not set up", fiveOps[0].call},
		{"empty message", "tools/call", "", fiveOps[0].call},
		{"not one of the five", "tools/list", "Session expired", func(ctx context.Context, c *client.Client) error { _, err := c.ListTools(ctx); return err }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newScripted(t)
			s.answer = failOn(tc.method, tc.message, "S1")
			c := connectTo(t, s.options(nil))
			err := tc.call(ctx(t), c)
			var rpcErr *client.RPCError
			if !errors.As(err, &rpcErr) || rpcErr.Message != tc.message {
				t.Fatalf("error %v, want the server's %q", err, tc.message)
			}
			if n := len(s.requests(rpc(tc.method))); n != 1 {
				t.Fatalf("%s sent %d times, want 1", tc.method, n)
			}
			if n := len(s.requests(rpc("initialize"))); n != 1 {
				t.Fatalf("%d initializes, want 1 (no reconnect)", n)
			}
		})
	}
	t.Run("failed retry", func(t *testing.T) {
		s := newScripted(t)
		s.answer = func(_ *http.Request, sid, m string, _ json.RawMessage) (any, *client.RPCError) {
			if m == "resources/list" {
				return nil, &client.RPCError{Code: -32600, Message: "session expired on " + sid}
			}
			return okResult, nil
		}
		c := connectTo(t, s.options(nil))
		_, err := c.Request(ctx(t), "resources/list", map[string]any{})
		var rpcErr *client.RPCError
		if !errors.As(err, &rpcErr) || rpcErr.Message != "session expired on S2" {
			t.Fatalf("error %v, want the retry's own error", err)
		}
		if n, m := len(s.requests(rpc("resources/list"))), len(s.requests(rpc("initialize"))); n != 2 || m != 2 {
			t.Fatalf("%d sends and %d initializes, want 2 and 2 (one retry, no loop)", n, m)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		s := newScripted(t)
		arrived := make(chan struct{})
		s.answer = func(r *http.Request, sid, m string, _ json.RawMessage) (any, *client.RPCError) {
			if m == "tools/call" {
				close(arrived)
				<-r.Context().Done() // held until the client gives up
				return nil, &client.RPCError{Code: -32600, Message: "Session expired"}
			}
			return nil, nil
		}
		c := connectTo(t, s.options(nil))
		callCtx, cancel := context.WithCancel(ctx(t))
		go func() { <-arrived; cancel() }()
		_, err := c.CallTool(callCtx, "slow", nil)
		if !client.IsCancelled(err) || !errors.Is(err, context.Canceled) {
			t.Fatalf("error %v, want a cancel", err)
		}
		if n, m := len(s.requests(rpc("tools/call"))), len(s.requests(rpc("initialize"))); n != 1 || m != 1 {
			t.Fatalf("%d calls and %d initializes after a cancel, want 1 and 1", n, m)
		}
		eventually(t, "notifications/cancelled", func() bool { return len(s.requests(rpc("notifications/cancelled"))) == 1 })
	})
}

// TestCancelWait covers CLI-CANCEL-WAIT: a cancel while the client waits to
// reconnect ends the wait at once, as a cancel, and the request is not sent
// again; the reconnect itself carries on for the client's other users.
func TestCancelWait(t *testing.T) {
	e := newEnv(t, server.Config{SSERetry: time.Hour})
	fc := clocktesting.NewFakeClock(time.Now())
	rec := &recorder{}
	o := e.options(nil, rec)
	o.Clock = fc
	o.ReconnectWait = time.Hour
	c := e.newClient(o)
	e.drop(c.SessionID())

	callCtx, cancel := context.WithCancel(ctx(t))
	errc := make(chan error, 1)
	go func() {
		_, err := c.CallTool(callCtx, "echo", map[string]any{"text": "x"})
		errc <- err
	}()
	eventually(t, "the 404 and the reconnect wait", func() bool {
		return e.reqs.count(func(r seenRequest) bool { return r.RPC == "tools/call echo" }) == 1 && c.Status() == client.Reconnecting && fc.HasWaiters()
	})
	cancel()
	select {
	case err := <-errc:
		if !client.IsCancelled(err) || !errors.Is(err, context.Canceled) {
			t.Fatalf("error %v, want a cancel", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the cancel did not end the wait")
	}
	if n := e.reqs.count(func(r seenRequest) bool { return r.RPC == "tools/call echo" }); n != 1 {
		t.Fatalf("echo sent %d times, want 1 (a cancelled request is not retried)", n)
	}
	// The reconnect's wait carries on for the client's other users. Its
	// timer may not be the clock's waiter seen above (the standalone
	// stream's retry wait can be, until the reconnect stops it), so the
	// clock moves on until the reconnect has finished.
	eventually(t, "the reconnect to finish", func() bool {
		if strings.HasSuffix(rec.trail(), "connected(reconnected)") {
			return true
		}
		fc.Step(time.Hour)
		return false
	})
	if got := rec.trail(); got != "connecting connected reconnecting connected(reconnected)" {
		t.Fatalf("status trail %q", got)
	}
}

// connectTo builds and connects a client, closed at cleanup.
func connectTo(t *testing.T, o client.Options) *client.Client {
	t.Helper()
	c, err := client.New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.Connect(ctx(t)); err != nil {
		t.Fatalf("Connect: %v", err)
	}
	return c
}

// drop ends session sid from outside the client, as an expiry does, once
// the client's GET stream is open: the server then closes it with a retry
// field, and the client's next request is the one that meets the 404.
func (e *env) drop(sid string) {
	e.t.Helper()
	eventually(e.t, "the GET stream", func() bool { return e.srv.InFlight() == 1 })
	resp, err := wire.New(e.url).Delete(ctx(e.t), sid)
	if err != nil || resp.Status != http.StatusNoContent {
		e.t.Fatalf("DELETE %s: %v %v", sid, resp, err)
	}
}
