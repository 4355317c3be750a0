package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/fixtures"
)

// TestStormCommand: a small storm passes on the embedded reference (exit
// 0, JSON written) and fails on a server that loses messages written to
// reset connections (exit 1); bad flags exit 2.
func TestStormCommand(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	stormRun := func(args ...string) (string, int) {
		var out, errb bytes.Buffer
		code := run(ctx, append([]string{"storm"}, args...), &out, &errb)
		return out.String() + errb.String(), code
	}
	small := []string{"--sessions", "8", "--concurrency", "8", "--arguments", `{"steps":8,"interval_ms":100}`,
		"--notifications", "8", "--interval", "100ms", "--cut-after", "3", "--reconnect-delay", "300ms", "--settle", "3s"}

	js := filepath.Join(t.TempDir(), "storm.json")
	out, code := stormRun(append(small, "--json", js)...)
	if code != exitOK || !strings.Contains(out, "PASS") {
		t.Fatalf("embedded reference: exit %d, want 0:\n%s", code, out)
	}
	var res struct {
		Lost      int `json:"notifications_lost"`
		Delivered int `json:"notifications_delivered"`
	}
	if b, err := os.ReadFile(js); err != nil || json.Unmarshal(b, &res) != nil || res.Lost != 0 || res.Delivered != 64 {
		t.Fatalf("--json: %v %+v", err, res)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h, err := fixtures.DeadStreamsForget().Host(fixtures.Config(), ln)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	profile := filepath.Join(t.TempDir(), "profile.yaml")
	if err := os.WriteFile(profile, []byte(`tools:
  notifying: {name: long_operation, notifications: 5, interval: 200ms}
principals: [{name: alice, token: alice-token}, {name: bob, token: bob-token}]
`), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code = stormRun(append(small, "--url", h.URL(), "--target-config", profile)...)
	if code != exitFail || !strings.Contains(out, "notifications lost") {
		t.Fatalf("dead-streams-forget: exit %d, want 1 with lost notifications:\n%s", code, out)
	}

	for _, bad := range [][]string{
		{"--sessions", "0"},
		{"--reconnect", "later"},
		{"--url", "http://127.0.0.1:1/mcp"}, // no profile
		{"--arguments", "[]", "--notifications", "5"},
		{"--server-cmd", "true"},
		{"--url", "http://127.0.0.1:{port}/mcp", "--target-config", profile},
		{"extra"},
	} {
		if out, code := stormRun(bad...); code != exitUsage {
			t.Errorf("%v: exit %d, want 2:\n%s", bad, code, out)
		}
	}
}
