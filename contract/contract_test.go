package contract

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestRoundTrip: what the harness puts in the environment is what a
// client reads back.
func TestRoundTrip(t *testing.T) {
	want := Run{Scenario: "CLI-RESUME", StateDir: "/tmp/s", Action: ActionCall, Tool: "echo", Arguments: json.RawMessage(`{"text":"hi"}`), BearerToken: "tok", URL: "http://127.0.0.1:1/mcp", OAuth: true}
	for _, kv := range want.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	got, err := FromEnv(want.URL)
	if err != nil {
		t.Fatal(err)
	}
	if got.Scenario != want.Scenario || got.StateDir != want.StateDir || got.Action != want.Action || got.Tool != want.Tool ||
		string(got.Arguments) != string(want.Arguments) || got.BearerToken != want.BearerToken || got.URL != want.URL || !got.OAuth {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

func TestValidate(t *testing.T) {
	ok := Run{StateDir: "/tmp/s", Action: ActionShow, URL: "http://x/mcp"}
	for _, tc := range []struct {
		change func(*Run)
		want   string
	}{
		{func(r *Run) { r.StateDir = "" }, EnvStateDir},
		{func(r *Run) { r.URL = "" }, "URL"},
		{func(r *Run) { r.Action = "dance" }, "unknown"},
		{func(r *Run) { r.Action = ActionCall }, EnvTool},
		{func(r *Run) { r.Action, r.Tool, r.Arguments = ActionCall, "echo", json.RawMessage(`[1]`) }, "JSON object"},
	} {
		r := ok
		tc.change(&r)
		if err := r.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want an error about %s", r, err, tc.want)
		}
	}
	if err := ok.Validate(); err != nil {
		t.Error(err)
	}
}

func TestParseLine(t *testing.T) {
	l, ok := ParseLine(`{"type":"status","status":"connected","session_id":"S","reconnected":true,"extra":1}`)
	if !ok || l.Status != StatusConnected || !l.Reconnected || l.SessionID != "S" {
		t.Errorf("status line: %+v %v", l, ok)
	}
	for _, s := range []string{"", "hello", "{}", `{"type":`, "[1]"} {
		if _, ok := ParseLine(s); ok {
			t.Errorf("%q parsed as a line", s)
		}
	}
}
