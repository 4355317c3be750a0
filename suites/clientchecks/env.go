package clientchecks

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/contract"
	"github.com/mcp-conform/mcp-conform/internal/report"
	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/suites/kit"
	"github.com/mcp-conform/mcp-conform/suites/serverchecks"
	"github.com/mcp-conform/mcp-conform/toxics/browser"
)

// Client is what the client checks know about the run; the harness
// fills it in before it asks for the checks.
type Client struct {
	// Command starts the client under test; the server URL is appended.
	Command string
	// StateRoot holds one state directory per check.
	StateRoot string
	// ProtocolVersion is the revision the client is told to speak
	// (contract.EnvProtocolVersion); "" is 2025-11-25. Under
	// wire.SessionlessProtocolVersion only the checks whose catalogue
	// Revisions have it run.
	ProtocolVersion string
	// Parallel is how many checks run at once (--parallel): how many client
	// processes the checks' deadlines expect to share the cores.
	Parallel int
	// Page, when set, is the client under test instead of Command: a web
	// page, each run a load of it in a browser tab.
	Page *Page
	// Measured is the client's undisturbed run (Measure), from which every
	// run's budget is derived.
	Measured Measurement

	liveMu sync.Mutex
	live   map[*clientRun]bool // the client processes running now
}

// modern reports whether the client speaks the revision without sessions:
// told to, or chosen by itself (as its measured run showed).
func (e *clientEnv) modern() bool { return e.client.modern() }

func (cl *Client) modern() bool {
	return cl.ProtocolVersion == wire.SessionlessProtocolVersion || cl.Measured.Revision == wire.SessionlessProtocolVersion
}

// spokeModern says how run n spoke the revision without sessions (asked
// server/discover, or sent its MCP-Protocol-Version), or "" if it did not.
func (e *clientEnv) spokeModern(n int) string {
	for _, x := range e.exchanges(n) {
		switch {
		case x.RPC.Method == "server/discover":
			return fmt.Sprintf("#%d asked server/discover", x.N)
		case x.ProtocolVersion == wire.SessionlessProtocolVersion:
			return fmt.Sprintf("#%d sent MCP-Protocol-Version: %s", x.N, x.ProtocolVersion)
		}
	}
	return ""
}

// clientEnv is one client check: its kit.T, a scripted server of its own,
// a state directory for the client under test, and the runs of that client.
type clientEnv struct {
	*kit.T
	client   *Client
	rec      *clientRecorder
	srv      *scriptedServer
	stateDir string
	running  atomic.Int64
	// waits is what the scenario makes a run wait, beyond its allowance.
	waits time.Duration

	mu   sync.Mutex
	nrun int
	runs []*clientRun

	// A page's runs (Client.Page): the check's browser profile, its
	// storage that of every run, and its tabs.
	pmu     sync.Mutex
	profile *browser.Profile
	tabs    []*pageTab
}

// def is a client check before it is bound to a client command.
type def struct {
	// The check's catalogue entry (Side and Section are set here).
	catalogue.Entry
	// opts configure the check's scripted server.
	opts serverOpts
	// runs is how many times the check starts the client under test, and
	// waits how long the scripted server makes those runs wait (tool steps,
	// retry fields, task polls) when the client behaves. The check's need
	// (kit.Check.Need) and each run's budget are derived from them and the
	// client's measured run (budget.go).
	runs  int
	waits time.Duration
	body  func(ctx context.Context, e *clientEnv)
}

// Checks returns the client checks, in catalogue order, bound to cl.
func Checks(cl *Client) []kit.Check {
	defs := allDefs()
	out := make([]kit.Check, len(defs))
	for i, d := range defs {
		ent := d.Entry
		// A check about 2026-07-28 alone does not grade a client that
		// does not speak it (told to or by itself); one of the revisions
		// with sessions alone skips a client that speaks 2026-07-28.
		only, modernToo := !ent.Revisions.Has(wire.Revision20251125), ent.Revisions.Has(wire.Revision20260728)
		out[i] = kit.Check{Entry: ent, Need: d.need(cl), Run: func(t *kit.T) {
			switch {
			case only && !cl.modern():
				t.Skip(report.OtherRevision, serverchecks.OnlySessionlessRevision)
			case modernToo:
			case cl.ProtocolVersion == wire.SessionlessProtocolVersion:
				t.Skip(report.NoSessions, "not applicable: the check needs sessions, which "+wire.SessionlessProtocolVersion+" does not have")
			case cl.Measured.Revision != "":
				t.Skipf(report.NoSessions, "not applicable: the check needs sessions, and the client speaks %s by itself (in its measured run it asked server/discover or sent that MCP-Protocol-Version), which has none", cl.Measured.Revision)
			}
			e := cl.newEnv(t, d)
			if !modernToo && !e.modern() {
				defer e.respectRevision()
			}
			d.body(t.Context(), e)
		}}
	}
	return out
}

// allDefs returns every client check's def, in catalogue order: the
// order of the kinds here, then of the checks in each.
func allDefs() []def {
	var defs []def
	for _, kind := range [][]def{undisturbedChecks(), sessionChecks(), streamChecks(), expiryChecks(), taskChecks(), revisionChecks(), listenChecks(), statusChecks(), oauthChecks(), browserChecks()} {
		for _, d := range kind {
			d.Entry = clientEntry(d.Entry)
			defs = append(defs, d)
		}
	}
	return defs
}

// clientEntry is e on the client side, in the client section (every
// client check's).
func clientEntry(e catalogue.Entry) catalogue.Entry {
	e.Side, e.Section = catalogue.Client, "client"
	return e
}

// Entries returns the client checks' catalogue entries, in catalogue order.
func Entries() []catalogue.Entry {
	defs := allDefs()
	out := make([]catalogue.Entry, len(defs))
	for i, d := range defs {
		out[i] = d.Entry
	}
	return out
}

// lookup finds a client check's entry by ID.
func lookup(id string) (catalogue.Entry, bool) { return catalogue.Find(entries, id) }

// entries are the client checks' entries, for lookup.
var entries = Entries()

// respectRevision, deferred by a check that needs sessions, turns its end
// into not applicable when a run of the client spoke the revision without
// sessions by itself: the check's premise is not there, whatever it saw.
func (e *clientEnv) respectRevision() {
	v := recover()
	e.mu.Lock()
	n := e.nrun
	e.mu.Unlock()
	for i := 1; i <= n; i++ {
		if how := e.spokeModern(i); how != "" {
			e.Skipf(report.NoSessions, "not applicable: the check needs sessions, and run %d of the client spoke %s by itself (%s), which has none", i, wire.SessionlessProtocolVersion, how)
		}
	}
	if v != nil {
		panic(v)
	}
}

func (cl *Client) newEnv(t *kit.T, d def) *clientEnv {
	t.Helper()
	opts := d.opts
	e := &clientEnv{T: t, client: cl, waits: d.waits}
	e.rec = &clientRecorder{log: t.Log(), run: func() int { return int(e.running.Load()) }}
	dir, err := os.MkdirTemp(cl.StateRoot, strings.ToLower(t.Entry.ID)+"-")
	if err != nil {
		e.Failf("state directory: %v", err)
	}
	e.stateDir = dir
	srv, err := startScripted(opts, e.rec, cl.pageOrigin())
	if err != nil {
		os.RemoveAll(dir)
		e.Failf("scripted server: %v", err)
	}
	e.srv = srv
	e.Logf("scripted server at %s (expired answer %s, recovery hint %v, bearer token %v); state directory %s",
		srv.url, srv.cfg.ExpiredResponse, opts.hint, opts.token != "", filepath.Base(dir))
	e.Cleanup(func(context.Context) {
		e.stopRuns()
		e.closePages()
		srv.close()
		os.RemoveAll(dir)
	})
	return e
}

func (e *clientEnv) setRun(n int) { e.running.Store(int64(n)) }

func (e *clientEnv) track(cr *clientRun) {
	e.mu.Lock()
	e.runs = append(e.runs, cr)
	e.mu.Unlock()
}

// stopRuns kills every run still going and waits for it, and kills what
// the runs that ended left running (in their process group, or escaped
// from it): nothing a client starts outlives its check.
func (e *clientEnv) stopRuns() {
	e.mu.Lock()
	runs := append([]*clientRun(nil), e.runs...)
	e.mu.Unlock()
	for _, cr := range runs {
		select {
		case <-cr.done:
			if left := cr.proc.reap(); left != "" {
				e.Logf("run %d left %s", cr.n, left)
			}
		default:
			cr.kill()
		}
	}
}

// call is a run that calls tool with args; none (nil) are {}, as the
// contract wants an object.
func callRun(tool string, args any) contract.Run {
	data, err := json.Marshal(args)
	if err != nil {
		panic(err)
	}
	if string(data) == "null" {
		data = []byte(`{}`)
	}
	return contract.Run{Action: contract.ActionCall, Tool: tool, Arguments: data}
}

// action is a run of an action without a tool.
func actionRun(a contract.Action) contract.Run { return contract.Run{Action: a} }

// run starts a run and waits for it to succeed; expect, if given, says
// what the client must do for that (see clientRun.finish).
func (e *clientEnv) run(ctx context.Context, r contract.Run, expect ...string) *clientRun {
	e.Helper()
	cr := e.start(r)
	cr.finish(ctx, strings.Join(expect, "; "))
	return cr
}

// expectCount fails unless xs holds want requests; the message lists them.
func (e *clientEnv) expectCount(xs []exchange, want int, format string, args ...any) {
	e.Helper()
	if len(xs) == want {
		return
	}
	var seen []string
	for _, x := range xs {
		seen = append(seen, fmt.Sprintf("#%d %s %s", x.N, x.Method, x.RPC.Method))
	}
	e.Failf("%s: %d, want %d %v", fmt.Sprintf(format, args...), len(xs), want, seen)
}

// exchanges returns the requests of run n (every run with n 0).
func (e *clientEnv) exchanges(n int) []exchange {
	var out []exchange
	for _, x := range e.rec.all() {
		if n == 0 || x.Run == n {
			out = append(out, x)
		}
	}
	return out
}

// sessionOf returns the session id of run n's first tools/call.
func (e *clientEnv) sessionOf(n int) string {
	e.Helper()
	for _, x := range e.exchanges(n) {
		if x.RPC.Method == "tools/call" {
			return x.SessionID
		}
	}
	e.Failf("run %d sent no tools/call", n)
	return ""
}

// toolCalls returns run n's tools/call requests.
func (e *clientEnv) toolCalls(n int) []exchange {
	var out []exchange
	for _, x := range e.exchanges(n) {
		if x.RPC.Method == "tools/call" {
			out = append(out, x)
		}
	}
	return out
}

// undisturbed reports whether the scripted server has done nothing to run
// n so far: no answer of it changed (a note) and no stream of it cut.
func (e *clientEnv) undisturbed(n int) bool {
	for _, x := range e.exchanges(n) {
		if x.Note != "" || !x.CutAt.IsZero() {
			return false
		}
	}
	return true
}

// waitForDuring waits until the server has seen a request that matches
// while run cr is going; the run ending first fails the check.
func (e *clientEnv) waitForDuring(ctx context.Context, cr *clientRun, what string, match func(exchange) bool) exchange {
	e.Helper()
	tick := time.NewTicker(kit.PollInterval)
	defer tick.Stop()
	began := time.Now()
	for {
		for _, x := range e.rec.all() {
			if match(x) {
				return x
			}
		}
		select {
		case <-cr.done:
			cr.declined()
			fail := func() {
				e.Failf("run %d (%s) ended (%s) before the server saw %s%s", cr.n, cr.action, cr.exitText(), what, cr.clientError())
			}
			if e.undisturbed(cr.n) {
				// Nothing was done to the run yet: what stopped it is what
				// stops an undisturbed call (CLI-CALL-UNDISTURBED).
				e.OnPremise(catalogue.PremiseClientCall, fail)
			}
			fail()
		case <-ctx.Done():
			cr.overdue(fmt.Sprintf("waited %v for the server to see %s during run %d, in vain", since(began), what, cr.n), "the client never sent it", true)
		case <-tick.C:
			if cr.deadlineIn() == 0 {
				cr.overdue(fmt.Sprintf("waited %v for the server to see %s during run %d, in vain", since(began), what, cr.n), "the client never sent it", false)
			}
		}
	}
}

// createdIn reports the session ids that initialize requests without a
// session id got in run n, in order.
func (e *clientEnv) createdIn(n int) []string {
	var out []string
	for _, x := range e.exchanges(n) {
		if x.isFreshInit() && x.RespSessionID != "" {
			out = append(out, x.RespSessionID)
		}
	}
	return out
}

// after returns the exchanges that arrived after t.
func after(xs []exchange, t time.Time) []exchange {
	var out []exchange
	for _, x := range xs {
		if x.At.After(t) {
			out = append(out, x)
		}
	}
	return out
}

// pageOrigin is the origin of the page under test, "" for a command.
func (cl *Client) pageOrigin() string {
	if cl.Page == nil {
		return ""
	}
	return cl.Page.Origin()
}
