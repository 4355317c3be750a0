package harness

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/mcp-conform/mcp-conform/internal/report"
	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/suites"
	"github.com/mcp-conform/mcp-conform/suites/kit"
	"github.com/mcp-conform/mcp-conform/suites/serverchecks"
	"github.com/mcp-conform/mcp-conform/target"
)

// AllRevisions is the --protocol-version that checks a target at each
// revision of its era: the sessions' (wire.DefaultProtocolVersion) and the
// sessionless one (wire.SessionlessProtocolVersion).
const AllRevisions = "all"

// DiscoverRevisions is the --protocol-version that asks the target which
// revisions it speaks and checks each of them: the sessions' era through
// initialize (at the revision the target negotiates, 2025-03-26 included)
// and the sessionless one through server/discover. It is the CLI's
// default, so that a server of either era, or of both, is checked with no
// flag at what it speaks.
const DiscoverRevisions = "auto"

// parseRevisions reads --protocol-version: one revision, "all", or a
// comma-separated list; the revisions come back sorted, without repeats.
func parseRevisions(v string) ([]string, error) {
	if v == AllRevisions || v == DiscoverRevisions {
		return []string{wire.DefaultProtocolVersion, wire.SessionlessProtocolVersion}, nil
	}
	var out []string
	for _, r := range strings.Split(v, ",") {
		r = strings.TrimSpace(r)
		if _, err := wire.ParseRevision(r); err != nil {
			return nil, setupErr("--protocol-version must look like 2025-11-25 (a revision), be a comma-separated list of revisions, all or auto; got %q", v)
		}
		out = append(out, r)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// appliesAt reports whether check id exists at revision: its catalogue
// entry lists the revision among its Revisions.
func appliesAt(id, revision string) bool {
	e, ok := suites.Lookup(id)
	return ok && e.Revisions.Has(wire.Revision(revision))
}

// revisionProbe is the first contact at one revision of a run.
type revisionProbe struct {
	revision string
	// pr is what the target answered; nil when it does not speak the
	// revision, and why is the reason.
	pr  *probe
	why string
}

// probeRevisions makes the first contact at each revision. A run of one
// revision fails on any error, as always; a run of several fails when no
// revision answers, or when a revision the user listed by name is one the
// target does not speak. With "all", a revision the target does not
// speak is skipped with the reason.
func (o *Options) probeRevisions(ctx context.Context, cfg *target.Profile) ([]revisionProbe, error) {
	if o.discover {
		return o.discoverRevisions(ctx, cfg)
	}
	var out []revisionProbe
	var firstErr error
	for _, rev := range o.revisions {
		pr, err := preflight(ctx, o.URL, rev, cfg, o.FollowRedirects)
		if err == nil {
			if err = ungraded(pr); err != nil {
				pr = nil
			}
		}
		switch {
		case err != nil && len(o.revisions) == 1:
			return nil, &SetupError{err}
		case err != nil:
			firstErr = cmpOr(firstErr, err)
			out = append(out, revisionProbe{revision: rev, why: err.Error()})
		case pr.version != rev && len(o.revisions) > 1:
			out = append(out, revisionProbe{revision: rev, why: fmt.Sprintf("offered %s, the target negotiated %s", rev, pr.version)})
		default:
			out = append(out, revisionProbe{revision: rev, pr: pr})
		}
	}
	spoken := slices.ContainsFunc(out, func(p revisionProbe) bool { return p.pr != nil })
	if !spoken {
		if firstErr != nil {
			return nil, &SetupError{firstErr}
		}
		return nil, setupErr("the target speaks none of the revisions %s: %s", strings.Join(o.revisions, ", "), out[0].why)
	}
	if o.ProtocolVersion != AllRevisions {
		for _, p := range out {
			if p.pr == nil {
				return nil, setupErr("--protocol-version %s: the target does not speak %s: %s (all checks each revision the target speaks)", o.ProtocolVersion, p.revision, p.why)
			}
		}
	}
	return out, nil
}

func cmpOr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// multi reports a run of several revisions, whose checks are named
// ID@revision.
func (o *Options) multi() bool { return len(o.revisions) > 1 }

// revisionJobs binds the checks that exist at p's revision to tc (nil when
// the target does not speak it: those checks skip, saying why).
func (o *Options) revisionJobs(p revisionProbe, tc *serverchecks.Target, cfg *target.Profile) []job {
	label := ""
	if o.multi() {
		label = p.revision
	}
	var checks []kit.Check
	if tc != nil {
		checks = serverchecks.Checks(tc)
	} else {
		for _, c := range serverchecks.Checks(&serverchecks.Target{Config: cfg}) {
			why := fmt.Sprintf("not applicable: the target does not speak protocol %s: %s", p.revision, p.why)
			c.Run = func(t *kit.T) { t.Skip(report.OtherRevision, why) }
			checks = append(checks, c)
		}
	}
	var out []job
	for _, c := range checks {
		if tc != nil {
			c.Entry = c.Entry.At(tc.ProtocolVersion) // graded at its level there
		}
		if !o.multi() || appliesAt(c.Entry.ID, p.revision) {
			out = append(out, job{Check: c, revision: label})
		}
	}
	return out
}

// notef prints a note, naming the revision it is about in a run of several.
func (o *Options) notef(w io.Writer, revision, format string, args ...any) {
	prefix := "note: "
	if o.multi() {
		prefix += revision + ": "
	}
	fmt.Fprintf(w, prefix+format+"\n", args...)
}
