package harness

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/target"
)

// discoverRevisions finds the revisions the target speaks
// (--protocol-version auto) and makes them the run's: the one its
// initialize negotiates, whatever revision of the sessions' era that is,
// and 2026-07-28 when server/discover (or initialize offering it) gets
// that revision back. A target that speaks neither is a setup error that
// says what each probe got; one that cannot be reached is said so at once.
func (o *Options) discoverRevisions(ctx context.Context, cfg *target.Profile) ([]revisionProbe, error) {
	var out []revisionProbe
	legacy, legacyErr := preflight(ctx, o.URL, wire.DefaultProtocolVersion, cfg, o.FollowRedirects)
	if legacyErr != nil && unreachable(legacyErr) {
		return nil, &SetupError{legacyErr}
	}
	if legacyErr == nil && !wire.Revision(legacy.version).Sessionless() {
		legacy = o.newestAccepted(ctx, cfg, legacy)
		if legacyErr = ungraded(legacy); legacyErr == nil {
			out = append(out, revisionProbe{revision: legacy.version, pr: legacy})
		}
	}
	modern, modernErr := preflight(ctx, o.URL, wire.SessionlessProtocolVersion, cfg, o.FollowRedirects)
	switch {
	case modernErr == nil && modern.version == wire.SessionlessProtocolVersion:
		out = append(out, revisionProbe{revision: modern.version, pr: modern})
	case modernErr == nil:
		modernErr = fmt.Errorf("offered %s, the target negotiated %s", wire.SessionlessProtocolVersion, modern.version)
	}
	if len(out) == 0 {
		var uv *unsupportedVersion
		switch {
		case legacyErr == nil: // it negotiated 2026-07-28 in initialize, yet does not speak it
			legacyErr = fmt.Errorf("offered %s, the target negotiated %s", wire.DefaultProtocolVersion, legacy.version)
		case !errors.As(legacyErr, &uv):
			// Not a refusal of the revision: a wrong URL, or not MCP;
			// what 2026-07-28 got adds nothing.
			return nil, &SetupError{legacyErr}
		}
		return nil, setupErr("the target speaks neither the sessions' revisions nor %s:\n  %s: %v\n  %s: %v%s",
			wire.SessionlessProtocolVersion, wire.DefaultProtocolVersion, legacyErr, wire.SessionlessProtocolVersion, modernErr, unknownRevisions(legacyErr, modernErr))
	}
	o.revisions = nil
	for _, p := range out {
		o.revisions = append(o.revisions, p.revision)
	}
	o.ProtocolVersion = strings.Join(o.revisions, ",")
	return out, nil
}

// sessionsRevisions are the revisions with sessions the harness knows,
// newest first.
var sessionsRevisions = []wire.Revision{wire.Revision20251125, wire.Revision20250618, wire.Revision20250326}

// ungraded says why a probe's negotiated revision cannot be graded: it is
// older than wire.OldestRevision, so the Streamable HTTP rules of every
// check are not its rules. nil for one the harness grades.
func ungraded(p *probe) error {
	if v := wire.Revision(p.version); !v.Graded() {
		return fmt.Errorf("the target negotiated protocol %s, older than %s, the first revision with the Streamable HTTP transport and the oldest mcp-conform grades: "+
			"no check's rule is that revision's", p.version, wire.OldestRevision)
	}
	return nil
}

// newestAccepted is the probe of the newest revision with sessions that
// the target accepts when offered it. A target offered 2025-11-25 should
// answer with the newest it supports, but some answer with their oldest
// (mcp-lite 0.10: 2025-03-26, though it accepts 2025-06-18): each newer
// revision than the one negotiated is offered in turn.
func (o *Options) newestAccepted(ctx context.Context, cfg *target.Profile, got *probe) *probe {
	o.downgraded = ""
	for _, rev := range sessionsRevisions {
		if !wire.Revision(got.version).Before(rev) {
			break
		}
		if rev == wire.Revision(wire.DefaultProtocolVersion) {
			continue // offered already
		}
		if p, err := preflight(ctx, o.URL, string(rev), cfg, o.FollowRedirects); err == nil && p.version == string(rev) {
			o.downgraded = fmt.Sprintf("offered %s, the target negotiated %s, but it accepts %s", wire.DefaultProtocolVersion, got.version, rev)
			return p
		}
	}
	return got
}

// unreachable reports an error of a target that did not answer at all.
func unreachable(err error) bool {
	var ue *unreachableError
	return errors.As(err, &ue)
}

// unknownRevisions names the revisions a target said it supports (the
// data.supported of an unsupported-version error) when the harness knows
// none of them, so the user sees why nothing was run.
func unknownRevisions(errs ...error) string {
	var named []string
	for _, err := range errs {
		var ue *unsupportedVersion
		if errors.As(err, &ue) {
			for _, r := range ue.supported {
				if wire.Revision(r).Valid() && !wire.Revision(r).Before(wire.Revision20250326) && !wire.Revision(wire.SessionlessProtocolVersion).Before(wire.Revision(r)) {
					return "" // one the harness knows: not the reason
				}
				named = append(named, r)
			}
		}
	}
	slices.Sort(named)
	named = slices.Compact(named)
	if len(named) == 0 {
		return ""
	}
	return fmt.Sprintf("\nThe target says it supports %s; mcp-conform knows %s to %s.", quoteList(named), wire.Revision20250326, wire.SessionlessProtocolVersion)
}

// discoveredNote says which revisions the run found, and how to choose.
func (o *Options) discoveredNote() string {
	spoken := strings.Join(o.revisions, " and ")
	if len(o.revisions) == 1 && o.downgraded == "" {
		spoken += " only"
	}
	if o.downgraded != "" {
		spoken += " (" + o.downgraded + ")"
	}
	return fmt.Sprintf("note: the target speaks protocol %s (asked with initialize and server/discover); --protocol-version chooses a revision", spoken)
}
