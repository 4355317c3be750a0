package target

import (
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
timings: {idle_threshold: 1s, grace_period: 2s, reaper_interval: 100ms, event_max_age: 3s}
principals: [{token: a}, {token: b}]
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
	for _, k := range []catalogue.Key{catalogue.KeyNotifying, catalogue.KeyStateful, catalogue.KeyGraceTimings, catalogue.KeyEventMaxAge,
		catalogue.KeyPrincipals, catalogue.KeyOriginDenied, catalogue.KeyRecoveryHint} {
		if !c.Has(k) {
			t.Errorf("Has(%s) = false", k)
		}
	}
	j, err := Parse([]byte(`{"tools":{"stateful":{"name":"n"}}}`))
	if err != nil || !j.Has(catalogue.KeyStateful) || j.Has(catalogue.KeyNotifying) {
		t.Errorf("JSON profile: %+v %v", j, err)
	}
	empty, err := Parse([]byte(""))
	if err != nil || empty.Has(catalogue.KeyGraceTimings) {
		t.Errorf("empty profile: %v", err)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"tool: {}", "unknown field"},
		{"tools: {notifying: {name: x, notifications: 2, interval: 1s}}", "at least 4"},
		{"tools: {notifying: {name: x, notifications: 5}}", "interval"},
		{"tools: {notifying: {notifications: 5, interval: 1s}}", "name is empty"},
		{"timings: {idle_threshold: 1s}", "go together"},
		{"timings: {idle_threshold: soon}", "invalid duration"},
		{"timings: {idle_threshold: 5}", "string"},
		{"principals: [{token: a}]", "exactly two"},
		{"principals: [{token: a}, {token: a}]", "must differ"},
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
