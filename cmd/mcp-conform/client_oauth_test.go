package main

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/mcp-conform/mcp-conform/contract"
	"github.com/mcp-conform/mcp-conform/internal/report"
)

// TestE2EClientOAuth: the reference client, which refreshes an expired access
// token in its session and stores the refreshed one, passes the OAuth
// checks; each broken variant fails the one it breaks; a client that does
// not do OAuth is not applicable, never failed.
func TestE2EClientOAuth(t *testing.T) {
	skipShort(t, "runs the OAuth client checks against the reference and broken clients")
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{"CLI-OAUTH-REFRESH", "CLI-OAUTH-DURABLE"}
	for _, tc := range []struct {
		name, command string
		want          map[string]report.Verdict
	}{
		{"reference", shellQuote(exe) + " client reference", map[string]report.Verdict{"CLI-OAUTH-REFRESH": report.Pass, "CLI-OAUTH-DURABLE": report.Pass}},
		{"reinit-on-401", brokenClient(t, "reinit-on-401"), map[string]report.Verdict{"CLI-OAUTH-REFRESH": report.Fail, "CLI-OAUTH-DURABLE": report.Pass}},
		{"never-refreshes", brokenClient(t, "never-refreshes"), map[string]report.Verdict{"CLI-OAUTH-REFRESH": report.Fail, "CLI-OAUTH-DURABLE": report.Pass}},
		{"forgets-refreshed-token", brokenClient(t, "forgets-refreshed-token"), map[string]report.Verdict{"CLI-OAUTH-REFRESH": report.Pass, "CLI-OAUTH-DURABLE": report.Fail}},
		{"without OAuth", fmt.Sprintf("env -u %s %s client reference", contract.EnvOAuth, shellQuote(exe)), map[string]report.Verdict{"CLI-OAUTH-REFRESH": report.Skip, "CLI-OAUTH-DURABLE": report.Skip}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := runClientChecks(t, tc.command, ids...)
			for _, id := range ids {
				c := got[id]
				if c.Verdict != tc.want[id] {
					t.Errorf("%s is %s, want %s: %s", id, c.Verdict, tc.want[id], c.Message)
				}
				if c.Verdict == report.Skip && (c.Cause != report.NotOffered || !strings.HasPrefix(c.Message, "not applicable: the client does not do OAuth")) {
					t.Errorf("%s skipped for %q, want: the client does not do OAuth", id, c.Message)
				}
			}
		})
	}
}
