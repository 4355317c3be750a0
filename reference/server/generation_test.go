package server_test

import (
	"net/http"
	"testing"
)

// TestReinitializeKeepsCallInFlight: a re-initialize in the middle of a call
// does not lose it. The replaced transport goes on until the call is
// answered, on its live POST stream, or on that stream resumed after a cut
// (its notifications held meanwhile, as for any cut).
func TestReinitializeKeepsCallInFlight(t *testing.T) {
	for _, cut := range []bool{false, true} {
		name := map[bool]string{false: "live POST", true: "resumed POST"}[cut]
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, noKeepAlive)
			sid := e.connect(e.c)
			post := e.startLongOperation(e.c, sid, 3)
			e.step()
			seen := next(t, post, 2)
			c := e.client()
			if cut {
				c = e.refresh()
			}
			if resp, err := c.Initialize(e.ctx(), sid); err != nil || resp.Status != http.StatusOK {
				t.Fatalf("re-initialize: %v %v", resp, err)
			}
			e.step()
			e.step()
			if cut {
				post = e.openStream(c, sid, seen[1].ID)
			}
			if got := describe(t, messages(t, post)); got != "progress II, log step 2 of 3, progress III, log step 3 of 3, result completed 3 steps" {
				t.Fatalf("after the re-initialize: %s", got)
			}
			// The session works on its new transport.
			if got := e.tool(c, sid, "counter_increment", nil); got != "1" {
				t.Fatalf("counter_increment after the re-initialize = %s", got)
			}
		})
	}
}
