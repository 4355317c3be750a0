package target

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/catalogue"
)

func TestParseYAMLAndJSON(t *testing.T) {
	y := `
tools:
  notifying: {name: long_operation, arguments: {steps: 5}, notifications: 5, interval: 200ms}
  stateful: {name: counter_increment}
  resumable: {name: job_start, arguments: {steps: 1}, poll: job_get}
timings: {idle_threshold: 1s, grace_period: 2s, reaper_interval: 100ms, event_max_age: 3s, write_timeout: 4s}
principals: [{token: a, refreshed_token: a2}, {token: b}]
origins: {disallowed: https://evil.example}
recovery_hint: true
`
	c, err := Parse([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	if c.Tools.Notifying.Method != DefaultNotificationMethod || c.Tools.Notifying.Interval.D() != 200*time.Millisecond {
		t.Errorf("notifying: %+v", c.Tools.Notifying)
	}
	if r := c.Tools.Resumable; r.Name != "job_start" || r.Poll != "job_get" || r.Arguments["steps"] != float64(1) || c.Timings.WriteTimeout.D() != 4*time.Second {
		t.Errorf("resumable %+v, write timeout %v", r, c.Timings.WriteTimeout)
	}
	for _, k := range []catalogue.Key{catalogue.KeyNotifying, catalogue.KeyStateful, catalogue.KeyGraceTimings, catalogue.KeyEventMaxAge,
		catalogue.KeyPrincipals, catalogue.KeyRefreshedToken, catalogue.KeyOriginDenied, catalogue.KeyRecoveryHint, catalogue.KeyResumable} {
		if !c.Has(k) {
			t.Errorf("Has(%s) = false", k)
		}
	}
	j, err := Parse([]byte(`{"tools":{"stateful":{"name":"n"}}}`))
	if err != nil || !j.Has(catalogue.KeyStateful) || j.Has(catalogue.KeyNotifying) || j.Has(catalogue.KeyRefreshedToken) {
		t.Errorf("JSON profile: %+v %v", j, err)
	}
	empty, err := Parse([]byte(""))
	if err != nil || empty.Has(catalogue.KeyGraceTimings) {
		t.Errorf("empty profile: %v", err)
	}
}

// TestZeroGracePeriod: a declared grace_period of 0s (an idle TTL alone)
// is a declared grace period, not a missing one, and survives a round trip.
func TestZeroGracePeriod(t *testing.T) {
	c, err := Parse([]byte("timings: {idle_threshold: 2s, grace_period: 0s, reaper_interval: 500ms}"))
	if err != nil {
		t.Fatal(err)
	}
	if !c.Has(catalogue.KeyGraceTimings) || !c.Timings.GraceDeclared() || c.Timings.GracePeriod != 0 {
		t.Fatalf("timings %+v: want a declared grace period of 0s", c.Timings)
	}
	js, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Parse(js)
	if err != nil || !again.Timings.GraceDeclared() {
		t.Fatalf("round trip through %s: %+v, %v", js, again, err)
	}
	absent, err := Parse([]byte("timings: {event_max_age: 2s}"))
	if err != nil || absent.Timings.GraceDeclared() {
		t.Fatalf("no grace_period: declared %v, %v", absent.Timings.GraceDeclared(), err)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"tool: {}", "unknown field"},
		{"tools: {notifying: {name: x, notifications: 2, interval: 1s}}", "at least 4"},
		{"tools: {notifying: {name: x, notifications: 5}}", "interval"},
		{"tools: {notifying: {notifications: 5, interval: 1s}}", "name is empty"},
		{"timings: {idle_threshold: 1s}", "go together"},
		{"timings: {idle_threshold: 1s, grace_period: 0s}", "go together"},
		{"timings: {idle_threshold: 1s, grace: 1s, reaper_interval: 1s}", "unknown field"},
		{"timings: {idle_threshold: soon}", "invalid duration"},
		{"timings: {idle_threshold: 5}", "string"},
		{"timings: {write_timeout: -1s}", "negative"},
		{"tools: {resumable: {poll: job_get}}", "resumable.name is empty"},
		{"tools: {resumable: {name: job_start, token: resume_token}}", "unknown field"},
		{"principals: [{token: a}]", "exactly two"},
		{"principals: [{token: a}, {token: a}]", "must differ"},
		{"principals: [{token: a, refreshed_token: a}, {token: b}]", "refreshed_token must differ"},
		{"principals: [{token: a, refreshed_token: b}, {token: b}]", "refreshed_token must differ"},
		{"principals: [{token: a}, {token: b, refreshed_token: c}]", "only the first"},
		{"headers: {Mcp-Session-Id: x}", "set by the harness"},
		{"[1, 2", "yaml"},
	} {
		_, err := Parse([]byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) = %v, want error containing %q", tc.in, err, tc.want)
		}
	}
}

func TestLoad(t *testing.T) {
	if _, err := Load(filepath.Join(t.TempDir(), "missing.yaml")); err == nil || !strings.Contains(err.Error(), "target config") {
		t.Errorf("missing file: %v", err)
	}
	p := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(p, []byte("principals: 3"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(p); err == nil || !strings.Contains(err.Error(), p) {
		t.Errorf("bad file: %v (want the path in the error)", err)
	}
}

// TestSessionlessKeys: tools.stepping, listen and timings.keep_alive are
// declared, and validated.
func TestSessionlessKeys(t *testing.T) {
	y := `
tools:
  stepping: {name: tally_steps, arguments: {tally: "{key}", steps: 40}, read: {name: tally_get, arguments: {tally: "{key}"}}, steps: 40, interval: 50ms}
listen:
  notifications: {resourceSubscriptions: ["tally://{key}"]}
  trigger: {name: tally_steps, arguments: {tally: "{key}", steps: 1}}
  method: notifications/resources/updated
timings: {keep_alive: 500ms}
`
	c, err := Parse([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []catalogue.Key{catalogue.KeyStepping, catalogue.KeyListen, catalogue.KeyKeepAlive} {
		if !c.Has(k) {
			t.Errorf("Has(%s) = false", k)
		}
	}
	if c.Tools.Stepping.Read.Name != "tally_get" || c.Listen.Trigger.Arguments["tally"] != Key {
		t.Errorf("stepping %+v listen %+v", c.Tools.Stepping, c.Listen)
	}
	for bad, want := range map[string]string{
		"tools: {stepping: {name: s, read: {name: r}, steps: 3, interval: 1s}}": "steps must be at least",
		"tools: {stepping: {name: s, steps: 30, interval: 1s}}":                 "read.name",
		"listen: {notifications: {}, method: m}":                                "listen.trigger.name",
		"timings: {keep_alive: -1s}":                                            "must not be negative",
	} {
		if _, err := Parse([]byte(bad)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one saying %q", bad, err, want)
		}
	}
}
