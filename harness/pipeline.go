package harness

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/mcp-conform/mcp-conform/internal/report"
	"github.com/mcp-conform/mcp-conform/suites/serverchecks"
	"github.com/mcp-conform/mcp-conform/target"
	"github.com/mcp-conform/mcp-conform/toxics"
)

// Run runs the server checks once and returns the result; the console
// progress and summary go to stdout. It is a pipeline of stages, each a
// function from values to values, read top to bottom:
//
//	start    the target: the embedded reference, a --server-cmd process, or a URL
//	probe    first contact: the revisions it speaks
//	plan     a checked target per revision, and the jobs to run on them
//	check    the jobs in the engine, while the liveness watcher listens
//	suggest  the profile keys that would enable more checks
func Run(ctx context.Context, o Options, stdout, stderr io.Writer) (*report.Run, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	cfg, err := o.targetConfig()
	if err != nil {
		return nil, &SetupError{err}
	}
	tgt, err := o.start(ctx, stdout, stderr)
	if err != nil {
		return nil, err
	}
	defer tgt.close()
	probes, err := o.probe(ctx, cfg, stdout)
	if err != nil {
		return nil, err
	}
	p := o.plan(ctx, cfg, tgt, probes, stdout)
	defer p.close()
	run, err := o.check(ctx, p, stdout, stderr)
	if err == nil {
		o.suggest(ctx, run, suggestVersion(p.versions), cfg, p.restartable, stdout)
	}
	return run, err
}

// started is the target of a run, at o.URL: managed, when the harness
// started it, is what restarts it (nil for a URL it was given).
type started struct {
	managed restarter
	// restartNeed is how long a restart takes: stopping the target (at
	// most stopTimeout) and starting it again, as long as the first start.
	restartNeed time.Duration
}

func (s started) close() {
	if s.managed != nil {
		s.managed.Close()
	}
}

// start starts the embedded reference (no --url) or the --server-cmd
// process, and points o.URL at it; a target given by URL alone is taken
// as it is.
func (o *Options) start(ctx context.Context, stdout, stderr io.Writer) (started, error) {
	var s started
	switch {
	case o.URL == "":
		rt, err := startReference(stderr)
		if err != nil {
			return s, &SetupError{err}
		}
		s.managed, o.URL = rt, rt.URL()
	case o.ServerCmd != "":
		p, err := startProcess(ctx, o.ServerCmd, o.URL, o.ServerStartTimeout)
		if err != nil {
			return s, &SetupError{err}
		}
		s.managed, o.URL = p, p.url
		fmt.Fprintf(stdout, "note: --server-cmd answered %v after it started; a check that restarts it gets that long more per restart\n", p.StartTook().Round(10*time.Millisecond))
	}
	s.restartNeed = stopTimeout
	if st, ok := s.managed.(interface{ StartTook() time.Duration }); ok {
		s.restartNeed += st.StartTook()
	}
	return s, nil
}

// probe makes the first contact at each revision of the run (probeRevisions)
// and says what it found; a redirect it was allowed to follow moves o.URL.
func (o *Options) probe(ctx context.Context, cfg *target.Profile, stdout io.Writer) ([]revisionProbe, error) {
	probes, err := o.probeRevisions(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if o.discover {
		fmt.Fprintln(stdout, o.discoveredNote())
	}
	if o.FollowRedirects {
		fmt.Fprintf(stdout, "note: --follow-redirects: redirects within the target's origin are followed; a redirect to another origin never is\n")
		if first := firstSpoken(probes); first.url != o.URL {
			fmt.Fprintf(stdout, "note: %s redirected initialize to %s (same origin); checking %s\n", o.URL, first.url, first.url)
			o.URL = first.url
		}
	}
	return probes, nil
}

// firstSpoken is the probe of the first revision the target speaks: it
// stands for the run where one must (the liveness probes, the margin's
// round trip, the suggestion).
func firstSpoken(probes []revisionProbe) *probe {
	return probes[slices.IndexFunc(probes, func(p revisionProbe) bool { return p.pr != nil })].pr
}

// plan is what a run checks, and with what.
type plan struct {
	first    *probe
	jobs     []job
	live     *liveness
	rtt      time.Duration // the slowest first contact
	versions []string      // the revisions the target speaks
	// restartable: the harness can restart the target (the restart checks
	// can run).
	restartable bool
	managed     restarter
	faults      *toxics.Server // nil with --no-proxy
}

func (p *plan) close() {
	if p.faults != nil {
		p.faults.Close()
	}
}

// plan makes a checked target of each revision the target speaks (noting
// those it does not), its restarts and kills paused for the liveness
// watcher, and the jobs of every revision; it observes each target's
// undisturbed call on the way.
func (o *Options) plan(ctx context.Context, cfg *target.Profile, tgt started, probes []revisionProbe, stdout io.Writer) *plan {
	first := firstSpoken(probes)
	p := &plan{first: first, rtt: first.rtt, managed: tgt.managed,
		live: newLiveness(o.URL, first.version, cfg.RequestHeader(), o.Liveness)}
	var restart, kill func(context.Context) error
	if tgt.managed != nil {
		restart = tgt.managed.Restart
		if k, ok := tgt.managed.(interface{ Kill(context.Context) error }); ok {
			kill = k.Kill
		}
		restart, kill = p.live.around(restart, kill)
	}
	p.restartable = restart != nil
	if !o.NoProxy {
		p.faults = toxics.NewServer()
	}
	at := ", protocol " + first.version
	if o.multi() {
		at = ", protocols " + strings.Join(o.revisions, " and ")
	}
	var targets []*serverchecks.Target
	for _, rp := range probes {
		if rp.pr == nil {
			o.notef(stdout, rp.revision, "the target does not speak protocol %s, so its checks are skipped: %s", rp.revision, rp.why)
			continue
		}
		pr := rp.pr
		if pr.version != o.ProtocolVersion && !o.multi() {
			fmt.Fprintf(stdout, "note: offered protocol %s, the target negotiated %s\n", o.ProtocolVersion, pr.version)
		}
		if pr.sessionless != "" {
			o.notef(stdout, rp.revision, "the checks that need sessions are not applicable: %s", pr.sessionless)
		}
		p.versions = append(p.versions, pr.version)
		p.rtt = max(p.rtt, pr.rtt)
		targets = append(targets, &serverchecks.Target{URL: o.URL, Config: cfg, ProtocolVersion: pr.version, Offered: rp.revision, RestartNeed: tgt.restartNeed,
			Sessionless: pr.sessionless, Replicas: o.ReplicaURLs, FollowRedirects: o.FollowRedirects, Restart: restart, Kill: kill, Faults: p.faults})
	}
	fmt.Fprintf(stdout, "mcp-conform server: checking %s (check set %s%s, %d at a time)\n", o.URL, o.Checks, at, o.Parallel)
	for _, rp := range probes {
		var tc *serverchecks.Target
		if rp.pr != nil {
			tc, targets = targets[0], targets[1:]
			o.observeUndisturbed(ctx, tc, stdout)
		}
		p.jobs = append(p.jobs, o.revisionJobs(rp, tc, cfg)...)
	}
	return p
}

// check runs the plan's jobs in the engine while the liveness watcher
// listens; a target that stopped answering or died makes the run a setup
// error, its verdicts standing in the reports.
func (o *Options) check(ctx context.Context, p *plan, stdout, stderr io.Writer) (*report.Run, error) {
	run := &report.Run{
		Tool: "mcp-conform", Mode: "server", Target: o.URL, CheckSet: string(o.Checks),
		ProtocolVersion: p.first.version, Strict: o.Strict,
	}
	if o.multi() {
		run.Revisions = o.revisions
		run.ProtocolVersion = strings.Join(o.revisions, ", ")
	}
	en := o.engine(o.Strict, marginFor(p.rtt), stdout, stderr)
	if !o.multi() {
		en.revision = p.first.version
	}
	checksCtx, stop := context.WithCancelCause(ctx)
	stopped := make(chan error, 1)
	var died <-chan error // nil: never
	if d, ok := p.managed.(interface{ Died() <-chan error }); ok {
		died = d.Died()
	}
	if g, ok := p.managed.(interface{ Gone() error }); ok {
		en.gone = g.Gone
	}
	en.silence, en.settle = p.live.silence, p.live.settle
	go func() { stopped <- p.live.watch(checksCtx, stop, died) }()
	run, err := o.Common.finish(checksCtx, run, en, p.jobs, o.jobSelector(), stdout)
	stop(nil)
	if gone := <-stopped; gone != nil && err == nil {
		// The verdicts stand in the reports; the run itself could not be
		// made, as with a target unreachable from the start.
		return run, &SetupError{fmt.Errorf("%v; the checks still waiting then are inconclusive", gone)}
	}
	return run, err
}
