package serverchecks

import (
	"fmt"
	"time"

	. "github.com/onsi/gomega"
)

// How the checks that call the notifying tool use the undisturbed call:
// their waits are bounded by what it took, and a count or an absence it
// explains is judged against it, not against the declaration alone.

// baseline is the run's undisturbed call, if one was observed.
func (e *env) baseline() *Baseline {
	if e.target == nil || e.target.Baseline == nil || e.target.Baseline.Unobserved != "" {
		return nil
	}
	return e.target.Baseline
}

// callWait bounds a wait for a call's notifications or response by what
// the undisturbed call showed the target needs; the check's deadline
// bounds it without one.
func (e *env) callWait() time.Duration {
	left := time.Minute
	if dl, ok := e.Context().Deadline(); ok {
		left = time.Until(dl)
	}
	if d := e.baseline().bound(e.Config); d > 0 && d < left {
		return d
	}
	return left
}

// waitNote says, in a failed wait's message, what bounded the wait.
func (e *env) waitNote() string {
	b := e.baseline()
	if b == nil {
		return ""
	}
	return fmt.Sprintf(" (twice the %v an undisturbed call took, plus two quiet windows and %v for a busy machine)", b.Took.Round(time.Millisecond), busySlack)
}

// noResponse is the baseline's shortfall when the undisturbed call got
// no response either; "" otherwise.
func (e *env) noResponse() string {
	if b := e.baseline(); b != nil && !b.Answered {
		return b.Shortfall()
	}
	return ""
}

// await waits, at most callWait, until cond holds. A wait in vain fails,
// saying for what; when explained (the undisturbed call's own shortfall)
// may account for it, the check is inconclusive instead, naming it.
func (e *env) await(explained string, cond func() bool, what string, args ...any) {
	e.Helper()
	wait := e.callWait()
	if explained == "" {
		e.Eventually(cond).WithTimeout(wait).Should(BeTrue(), append([]any{what + e.waitNote()}, args...)...)
		return
	}
	if !e.WaitUntil(wait, cond) {
		e.Inconclusivef("waited %v for %s, in vain; but %s, so what the check awaited may be what the tool does not send",
			wait.Round(time.Millisecond), fmt.Sprintf(what, args...), explained)
	}
}

// wantNotes is how many of a call's notifications a check awaits: what
// the undisturbed call delivered when that differs from the declaration,
// the declared count otherwise.
func (e *env) wantNotes() int {
	if b := e.baseline(); b.Shortfall() != "" {
		return b.Delivered
	}
	return e.Config.Tools.Notifying.Notifications
}

// explainedCount judges a count of a call's notifications, each once and
// in order, that is not the declared one, when the undisturbed call fell
// short too. As many as that call delivered (or more, up to the
// declaration) passes, saying so: the check saw its behaviour with what
// the tool sends. Fewer cannot be told from the tool's own loss, and the
// check is inconclusive, naming the shortfall. It reports false when no
// shortfall was observed, for the caller to fail.
func (e *env) explainedCount(total int, detail string) bool {
	b := e.baseline()
	short := b.Shortfall()
	if short == "" {
		return false
	}
	if total >= b.Delivered && total <= max(b.Delivered, b.Declared) {
		e.Logf("%d of the call's notifications, each once and in order: not the %d declared, but %s", total, b.Declared, short)
		return true
	}
	e.Inconclusivef("%s, so this call's %d cannot be judged against the declaration: a loss the tool has with no fault cannot be told from one the fault caused%s",
		short, total, detail)
	return true
}

// distinctNotes counts the call's notifications on streams, each once
// whichever streams carried it (two resumes from one id replay the same).
func (e *env) distinctNotes(k *call, streams ...*collector) int {
	seen := map[string]bool{}
	for _, c := range streams {
		for _, n := range e.notes(c.Messages(), k) {
			seen[n] = true
		}
	}
	return len(seen)
}

// expectRedirected expects some of the call's notifications on get, the
// standalone stream held after the call's stream was cut; why says what
// is wrong when none came. When the undisturbed call fell short too and
// the streams lack some of the declared notifications, the missing ones
// may be ones the tool never sends: the check is inconclusive, naming it.
func (e *env) expectRedirected(k *call, get *collector, streams []*collector, why func() string) {
	e.Helper()
	if len(e.notes(get.Messages(), k)) > 0 {
		return
	}
	b := e.baseline()
	if short := b.Shortfall(); short != "" && e.distinctNotes(k, streams...) < e.Config.Tools.Notifying.Notifications &&
		(b.erred() || e.endedEarly(k, streams...) == "") {
		e.Inconclusivef("%s; but %s, so the notifications missing from it may be ones the tool never sends", why(), short)
	}
	e.Fail(why())
}

// awaitNotes waits, at most callWait, until streams carry wantNotes of
// the call's notifications, failing in vain with what, which notification
// came where. When the undisturbed call fell short too, a wait in vain is
// no verdict: expectDelivered judges the count against that call.
func (e *env) awaitNotes(k *call, what string, streams ...*collector) {
	e.Helper()
	want := e.wantNotes()
	count := func() int { return e.countNotes(k, streams...) }
	if e.baseline().Shortfall() != "" {
		e.WaitUntil(e.callWait(), func() bool { return count() >= want })
		return
	}
	e.Eventually(count).WithTimeout(e.callWait()).Should(BeNumerically(">=", want),
		func() string { return what + e.waitNote() + "; " + e.byStream(k, streams...) })
}
