package kit

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/onsi/gomega"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/internal/report"
)

// T is one running check's handle: its context, Gomega assertions that
// fail only this check, skip, cleanup and its exchange log. Its methods
// that end the check (Fail, Skip, a failed assertion) must be called from
// the check's own goroutine, as with testing.T.FailNow.
type T struct {
	gomega.Gomega
	Entry catalogue.Entry

	ctx context.Context
	log *Log

	// premise marks the step running now (OnPremise); only the check's
	// own goroutine reads or writes it.
	premise catalogue.Premise
	// ledger is the run's, once the check joined it (Ledger.Join).
	ledger *Ledger

	mu        sync.Mutex
	cleanups  []func(context.Context)
	helpers   map[string]bool
	diagnoses []func(context.Context) string
}

// ended is the panic value that ends a check's body early.
type ended struct {
	state    State
	message  string
	location string
	cause    report.Cause // a skip's
	premise  catalogue.Premise
}

func newT(ctx context.Context, e catalogue.Entry) *T {
	t := &T{Entry: e, ctx: ctx, log: NewLog(), helpers: map[string]bool{}}
	t.Gomega = gomega.NewGomega(func(message string, _ ...int) {
		panic(ended{state: Failed, message: awaited(plain(message)), location: t.location(), premise: t.premise})
	})
	return t
}

// gaveUp matches the first line of a Gomega wait that ended: a timeout, or
// the check's context ending first.
var gaveUp = regexp.MustCompile(`^(?:Timed out|Context was cancelled(?: \(cause: [^)]*\))?) after ([0-9.]+\w+)\.\n([^\n]+)`)

// awaited puts what a failed wait was waiting for, and for how long, on
// the message's first line: "waited 9.5s for <what>, in vain". The first
// line is what the progress line shows.
func awaited(message string) string {
	m := gaveUp.FindStringSubmatchIndex(message)
	if m == nil {
		return message
	}
	took, what := message[m[2]:m[3]], message[m[4]:m[5]]
	return fmt.Sprintf("waited %s for %s, in vain", took, what) + message[m[1]:]
}

// Context ends at the check's deadline or when the run is interrupted.
func (t *T) Context() context.Context { return t.ctx }

// Log is the check's exchange log.
func (t *T) Log() *Log { return t.log }

// Logf adds a line to the exchange log.
func (t *T) Logf(format string, args ...any) { t.log.Printf(format, args...) }

// Fail ends the check as failed.
func (t *T) Fail(message string) {
	panic(ended{state: Failed, message: message, location: t.location(), premise: t.premise})
}

// OnPremise runs step, a step of the check that stands on premise p: a
// failure inside it is marked with p, so that the run reports the check
// blocked by p's root when that failed too (catalogue.Premise).
func (t *T) OnPremise(p catalogue.Premise, step func()) {
	outer := t.premise
	t.premise = p
	defer func() { t.premise = outer }()
	step()
}

// Failf is Fail with a format.
func (t *T) Failf(format string, args ...any) { t.Fail(fmt.Sprintf(format, args...)) }

// Skip ends the check as skipped for cause; reason says why, for a reader.
func (t *T) Skip(cause report.Cause, reason string) {
	panic(ended{state: Skipped, message: reason, cause: cause})
}

// Skipf is Skip with a format.
func (t *T) Skipf(cause report.Cause, format string, args ...any) {
	t.Skip(cause, fmt.Sprintf(format, args...))
}

// Inconclusive ends the check as inconclusive: the harness could not
// observe the behaviour. reason says what it could not observe and why
// (its own setup timed out, its own delay stretched the premise, the
// target chose a legitimate value beyond the check's budget).
func (t *T) Inconclusive(reason string) { panic(ended{state: Inconclusive, message: reason}) }

// Inconclusivef is Inconclusive with a format.
func (t *T) Inconclusivef(format string, args ...any) { t.Inconclusive(fmt.Sprintf(format, args...)) }

// Cleanup registers f to run when the check ends, pass or fail, with a
// context of its own (the check's may be over).
func (t *T) Cleanup(f func(ctx context.Context)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.cleanups = append(t.cleanups, f)
}

// Diagnose registers f to run when the check fails or skips, before its
// cleanups: a cause it finds (say, "the session expired during the
// check") is put ahead of the message, so the verdict names the real
// cause. A skip with a cause becomes a failure: what it took for the
// target not offering something followed from that cause, and the cause
// is a finding. f returns "" when it finds nothing.
func (t *T) Diagnose(f func(ctx context.Context) string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.diagnoses = append(t.diagnoses, f)
}

// diagnose puts the causes the diagnoses find ahead of a failure's or a
// skip's message; a skip with a cause fails.
func (t *T) diagnose(r Result) Result {
	t.mu.Lock()
	ds := t.diagnoses
	t.mu.Unlock()
	for _, d := range ds {
		ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
		cause := d(ctx)
		cancel()
		if cause == "" {
			continue
		}
		if r.State == Skipped {
			r.State, r.Cause, r.Message = Failed, "", "the check would have been skipped: "+r.Message
		}
		r.Message = cause + "\n" + r.Message
	}
	return r
}

// Helper marks the calling function as a helper: a failure inside it is
// reported at its caller, as with testing.T.Helper.
func (t *T) Helper() {
	pc, _, _, ok := runtime.Caller(1)
	if !ok {
		return
	}
	name := runtime.FuncForPC(pc).Name()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.helpers[name] = true
}

// cleanupTimeout bounds each cleanup (a DELETE of the check's session, a
// proxy's removal).
const cleanupTimeout = 5 * time.Second

// run runs body and the cleanups, and turns how body ended into a Result.
func (t *T) run(body func(*T)) (r Result) {
	defer func() {
		if r.State == Failed || r.State == Skipped {
			r = t.diagnose(r)
		}
		t.runCleanups()
		r = t.interfered(r)
		r.Exchange = t.log.String()
		r.Timeline = t.log.Events()
	}()
	defer func() {
		switch v := recover().(type) {
		case nil:
			if err := t.ctx.Err(); err != nil && r.State == Passed {
				// A body that returned only because its context ended did not pass.
				r = Result{State: Failed, Message: endedEarly(t.ctx)}
			}
		case ended:
			r = Result{State: v.state, Message: v.message, Location: v.location, Cause: v.cause, Premise: v.premise}
		default:
			r = Result{State: Failed, Message: fmt.Sprintf("panic: %v\n%s", v, debug.Stack()), Location: t.location()}
		}
		if u := unobservable(t.ctx); u != nil && (r.State == Failed || r.State == Inconclusive) {
			// Whatever failed, or could not be observed, followed from a
			// target that answers nothing: that is the one message.
			r = Result{State: Inconclusive, Message: u.Error()}
		}
	}()
	body(t)
	return Result{State: Passed}
}

// interfered ends a check whose calls crossed another running check's
// (Ledger) as skipped for report.Interfered, saying how it would have
// ended: what it saw depended on the checks beside it.
func (t *T) interfered(r Result) Result {
	if t.ledger == nil {
		return r
	}
	why := t.ledger.leave(t.log)
	if why == "" || (r.State != Passed && r.State != Failed && r.State != Skipped) {
		return r
	}
	first, _, _ := strings.Cut(r.Message, "\n")
	saw := map[State]string{Passed: "passed", Failed: "failed: " + first, Skipped: "skipped: " + first}[r.State]
	return Result{State: Skipped, Cause: report.Interfered, Took: r.Took,
		Message: why + ": what it saw depended on the checks beside it (with them it " + saw + ")"}
}

// endedEarly says why a check's context ended.
func endedEarly(ctx context.Context) string {
	cause := context.Cause(ctx)
	if u := unobservable(ctx); u != nil {
		return u.Error()
	}
	if cause == context.DeadlineExceeded {
		return "the check's deadline passed before it could finish"
	}
	return "interrupted: " + cause.Error()
}

func (t *T) runCleanups() {
	t.mu.Lock()
	cs := t.cleanups
	t.cleanups = nil
	t.mu.Unlock()
	u := unobservable(t.ctx)
	for i := len(cs) - 1; i >= 0; i-- {
		func() {
			ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
			defer cancel()
			if u != nil {
				// Waiting on a target that answers nothing would only
				// hold up the run: local cleanups still run.
				var stop context.CancelCauseFunc
				ctx, stop = context.WithCancelCause(ctx)
				stop(u)
			}
			defer func() { _ = recover() }() // a failing cleanup does not change the verdict
			cs[i](ctx)
		}()
	}
}

// location is the first caller outside Gomega, this package, the runtime
// and the functions marked with Helper.
func (t *T) location() string {
	pcs := make([]uintptr, 64)
	n := runtime.Callers(2, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	t.mu.Lock()
	defer t.mu.Unlock()
	for {
		f, more := frames.Next()
		if !skipFrame(f.Function) && !t.helpers[f.Function] {
			return filepath.Base(filepath.Dir(f.File)) + "/" + filepath.Base(f.File) + fmt.Sprintf(":%d", f.Line)
		}
		if !more {
			return ""
		}
	}
}

func skipFrame(fn string) bool {
	for _, p := range []string{"runtime.", "github.com/onsi/gomega", "github.com/mcp-conform/mcp-conform/suites/kit.", "reflect."} {
		if strings.HasPrefix(fn, p) {
			return true
		}
	}
	return false
}
