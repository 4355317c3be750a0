package server_test

import (
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/reference/server"
)

// modernAnswer is the outcome of a sessionless call sent in the background.
type modernAnswer struct {
	resp *wire.Response
	msg  wire.Message
	err  error
}

// goModernTool sends a 2026-07-28 tools/call from c in the background.
func (e *env) goModernTool(c *wire.Client, name string, args map[string]any) <-chan modernAnswer {
	params := map[string]any{"name": name, "arguments": args, "_meta": modernMeta(false)}
	req, err := c.NewHTTPRequest(e.ctx(), http.MethodPost, "", c.Request("tools/call", params))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Mcp-Protocol-Version", modern)
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", name)
	out := make(chan modernAnswer, 1)
	go func() {
		resp, err := c.Do(req)
		if err != nil {
			out <- modernAnswer{err: err}
			return
		}
		m, err := resp.Result()
		out <- modernAnswer{resp, m, err}
	}()
	return out
}

// served fails unless a answers with a result.
func served(t *testing.T, what string, a modernAnswer) {
	t.Helper()
	if a.err != nil || a.resp.Status != http.StatusOK || a.msg.Error != nil || a.msg.Result == nil {
		t.Fatalf("%s: %v %+v %+v", what, a.err, a.resp, a.msg.Error)
	}
}

// TestSessionlessInFlightBounded: a client of the sessionless revision (an
// address, or a principal whatever its address) has at most
// MaxSessionlessPerClient requests in flight; one more is refused at once
// with 429, while another client is still served, and a call that ends
// frees its slot.
func TestSessionlessInFlightBounded(t *testing.T) {
	const limit = 2
	anonymous := func(t *testing.T) (*env, *wire.Client, *wire.Client) {
		e := newEnv(t, server.Config{MaxSessionlessPerClient: limit, TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}})
		a, b := e.modernClient(), e.modernClient()
		a.Header.Set(server.HeaderXForwardedFor, "198.51.100.1")
		b.Header.Set(server.HeaderXForwardedFor, "198.51.100.2")
		return e, a, b
	}
	principals := func(t *testing.T) (*env, *wire.Client, *wire.Client) {
		return twoPrincipalsWith(t, server.Config{MaxSessionlessPerClient: limit})
	}
	for name, setup := range map[string]func(*testing.T) (*env, *wire.Client, *wire.Client){
		"anonymous, by forwarded address": anonymous, "by principal, one address": principals,
	} {
		t.Run(name, func(t *testing.T) {
			e, a, b := setup(t)
			long := map[string]any{"steps": 1, "interval_ms": 1000}
			var calls []<-chan modernAnswer
			for range limit {
				calls = append(calls, e.goModernTool(a, "long_operation", long))
			}
			eventually(t, "the calls waiting for their step", func() bool { return e.clock.Waiters() == limit })
			extra := e.goModernTool(a, "long_operation", long)
			var got modernAnswer
			deadline := time.Now().Add(10 * time.Second)
			for got.resp == nil && got.err == nil {
				select {
				case got = <-extra:
				default:
					if e.clock.Waiters() > limit {
						t.Fatalf("call %d of one client accepted past the limit of %d", limit+1, limit)
					}
					if time.Now().After(deadline) {
						t.Fatal("no answer to the call past the limit")
					}
					time.Sleep(5 * time.Millisecond)
				}
			}
			if got.err != nil || got.resp.Status != http.StatusTooManyRequests || got.resp.Header.Get("Retry-After") != "1" ||
				got.msg.Error == nil || got.msg.Error.Code != server.CodeInvalidRequest || !strings.Contains(got.msg.Error.Message, "too many requests in flight") {
				t.Fatalf("call past the limit: %v %+v %+v; want 429, Retry-After 1 and error -32600 too many requests in flight", got.err, got.resp, got.msg.Error)
			}
			if string(got.msg.ID) == "null" {
				t.Fatalf("refusal answers id null, not the request's")
			}
			served(t, "another client's call", <-e.goModernTool(b, "echo", map[string]any{"text": "x"}))
			e.clock.Step(time.Second)
			for i, c := range calls {
				served(t, "call "+string(rune('1'+i)), <-c)
			}
			eventually(t, "the calls' slots freed", func() bool { return e.srv.SessionlessInFlight() == 0 })
			served(t, "a call once the others ended", <-e.goModernTool(a, "echo", map[string]any{"text": "y"}))
		})
	}
}
