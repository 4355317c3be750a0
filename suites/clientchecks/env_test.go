package clientchecks

import "testing"

// TestCallRunArgumentsObject: a call run without arguments carries {},
// which the contract accepts, not null, which it refuses.
func TestCallRunArgumentsObject(t *testing.T) {
	for _, args := range []any{nil, map[string]any(nil)} {
		r := callRun("counter_increment", args)
		if string(r.Arguments) != "{}" {
			t.Errorf("callRun(%#v) carries arguments %s, want {}", args, r.Arguments)
		}
		r.StateDir, r.URL = t.TempDir(), "http://127.0.0.1:1/mcp"
		if err := r.Validate(); err != nil {
			t.Errorf("callRun(%#v): %v", args, err)
		}
	}
	if r := callRun("echo", map[string]any{"text": "x"}); string(r.Arguments) != `{"text":"x"}` {
		t.Errorf("callRun with arguments carries %s", r.Arguments)
	}
}
