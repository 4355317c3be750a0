package clientchecks

import (
	"fmt"
	"runtime"
	"time"
)

// A run's budget comes from the client, not a constant: before the checks
// the harness times one undisturbed run of it (Client.Measure), and every
// run may take runFactor times that (at least minRun), stretched by how
// many client processes share the cores, plus the scenario's own waits.
const (
	runFactor = 4
	minRun    = 4 * time.Second
	// fallbackRun is a run's allowance when the undisturbed run could not
	// be timed (it never ended).
	fallbackRun = 2 * time.Second
	// slowRun: an undisturbed run slower than this says the machine (or
	// the client) is too slow for its timings to be judged; a late run is
	// then inconclusive.
	slowRun = 10 * time.Second
	// busyRequests is how many requests a late run may have sent, beyond
	// busyFactor times the undisturbed run's, and still count as a slow
	// client rather than one caught in a loop.
	busyRequests = 20
	busyFactor   = 4
)

// cores is what the client processes share.
var cores = runtime.NumCPU()

// allowance is what one run may take, besides the scenario's waits, on
// an unloaded machine.
func (cl *Client) allowance() time.Duration {
	if cl.Measured.Took <= 0 {
		return fallbackRun
	}
	return max(minRun, runFactor*cl.Measured.Took)
}

// load is how much slower than alone a run is expected to go with n
// client processes on the cores (1 when they fit).
func load(n int) float64 { return max(1, float64(n)/float64(cores)) }

// scale stretches d by a load factor.
func scale(d time.Duration, f float64) time.Duration { return time.Duration(float64(d) * f) }

// need is how long the check takes against a client that behaves: its
// runs' allowances at the load --parallel puts on the cores, and its waits.
func (d def) need(cl *Client) time.Duration {
	return scale(time.Duration(d.runs)*cl.allowance(), load(max(1, cl.Parallel))) + d.waits
}

// budget is how long run cr may take: the allowance, stretched by the most
// client processes that ran beside it, plus the scenario's waits.
func (cr *clientRun) budget() time.Duration {
	return scale(cr.e.client.allowance(), load(cr.peakLoad())) + cr.e.waits
}

// budgetText says how the budget was derived.
func (cr *clientRun) budgetText() string {
	cl := cr.e.client
	from := "no undisturbed run could be timed, so " + fallbackRun.String() + " is assumed"
	if cl.Measured.Took > 0 {
		from = fmt.Sprintf("%d × the client's undisturbed run of %v, at least %v", runFactor, cl.Measured.Took.Round(time.Millisecond), minRun)
	}
	text := fmt.Sprintf("the run's budget: %v a run (%s)", cl.allowance().Round(10*time.Millisecond), from)
	if n := cr.peakLoad(); load(n) > 1 {
		text += fmt.Sprintf(" × %.1f for %d client processes on %d cores", load(n), n, cores)
	}
	return text + fmt.Sprintf(" + the scenario's waits of %v = %v", cr.e.waits, cr.budget().Round(10*time.Millisecond))
}

// trackLive counts cr among the client processes running now and raises
// the peak of every one running.
func (cl *Client) trackLive(cr *clientRun) {
	cl.liveMu.Lock()
	defer cl.liveMu.Unlock()
	if cl.live == nil {
		cl.live = map[*clientRun]bool{}
	}
	cl.live[cr] = true
	for r := range cl.live {
		r.peak = max(r.peak, len(cl.live))
	}
}

// untrackLive removes cr once it ended.
func (cl *Client) untrackLive(cr *clientRun) {
	cl.liveMu.Lock()
	defer cl.liveMu.Unlock()
	delete(cl.live, cr)
}

// peakLoad is the most client processes that ran at once while cr ran.
func (cr *clientRun) peakLoad() int {
	cl := cr.e.client
	cl.liveMu.Lock()
	defer cl.liveMu.Unlock()
	return max(1, cr.peak)
}

// overdue ends the check when run cr is past its budget (or the check's
// deadline, atDeadline) while the harness still waits for it: waiting
// says what for ("still running 9s after it started", "waited 9s for a
// task line, in vain"), missing what the client failed to do ("the client
// does not finish", "the client never printed it"). A run the scripted server saw progress lately, and any
// run when the undisturbed one was itself slow, ran late because the
// machine was saturated: inconclusive. One that went quiet, or kept
// sending requests in a loop, fails.
func (cr *clientRun) overdue(waiting, missing string, atDeadline bool) {
	cr.e.Helper()
	past := fmt.Sprintf("past its budget of %v", cr.budget().Round(10*time.Millisecond))
	if atDeadline {
		past = "at the check's deadline"
	}
	head, detail := waiting+", "+past, "\n("+cr.budgetText()+")"
	cl := cr.e.client
	if cl.Measured.Took > slowRun {
		cr.e.Inconclusivef("%s; the client's undisturbed run itself took %v, more than %v: the machine is too slow for the client's timings to be judged%s",
			head, cl.Measured.Took.Round(time.Millisecond), slowRun, detail)
	}
	sign, n := cr.lastSign()
	late := judgeLate(sign, n, time.Since(cr.started), cl.Measured.Requests)
	switch late {
	case lateSilent:
		if why := cr.pageStarving(); why != "" {
			cr.e.Inconclusivef("%s; it sent no request and printed nothing, %s%s", head, why, detail)
		}
		cr.e.Failf("%s; it sent no request and printed nothing: %s%s", head, missing, detail)
	case lateLoops:
		cr.e.Failf("%s; it sent %d requests (the undisturbed run sent %d): %s, it loops%s", head, n, cl.Measured.Requests, missing, detail)
	case lateBusy:
		cr.e.Inconclusivef("%s; the scripted server saw it progress (%d requests, its last sign of life %v ago): the machine was too busy for the client to keep to its budget%s",
			head, n, since(sign), detail)
	default:
		cr.e.Failf("%s; its last request or line came %v ago, and nothing since: %s%s", head, since(sign), missing, detail)
	}
}

// lateness is what a run past its budget looks like to the scripted
// server.
type lateness int

const (
	lateSilent lateness = iota // no request, no line: it never started
	lateLoops                  // far more requests than the undisturbed run
	lateBusy                   // a sign of life in the last quarter: it works, slowly
	lateQuiet                  // nothing for longer: it stopped
)

// judgeLate classifies a run elapsed into its life whose last sign came at
// sign (zero: none) after n requests; the undisturbed run sent measured.
func judgeLate(sign time.Time, n int, elapsed time.Duration, measured int) lateness {
	switch {
	case sign.IsZero():
		return lateSilent
	case n > max(busyRequests, busyFactor*measured):
		return lateLoops
	case time.Since(sign) <= elapsed/4:
		return lateBusy
	}
	return lateQuiet
}

// lastSign is when run cr last sent a request or printed a line (zero:
// never), and how many requests it sent.
func (cr *clientRun) lastSign() (time.Time, int) {
	var last time.Time
	n := 0
	for _, x := range cr.e.exchanges(cr.n) {
		n++
		if x.At.After(last) {
			last = x.At
		}
	}
	cr.mu.Lock()
	if cr.lastOutput.After(last) {
		last = cr.lastOutput
	}
	cr.mu.Unlock()
	return last, n
}

// deadlineIn is how long until run cr's budget is spent (never below 0).
func (cr *clientRun) deadlineIn() time.Duration {
	return max(0, time.Until(cr.started.Add(cr.budget())))
}

// slowed says why a run cannot be held to a timing bound the check
// judges (an answer within 1 s, a cancel within 2 s), or "": the machine
// was loaded with more client processes than cores, the run started much
// slower than the undisturbed one, or that one was itself slow.
func (cr *clientRun) slowed() string {
	cl := cr.e.client
	if cl.Measured.Took > slowRun {
		return fmt.Sprintf("the client's undisturbed run took %v", cl.Measured.Took.Round(time.Millisecond))
	}
	if n := cr.peakLoad(); n > cores {
		return fmt.Sprintf("%d client processes ran at once on %d cores", n, cores)
	}
	if first := cr.firstRequest(); cl.Measured.FirstRequest > 0 && first > 2*cl.Measured.FirstRequest && first-cl.Measured.FirstRequest > 250*time.Millisecond {
		return fmt.Sprintf("the run's first request came %v after its start, against %v in the undisturbed run",
			first.Round(time.Millisecond), cl.Measured.FirstRequest.Round(time.Millisecond))
	}
	return ""
}

// firstRequest is how long after its start run cr sent its first request
// (0: none yet).
func (cr *clientRun) firstRequest() time.Duration {
	for _, x := range cr.e.exchanges(cr.n) {
		return x.At.Sub(cr.started)
	}
	return 0
}

// onTime expects took to be under bound, a timing the check judges; a run
// slowed by the machine (slowed) is inconclusive rather than failed.
func (cr *clientRun) onTime(took, bound time.Duration, format string, args ...any) {
	cr.e.Helper()
	if took < bound {
		return
	}
	msg := fmt.Sprintf(format, args...)
	if why := cr.slowed(); why != "" {
		cr.e.Inconclusivef("%s; but %s, so the delay may be the machine's", msg, why)
	}
	cr.e.Fail(msg)
}
