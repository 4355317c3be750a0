package serverchecks

import (
	"fmt"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/internal/report"
	"github.com/mcp-conform/mcp-conform/internal/wire"
)

// A target without sessions is one of two kinds. A stateless 2025-11-25
// server (the SDKs' stateless mode) still does the initialize handshake
// but issues no Mcp-Session-Id: the catalogue's Stateless checks run
// against it, their requests carrying no session id. The sessionless
// revision 2026-07-28 has no initialize at all: there only the checks
// whose entries list it among their Revisions run.

// sessionlessRevision reports a target checked in 2026-07-28.
func (tc *Target) sessionlessRevision() bool {
	return wire.Revision(tc.ProtocolVersion).Sessionless()
}

// stateless reports a target that does the initialize handshake but
// issued no session id.
func (tc *Target) stateless() bool { return tc.Sessionless != "" && !tc.sessionlessRevision() }

// stateless reports a check against a stateless 2025-11-25 target:
// connect returns "" and requests carry no Mcp-Session-Id.
func (e *env) stateless() bool { return e.target.stateless() }

// inapplicable says why the behaviour of ent does not apply to the target
// ("" when it does): the run's revision is not among its Revisions, or the
// target issues no session id and the check needs one.
func (tc *Target) inapplicable(ent catalogue.Entry) (report.Cause, string) {
	switch rev := wire.Revision(tc.ProtocolVersion); {
	case ent.Revisions.Since != "" && rev.Before(ent.Revisions.Since) && tc.Offered != "" && tc.Offered != tc.ProtocolVersion && !wire.Revision(tc.Offered).Before(ent.Revisions.Since):
		return report.OtherRevision, fmt.Sprintf("not applicable: the rule is of protocol %s, and the target does not speak it: offered %s, it negotiated %s", ent.Revisions, tc.Offered, rev)
	case ent.Revisions.Since == wire.Revision20260728 && rev.Before(ent.Revisions.Since):
		return report.OtherRevision, OnlySessionlessRevision
	case ent.Revisions.Since != "" && rev.Before(ent.Revisions.Since):
		return report.OtherRevision, fmt.Sprintf("not applicable: the rule is of protocol %s; the target negotiated %s", ent.Revisions, rev)
	case tc.sessionlessRevision() && !ent.Revisions.Has(rev) && ent.Stateless:
		return report.NoSessions, "not applicable: " + tc.Sessionless + "; the check begins with the initialize handshake, which that revision removed"
	case tc.sessionlessRevision() && !ent.Revisions.Has(rev), tc.stateless() && !ent.Stateless:
		return report.NoSessions, "not applicable: " + tc.Sessionless
	}
	return "", ""
}

// RunsInSessionlessRevision reports whether check id runs under
// --protocol-version 2026-07-28, rather than being skipped there as
// needing sessions or the initialize handshake.
func RunsInSessionlessRevision(id string) bool {
	e, ok := lookup(id)
	return ok && e.Revisions.Has(wire.Revision20260728)
}

// RunsWithSessions reports whether check id runs against a 2025 target
// that issues session ids, rather than existing in the sessionless
// revision only.
func RunsWithSessions(id string) bool {
	e, ok := lookup(id)
	return ok && e.Revisions.Has(wire.Revision20251125)
}
