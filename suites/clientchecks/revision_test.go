package clientchecks

import (
	"strings"
	"testing"

	"github.com/mcp-conform/mcp-conform/suites/kit"
)

// TestRevisionChosenByTheClient: a check that needs sessions is not
// applicable, rather than failed, when a run of the client speaks
// 2026-07-28 by itself, even if its measured run did not show it.
func TestRevisionChosenByTheClient(t *testing.T) {
	t.Parallel()
	cl := &Client{Command: helperCommand(t, "discover"), Measured: fastClient}
	r := runCheck(t, cl, "CLI-404-REINIT", 0)
	if r.State != kit.Skipped || !strings.Contains(r.Message, "run 1 of the client spoke 2026-07-28 by itself (#1 asked server/discover)") {
		t.Errorf("state %v, message %q; want not applicable, the client speaking 2026-07-28", r.State, r.Message)
	}
	cl = &Client{Command: helperCommand(t, "discover"), Measured: fastClient}
	cl.Measured.Revision = "2026-07-28"
	if r := runCheck(t, cl, "CLI-STATUS", 0); r.State != kit.Skipped || !strings.Contains(r.Message, "the client speaks 2026-07-28 by itself") {
		t.Errorf("measured as speaking 2026-07-28: state %v, message %q; want not applicable", r.State, r.Message)
	}
}
