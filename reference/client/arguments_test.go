package client_test

import (
	"encoding/json"
	"net/http"
	"sync"
	"testing"

	"github.com/mcp-conform/mcp-conform/reference/client"
)

// TestCallSendsArgumentsObject: a call without arguments (nil, a nil map,
// no or null JSON) sends "arguments":{}, never null, which servers that
// validate params with a schema refuse; a task call too.
func TestCallSendsArgumentsObject(t *testing.T) {
	s := newScripted(t)
	var mu sync.Mutex
	var sent []string
	s.answer = func(_ *http.Request, _, method string, params json.RawMessage) (any, *client.RPCError) {
		if method != "tools/call" {
			return nil, nil
		}
		var p struct {
			Arguments json.RawMessage `json:"arguments"`
		}
		json.Unmarshal(params, &p)
		mu.Lock()
		sent = append(sent, string(p.Arguments))
		mu.Unlock()
		return map[string]any{"content": []any{}}, nil
	}
	c := connectTo(t, s.options(nil))
	for _, args := range []any{nil, map[string]any(nil), json.RawMessage(nil), json.RawMessage("null")} {
		if _, err := c.CallTool(ctx(t), "counter_increment", args); err != nil {
			t.Fatalf("CallTool(%#v): %v", args, err)
		}
	}
	// The answer is no CreateTaskResult, so the task call fails once sent.
	c.CallToolTask(ctx(t), "counter_increment", json.RawMessage("null"))
	mu.Lock()
	defer mu.Unlock()
	if len(sent) != 5 {
		t.Fatalf("%d tools/call sent, want 5: %q", len(sent), sent)
	}
	for i, a := range sent {
		if a != "{}" {
			t.Errorf("call %d sent arguments %q, want {}", i, a)
		}
	}
}
