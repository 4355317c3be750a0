package wire

import (
	"fmt"
	"time"
)

// Revision is a protocol revision, named by its date (YYYY-MM-DD).
// Revisions are ordered by that date, never as strings: a value that is
// not a date (an empty or malformed header) comes before every revision.
type Revision string

// The revisions the harness knows by name, oldest first.
const (
	// Revision20250326 brings the Streamable HTTP transport
	// (OldestRevision).
	Revision20250326 Revision = "2025-03-26"
	Revision20250618 Revision = "2025-06-18"
	// Revision20251125 adds priming events on POST streams and the
	// tasks utility.
	Revision20251125 Revision = "2025-11-25"
	// Revision20260728 removes sessions, initialize and the standalone
	// GET stream (SessionlessProtocolVersion).
	Revision20260728 Revision = "2026-07-28"
)

// OldestRevision is the oldest revision the harness grades: the first with
// the Streamable HTTP transport. Older ones (2024-11-05) have the HTTP+SSE
// transport, whose rules are not these.
const OldestRevision = Revision20250326

// ParseRevision reads a revision: a date, YYYY-MM-DD.
func ParseRevision(s string) (Revision, error) {
	if len(s) != len(time.DateOnly) {
		return "", fmt.Errorf("%q is not a protocol revision (YYYY-MM-DD, such as %s)", s, DefaultProtocolVersion)
	}
	if _, err := time.Parse(time.DateOnly, s); err != nil {
		return "", fmt.Errorf("%q is not a protocol revision (not a date)", s)
	}
	return Revision(s), nil
}

// date is r's date, or the zero time when r is not a revision.
func (r Revision) date() time.Time {
	if len(r) != len(time.DateOnly) {
		return time.Time{}
	}
	d, _ := time.Parse(time.DateOnly, string(r))
	return d
}

// Valid reports whether r names a date.
func (r Revision) Valid() bool { return !r.date().IsZero() }

// Compare orders r and o by date: -1, 0 or +1. Two values that are not
// revisions are equal to each other and before every revision.
func (r Revision) Compare(o Revision) int { return r.date().Compare(o.date()) }

// Before reports whether r is older than o.
func (r Revision) Before(o Revision) bool { return r.Compare(o) < 0 }

// AtLeast reports whether r is o or newer; a value that is not a revision
// is at least no revision.
func (r Revision) AtLeast(o Revision) bool { return r.Valid() && r.Compare(o) >= 0 }

// Graded reports whether r is a revision the harness grades:
// OldestRevision or newer.
func (r Revision) Graded() bool { return r.AtLeast(OldestRevision) }

// Sessionless reports whether r has no sessions: 2026-07-28 or newer.
func (r Revision) Sessionless() bool { return r.AtLeast(Revision20260728) }

// HasPriming reports whether r's POST streams open with a priming event:
// 2025-11-25 or newer.
func (r Revision) HasPriming() bool { return r.AtLeast(Revision20251125) }
