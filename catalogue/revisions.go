package catalogue

import "github.com/mcp-conform/mcp-conform/internal/wire"

// Revisions are the protocol revisions a behaviour belongs to: those from
// Since to Until, both included; an empty end is open.
type Revisions struct {
	Since wire.Revision `json:"since,omitempty"`
	Until wire.Revision `json:"until,omitempty"`
}

// The ranges the catalogue uses.
var (
	// EveryRevision: the behaviour exists with sessions and without.
	EveryRevision = Revisions{}
	// WithSessions: the revisions with initialize and sessions, up to
	// 2025-11-25.
	WithSessions = Revisions{Until: wire.Revision20251125}
	// SessionlessOnly: 2026-07-28, which removed sessions, and later.
	SessionlessOnly = Revisions{Since: wire.Revision20260728}
	// WithVersionHeader: the revisions with sessions that have the
	// MCP-Protocol-Version header, new in 2025-06-18.
	WithVersionHeader = Revisions{Since: wire.Revision20250618, Until: wire.Revision20251125}
	// WithPriming: the revision with sessions that has priming events and
	// the retry field, new in 2025-11-25.
	WithPriming = Revisions{Since: wire.Revision20251125, Until: wire.Revision20251125}
)

// Has reports whether r is among rs. No range holds a revision older
// than wire.OldestRevision: no check's rule is that revision's.
func (rs Revisions) Has(r wire.Revision) bool {
	return r.Graded() && (rs.Since == "" || r.AtLeast(rs.Since)) && (rs.Until == "" || !rs.Until.Before(r))
}

// String names the range for listings.
func (rs Revisions) String() string {
	switch {
	case rs.Since == "" && rs.Until == "":
		return "every revision"
	case rs.Until == "":
		return string(rs.Since) + " on"
	case rs.Since == "":
		return "up to " + string(rs.Until)
	}
	return string(rs.Since) + " to " + string(rs.Until)
}
