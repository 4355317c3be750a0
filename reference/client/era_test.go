package client_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/mcp-conform/mcp-conform/reference/client"
	"github.com/mcp-conform/mcp-conform/reference/client/storage"
	"github.com/mcp-conform/mcp-conform/reference/server"
)

// eraGate makes e's dual-era server answer as a server of one revision
// alone: era "legacy" refuses 2026-07-28 as the TypeScript SDK's 2025
// server does (400, -32000), era "modern" refuses the rest (400, -32022;
// GET and DELETE 405). It returns the setter.
func eraGate(e *env) func(era string) {
	var mu sync.Mutex
	era := ""
	e.reqs.mu.Lock()
	e.reqs.gate = func(w http.ResponseWriter, r seenRequest) bool {
		mu.Lock()
		defer mu.Unlock()
		modern := r.Version == client.ModernProtocolVersion || r.RPC == "server/discover"
		w.Header().Set("Content-Type", "application/json")
		switch {
		case era == "legacy" && modern:
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: Server not initialized"},"id":null}`)
		case era == "modern" && (r.Method == http.MethodGet || r.Method == http.MethodDelete):
			w.WriteHeader(http.StatusMethodNotAllowed)
		case era == "modern" && !modern:
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"jsonrpc":"2.0","error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28"]}},"id":null}`)
		default:
			w.Header().Del("Content-Type")
			return false
		}
		return true
	}
	e.reqs.mu.Unlock()
	return func(v string) {
		mu.Lock()
		era = v
		mu.Unlock()
	}
}

// TestEraCachedAndSwitched: a client of 2026-07-28 falls back to
// initialize at a 2025-11-25 server whose 400 holds no error of
// 2026-07-28, and remembers it: restarted, it probes no more. When the
// server restarts as 2026-07-28 only, the call refused with -32022 is sent
// once more after server/discover, with no session id; back at a 2025
// server, the client initializes again and calls once.
func TestEraCachedAndSwitched(t *testing.T) {
	e := newEnv(t, server.Config{})
	setEra := eraGate(e)
	setEra("legacy")
	st := storage.NewMemory()
	call := func(text string) {
		t.Helper()
		c := e.newClient(modernOptions(e, st))
		defer c.Close()
		if err := c.Connect(ctx(t)); err != nil {
			t.Fatalf("connect: %v", err)
		}
		res, err := c.CallTool(ctx(t), "echo", map[string]any{"text": text})
		if err != nil || res.Result.IsError {
			t.Fatalf("call %s: %v %+v", text, err, res)
		}
	}
	call("one")
	if n := e.reqs.count(isMethod("initialize")); n != 1 {
		t.Fatalf("%d initialize at a 2025-11-25 server, want 1: %+v", n, e.reqs.all())
	}
	before := len(e.reqs.all())
	call("two")
	for _, r := range e.reqs.all()[before:] {
		if r.RPC == "server/discover" || r.Version == client.ModernProtocolVersion {
			t.Fatalf("the restarted client probed again: %+v", r)
		}
	}
	before = len(e.reqs.all())
	c := e.newClient(modernOptions(e, st))
	defer c.Close()
	if err := c.Connect(ctx(t)); err != nil {
		t.Fatal(err)
	}
	setEra("modern")
	if _, err := c.CallTool(ctx(t), "echo", map[string]any{"text": "three"}); err != nil {
		t.Fatalf("call after the server became 2026-07-28 only: %v", err)
	}
	after := e.reqs.all()[before:]
	discovered, calls := false, 0
	for _, r := range after {
		discovered = discovered || r.RPC == "server/discover"
		if discovered && r.Session != "" {
			t.Fatalf("a session id after the switch: %+v", r)
		}
		if discovered && strings.HasPrefix(r.RPC, "tools/call") {
			calls++
		}
	}
	if !discovered || calls != 1 {
		t.Fatalf("after the refusal: server/discover %v, %d calls, want one: %+v", discovered, calls, after)
	}
	before = len(e.reqs.all())
	setEra("legacy")
	if _, err := c.CallTool(ctx(t), "echo", map[string]any{"text": "four"}); err != nil {
		t.Fatalf("call after the server became 2025-11-25 only: %v", err)
	}
	if n := e.reqs.count(isMethod("initialize")); n < 2 {
		t.Fatalf("no new initialize after the server went back to 2025-11-25: %+v", e.reqs.all()[before:])
	}
}
