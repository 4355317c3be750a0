package clientchecks

import (
	"context"
	"time"

	"github.com/mcp-conform/mcp-conform/catalogue"
)

// undisturbedChecks is the premise of the others: one call with no fault.
func undisturbedChecks() []def {
	return []def{
		{Entry: catalogue.Entry{ID: "CLI-CALL-UNDISTURBED", Level: catalogue.Res, Revisions: catalogue.EveryRevision, SpecRef: catalogue.ResilienceProfile + "undisturbed-client-call",
			Summary: "A call that no fault disturbs completes: the client exits 0 and prints the call's result. The other checks stand on it: their runs that fail to complete are blocked by it when it failed."},
			opts: serverOpts{}, runs: 1, waits: 2 * 20 * time.Millisecond, body: func(ctx context.Context, e *clientEnv) {
				a := e.run(ctx, callRun("long_operation", map[string]any{"steps": 2, "interval_ms": 20}), "a call that no fault disturbs must complete")
				a.result()
			}},
	}
}
