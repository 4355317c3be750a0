package client_test

import (
	"errors"
	"testing"

	"github.com/mcp-conform/mcp-conform/reference/client"
	"github.com/mcp-conform/mcp-conform/reference/client/storage"
	"github.com/mcp-conform/mcp-conform/reference/server"
)

// TestResumeCallAfterRestart: a client is closed in the middle of a call
// (the page goes away; no DELETE, no cancel), steps run with nobody there,
// and a new client on the same storage rejoins the same session and
// ResumeCall delivers the remaining notifications once, then the result.
func TestResumeCallAfterRestart(t *testing.T) {
	for _, mode := range []client.ReconnectMode{client.Auto, client.Reuse} {
		t.Run(string(mode), func(t *testing.T) {
			e := newEnv(t, server.Config{})
			st := storage.NewMemory()
			first := &recorder{}
			o := e.options(st, first)
			o.Reconnect = mode
			a := e.newClient(o)
			sid := a.SessionID()
			done := make(chan error, 1)
			go func() {
				_, err := a.CallTool(ctx(t), "long_operation", map[string]any{"steps": 4, "interval_ms": 1000})
				done <- err
			}()
			e.step()
			eventually(t, "step 1", func() bool { return first.count() == 2 })
			a.Close()
			if err := <-done; !errors.Is(err, client.ErrClosed) {
				t.Fatalf("call on a closed client: %v", err)
			}
			eventually(t, "the server to notice", func() bool { return e.srv.InFlight() == 0 })
			e.step()
			e.step()

			second := &recorder{}
			o = e.options(st, second)
			o.Reconnect = mode
			b := e.newClient(o)
			if b.SessionID() != sid {
				t.Fatalf("session %s, want %s", b.SessionID(), sid)
			}
			res := make(chan *client.ToolResult, 1)
			go func() {
				r, err := b.ResumeCall(ctx(t))
				if err != nil {
					t.Errorf("ResumeCall: %v", err)
				}
				res <- r
			}()
			eventually(t, "steps 2 and 3", func() bool { return second.count() == 4 })
			e.step()
			eventually(t, "step 4 "+second.steps(), func() bool { return second.count() == 6 })
			r := <-res
			if r == nil {
				t.FailNow()
			}
			if got := first.steps() + " | " + second.steps(); got != "p1 l1 | p2 l2 p3 l3 p4 l4" {
				t.Fatalf("notifications %s", got)
			}
			if text := r.Result.Content[0]; text == nil {
				t.Fatal("no content")
			}
			t.Log(first.trail(), "|", second.trail(), string(r.Raw))
		})
	}
}
