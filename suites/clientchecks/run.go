package clientchecks

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/contract"
	"github.com/mcp-conform/mcp-conform/internal/linesplit"
	"github.com/mcp-conform/mcp-conform/internal/report"
	"github.com/mcp-conform/mcp-conform/suites/kit"
)

// promptly is how soon a client must end after the user's cancel.
const promptly = 2 * time.Second

// outLine is one line the client printed, with its arrival time.
type outLine struct {
	contract.Line
	At  time.Time
	Raw string
}

// clientRun is one run of the client under test: a process, or a load
// of a page.
type clientRun struct {
	e       *clientEnv
	n       int
	action  contract.Action
	proc    runner
	started time.Time
	// out and errw split what the run prints into lines (its stdout and
	// stderr; a page's contract lines and console).
	out, errw *linesplit.Writer
	// pmu orders a page's writes to out and errw with its end, after
	// which pageDone drops them.
	pmu      sync.Mutex
	pageDone bool

	mu      sync.Mutex
	lines   []outLine
	changed chan struct{} // closed and replaced at every new line and at exit
	exited  bool
	code    int    // exit status; -1 if ended by a signal
	signal  string // the signal that ended it
	how     string // how it ended, if neither by itself nor by a signal
	ended   time.Time
	done    chan struct{}
	// lastOutput is when the run last printed a line (stdout or stderr).
	lastOutput time.Time
	// lastStderr is the last line it printed on stderr.
	lastStderr string
	// peak is the most client processes that ran at once during the run
	// (Client.liveMu).
	peak int
}

// Bounds on what the harness keeps of a run's output: a client that
// prints a huge line, or prints without end, costs a bounded amount of
// memory, and the log says what was not kept.
const (
	maxLine      = 64 << 10
	maxRunOutput = 4 << 20
)

// splitter splits the run's stream name (stdout, stderr) into lines for f,
// within the bounds above. A line cut to maxLine is logged as such and not
// passed on: it is no contract line.
func (cr *clientRun) splitter(name string, f func(string)) *linesplit.Writer {
	return &linesplit.Writer{MaxLine: maxLine, MaxTotal: maxRunOutput, Line: func(s string, cut int) {
		if cut == 0 {
			f(s)
			return
		}
		cr.mu.Lock()
		cr.lastOutput = time.Now()
		cr.mu.Unlock()
		cr.mark(report.KindRunOutput, "run %d %s: a line of %d bytes, cut to its first %d and not read as a contract line: %s",
			cr.n, name, len(s)+cut, len(s), kit.Clip(s, 300))
	}}
}

// flush passes on the last line of the run's stream name and logs the
// lines past maxRunOutput, which were not kept.
func (cr *clientRun) flush(name string, w *linesplit.Writer) {
	w.Flush()
	if n, b := w.Dropped(); n > 0 {
		cr.mark(report.KindRunOutput, "run %d %s: %d more lines (%d bytes) not kept: the run printed more than %d MiB there",
			cr.n, name, n, b, maxRunOutput>>20)
	}
}

// runner is what one run of the client under test is: a process
// (process.go) or a page in a browser tab (page.go).
type runner interface {
	// kill is the refresh: the run ends at once, with no goodbye.
	kill()
	// killing says what kill does, for the log.
	killing() string
	// reap ends what the run left running after it ended, and says what
	// ("" nothing).
	reap() string
	// interrupt is the user's cancel; it says what it did, for the log.
	interrupt() string
}

// start runs the client under test once, with the run's contract: a
// process (/bin/sh -c 'CMD URL') or, under --browser, a load of the page.
func (e *clientEnv) start(r contract.Run) *clientRun {
	e.Helper()
	return e.begin(r, func(cr *clientRun, r contract.Run) (runner, error) {
		if e.client.Page != nil {
			return e.loadPage(cr, r)
		}
		return startProcess(cr, r)
	})
}

// begin starts run r of the client under test with launch.
func (e *clientEnv) begin(r contract.Run, launch func(*clientRun, contract.Run) (runner, error)) *clientRun {
	e.Helper()
	r.Scenario, r.StateDir, r.URL, r.ProtocolVersion = e.Entry.ID, e.stateDir, e.srv.url, e.client.ProtocolVersion
	e.mu.Lock()
	e.nrun++
	cr := &clientRun{e: e, n: e.nrun, action: r.Action, changed: make(chan struct{}), done: make(chan struct{})}
	e.mu.Unlock()
	cr.out = cr.splitter("stdout", cr.stdout)
	cr.errw = cr.splitter("stderr", func(s string) {
		cr.mu.Lock()
		cr.lastOutput = time.Now()
		if strings.TrimSpace(s) != "" {
			cr.lastStderr = s
		}
		cr.mu.Unlock()
		cr.mark(report.KindRunOutput, "run %d stderr: %s", cr.n, kit.Clip(s, 600))
	})
	what := string(r.Action)
	if r.Tool != "" {
		what += " " + r.Tool + " " + string(r.Arguments)
	}
	if r.BearerToken != "" {
		what += " (with a bearer token)"
	}
	cr.mark(report.KindRunStart, "== run %d: %s", cr.n, what)
	e.setRun(cr.n)
	cr.started = time.Now()
	// Tracked before it starts: its end may come at once.
	e.client.trackLive(cr)
	var err error
	if cr.proc, err = launch(cr, r); err != nil {
		e.client.untrackLive(cr)
		e.Failf("%v", err)
	}
	e.track(cr)
	return cr
}

// exit records the end of the run: its exit status (-1 if it did not
// exit by itself), the signal that ended a process, or how else it ended.
func (cr *clientRun) exit(code int, signal, how string) {
	cr.e.client.untrackLive(cr)
	cr.flush("stdout", cr.out)
	cr.flush("stderr", cr.errw)
	cr.mu.Lock()
	cr.exited, cr.ended = true, time.Now()
	cr.code, cr.signal, cr.how = code, signal, how
	close(cr.changed)
	cr.changed = make(chan struct{})
	cr.mu.Unlock()
	cr.mark(report.KindRunExit, "== run %d exited: %s", cr.n, cr.exitText())
	close(cr.done)
}

// mark adds a line to the log and to the run's lane.
func (cr *clientRun) mark(kind report.Kind, format string, args ...any) {
	cr.e.Log().Mark(fmt.Sprintf("run %d", cr.n), kind, "", fmt.Sprintf(format, args...))
}

func (cr *clientRun) stdout(s string) {
	l, ok := contract.ParseLine(s)
	if !ok {
		cr.mark(report.KindRunOutput, "run %d stdout (ignored): %s", cr.n, kit.Clip(s, 300))
		return
	}
	cr.mark(report.KindRunOutput, "run %d stdout: %s", cr.n, kit.Clip(s, 600))
	cr.mu.Lock()
	cr.lastOutput = time.Now()
	cr.lines = append(cr.lines, outLine{Line: l, At: time.Now(), Raw: s})
	close(cr.changed)
	cr.changed = make(chan struct{})
	cr.mu.Unlock()
}

// snapshot returns the lines so far, whether the run ended, and a channel
// closed at the next change.
func (cr *clientRun) snapshot() ([]outLine, bool, <-chan struct{}) {
	cr.mu.Lock()
	defer cr.mu.Unlock()
	return append([]outLine(nil), cr.lines...), cr.exited, cr.changed
}

func (cr *clientRun) exitText() string {
	if cr.how != "" {
		return cr.how
	}
	if cr.signal != "" {
		return "ended by signal (" + cr.signal + ")"
	}
	return fmt.Sprintf("exit status %d", cr.code)
}

// waitLine waits for a line that matches and returns it. A run that ends
// first fails the check (or skips it, if the client declined).
func (cr *clientRun) waitLine(ctx context.Context, what string, match func(outLine) bool) outLine {
	cr.e.Helper()
	began := time.Now()
	for {
		lines, exited, changed := cr.snapshot()
		for _, l := range lines {
			if match(l) {
				return l
			}
		}
		if exited {
			cr.declined()
			cr.e.Failf("run %d (%s) ended (%s) before printing %s%s", cr.n, cr.action, cr.exitText(), what, cr.clientError())
		}
		waiting := func() string {
			return fmt.Sprintf("run %d (%s): waited %v for %s, in vain", cr.n, cr.action, since(began), what)
		}
		over := time.NewTimer(cr.deadlineIn())
		select {
		case <-changed:
		case <-ctx.Done():
			cr.overdue(waiting(), "the client never printed it", true)
		case <-over.C:
			if cr.deadlineIn() == 0 {
				cr.overdue(waiting(), "the client never printed it", false)
			}
		}
		over.Stop()
	}
}

// wait waits for the run to end, within its budget and the check's
// deadline, and returns its lines.
func (cr *clientRun) wait(ctx context.Context) []outLine {
	cr.e.Helper()
	waiting := func() string {
		return fmt.Sprintf("run %d (%s) still running %v after it started", cr.n, cr.action, since(cr.started))
	}
	for ended := false; !ended; {
		over := time.NewTimer(cr.deadlineIn())
		select {
		case <-cr.done:
			ended = true
		case <-ctx.Done():
			if cr.exitedNow() {
				break
			}
			cr.overdue(waiting(), "the client does not finish", true)
		case <-over.C:
			if cr.deadlineIn() == 0 && !cr.exitedNow() {
				cr.overdue(waiting(), "the client does not finish", false)
			}
		}
		over.Stop()
	}
	cr.e.setRun(0)
	lines, _, _ := cr.snapshot()
	return lines
}

// exitedNow reports whether the run has ended, waiting a moment for the
// end to be recorded.
func (cr *clientRun) exitedNow() bool {
	select {
	case <-cr.done:
		return true
	case <-time.After(kit.PollInterval):
		return false
	}
}

// declined skips the check if the client said it cannot do it.
func (cr *clientRun) declined() {
	cr.e.Helper()
	lines, exited, _ := cr.snapshot()
	for _, l := range lines {
		if l.Type == contract.LineNotApplicable {
			cr.e.Skipf(report.NotOffered, "not applicable: the client declined %s (%s)", cr.action, l.Reason)
		}
	}
	if exited && cr.code == contract.ExitNotApplicable {
		cr.e.Skipf(report.NotOffered, "not applicable: the client declined %s (exit status %d)", cr.action, contract.ExitNotApplicable)
	}
}

// finish waits for the run and expects it to succeed; expect says what
// the client had to do for that ("" for a run the scripted server does
// nothing to), and a failure quotes the client's own error.
func (cr *clientRun) finish(ctx context.Context, expect string) []outLine {
	cr.e.Helper()
	lines := cr.wait(ctx)
	cr.declined()
	if cr.code != 0 {
		if expect == "" {
			expect = succeed[cr.action]
		}
		// A client that cannot complete an undisturbed call fails here
		// for that reason (CLI-CALL-UNDISTURBED).
		cr.e.OnPremise(catalogue.PremiseClientCall, func() {
			cr.e.Failf("run %d (%s) ended with %s: %s%s", cr.n, cr.action, cr.exitText(), expect, cr.clientError())
		})
	}
	return lines
}

// succeed is what a run the scripted server does nothing to must do.
var succeed = map[contract.Action]string{
	contract.ActionCall:       "the call must succeed",
	contract.ActionList:       "listing the tools must succeed",
	contract.ActionResume:     "the resumed call must succeed",
	contract.ActionDisconnect: "the disconnect must succeed",
	contract.ActionShow:       "show must print what is stored and exit 0",
	contract.ActionTaskCall:   "the task must run to its result",
	contract.ActionTaskResume: "the task must be polled to its result",
}

// clientError is the client's own account of its failure, for a message:
// its last error line, else its last stderr line, on one line.
func (cr *clientRun) clientError() string {
	text := ""
	for _, l := range cr.ofType(contract.LineError) {
		text = l.Error
	}
	cr.mu.Lock()
	if text == "" {
		text = cr.lastStderr
	}
	cr.mu.Unlock()
	out := ""
	if text = strings.Join(strings.Fields(text), " "); text != "" {
		out = "\n(the client's error: " + kit.Clip(text, 300) + ")"
	}
	return out + cr.refusal()
}

// refusal says what the scripted server refused of the run on its own,
// not as the scenario's fault: the last error status it answered that no
// script note explains and that is no 404 (the scenarios' expiries and
// restarts answer 404), an Accept without text/event-stream, say, which a
// client may report only as its status; or, first, its requests to
// another path than the endpoint's.
func (cr *clientRun) refusal() string {
	if strays := cr.e.rec.straysOf(cr.n); len(strays) > 0 {
		u, _ := url.Parse(cr.e.srv.url)
		return fmt.Sprintf("\n(the client sent %s: not the MCP endpoint %q, so the server answered 404)", strings.Join(strays, ", "), u.Path)
	}
	xs := cr.e.exchanges(cr.n)
	for i := len(xs) - 1; i >= 0; i-- {
		if x := xs[i]; x.Status >= 400 && x.Status != http.StatusNotFound && x.Note == "" {
			what := x.Method
			if x.RPC.Method != "" {
				what += " " + x.RPC.Method
			}
			return fmt.Sprintf("\n(the server answered its %s with %d: %q)", what, x.Status, kit.Clip(strings.TrimSpace(string(x.Body)), 300))
		}
	}
	return ""
}

// fails waits for the run and expects it to end with a failure it
// reports; why says which failure.
func (cr *clientRun) fails(ctx context.Context, why string) []outLine {
	cr.e.Helper()
	lines := cr.wait(ctx)
	cr.declined()
	if cr.code == 0 {
		cr.e.Failf("run %d (%s) ended with exit status 0: %s must be surfaced as a failure, not swallowed", cr.n, cr.action, why)
	}
	return lines
}

// kill is the refresh: the run ends at once, no goodbye (SIGKILL to a
// process's tree; a page torn down).
func (cr *clientRun) kill() {
	cr.e.Logf("!! F-REFRESH: run %d %s", cr.n, cr.proc.killing())
	cr.proc.kill()
	<-cr.done
	cr.e.setRun(0)
}

// interrupt is the user's cancel: SIGINT to the client process only, not
// its process group, so that what ends the run is the client's own
// handling of it, not the signal killing every process it started; a
// page's oncancel.
func (cr *clientRun) interrupt() time.Time {
	cr.e.Logf("!! the user cancels: %s", cr.proc.interrupt())
	return time.Now()
}

// cancelled reports whether the run reported a cancel: exit status 130,
// an end by SIGINT, or a line saying so.
func (cr *clientRun) cancelled() bool {
	lines, _, _ := cr.snapshot()
	for _, l := range lines {
		if l.Type == contract.LineCancelled || (l.Type == contract.LineError && l.Cancelled) {
			return true
		}
	}
	return cr.code == contract.ExitCancelled || cr.signal == syscall.SIGINT.String()
}

// result returns the run's result line.
func (cr *clientRun) result() outLine {
	cr.e.Helper()
	lines, _, _ := cr.snapshot()
	for _, l := range lines {
		if l.Type == contract.LineResult {
			return l
		}
	}
	cr.e.OnPremise(catalogue.PremiseClientCall, func() { cr.e.Failf("run %d (%s) printed no result line", cr.n, cr.action) })
	return outLine{}
}

// ofType returns the run's lines of a type.
func (cr *clientRun) ofType(t string) []outLine {
	lines, _, _ := cr.snapshot()
	var out []outLine
	for _, l := range lines {
		if l.Type == t {
			out = append(out, l)
		}
	}
	return out
}

// since is how long ago t was, as a failure message says it.
func since(t time.Time) time.Duration { return time.Since(t).Round(10 * time.Millisecond) }
