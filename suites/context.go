package suites

import (
	"context"
	"sync"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/mcp-conform/mcp-conform/target"
	"github.com/mcp-conform/mcp-conform/toxics"
)

// TargetContext is what the specs know about the run. The harness fills
// TestContext before it runs the specs.
type TargetContext struct {
	// URL is the target's MCP endpoint.
	URL string
	// Config is the target profile (never nil during a run).
	Config *target.Config
	// ProtocolVersion is offered in initialize and sent on every request.
	ProtocolVersion string
	// Toxics is the embedded fault proxy server; nil with --no-proxy.
	Toxics *toxics.Server
	// Restart restarts the target (F-RESTART); nil when it cannot.
	Restart func(ctx context.Context) error
	// Sessionless is why session, GET and replay checks do not apply (the
	// target assigned no session id, or speaks only a sessionless revision);
	// empty when they do.
	Sessionless string
	// Total is the number of checks selected, for progress lines.
	Total int
}

// TestContext is the run's context.
var TestContext TargetContext

// DefaultCheckTimeout bounds one check that waits on no declared timing.
const DefaultCheckTimeout = 30 * time.Second

var (
	reportMu   sync.Mutex
	lastReport *types.Report
)

// LastReport returns the report of the finished run, or nil before it ends.
func LastReport() *types.Report {
	reportMu.Lock()
	defer reportMu.Unlock()
	return lastReport
}
