package serverchecks

import (
	"context"
	"time"

	"github.com/mcp-conform/mcp-conform/target"
	"github.com/mcp-conform/mcp-conform/toxics"
)

// Target is what the server checks know about the run; the harness fills
// it in before it asks for the checks.
type Target struct {
	// URL is the target's MCP endpoint.
	URL string
	// Config is the target profile (never nil).
	Config *target.Profile
	// ProtocolVersion is offered in initialize and sent on every request:
	// the revision the target negotiated.
	ProtocolVersion string
	// RestartNeed is how long one restart of the target may take: the
	// harness's bounded stop plus the start time it measured when it
	// started the target (--server-cmd, the embedded reference). A check
	// that restarts the target needs that much more.
	RestartNeed time.Duration
	// Offered is the revision the run asked for, when the target
	// negotiated another; a check of a revision the target does not speak
	// says so then.
	Offered string
	// Faults is the embedded fault proxy server; nil with --no-proxy.
	Faults *toxics.Server
	// Restart restarts the target (F-RESTART); nil when it cannot.
	Restart func(ctx context.Context) error
	// Kill kills the target's process with SIGKILL (F-KILL), without
	// starting it again (Restart does); nil unless --server-cmd started it.
	Kill func(ctx context.Context) error
	// Replicas are the MCP endpoints of the target's other replicas
	// (--replica-url); the replica checks alternate requests between URL
	// and these, each behind its own fault proxy.
	Replicas []string
	// Baseline is what one call of the notifying tool that no fault
	// disturbed showed before the checks (ObserveBaseline); nil when none
	// was observed. The checks that count the tool's notifications judge
	// them, and bound their waits, by it.
	Baseline *Baseline
	// Sessionless is why the checks that need sessions do not apply (the
	// target assigned no session id, or speaks only a sessionless revision);
	// empty when they do. The catalogue's Stateless checks, and at
	// 2026-07-28 those of that revision, run there (see stateless.go).
	Sessionless string
	// FollowRedirects follows redirects within the target's origin
	// (--follow-redirects); by default a redirect is an answer. A redirect
	// to another origin is never followed.
	FollowRedirects bool
}
