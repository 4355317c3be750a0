package catalogue

// Premise is something a check stands on that another check grades: its
// root. A check's step that stands on a premise is marked with it (kit's
// T.OnPremise); when that step fails and the root failed in the same run,
// the check is reported blocked by the root, naming the premise, not as a
// defect of its own. A step that fails while the root passed is the
// check's own failure. A premise absent by a legal choice (GET answered
// 405) is not a failure at all: the step skips, saying so.
type Premise string

// The premises, a closed list.
const (
	// PremiseHandshake: the initialize handshake completes, its
	// notifications/initialized accepted (a 2xx; JSONRPC-NOTIFY-202 grades
	// whether that is the 202 the specification asks for).
	PremiseHandshake Premise = "handshake"
	// PremiseGETStream: the standalone GET stream is offered (200
	// text/event-stream), or refused with 405, which the checks skip on.
	PremiseGETStream Premise = "get-stream"
	// PremiseProgress: a call's progress values increase with each
	// notification, none sent twice.
	PremiseProgress Premise = "progress-increases"
	// PremiseTaskResult: a task's result is had as the tasks revision
	// says: tasks/result blocks until the task ends and carries the
	// related-task _meta (2025-11-25), tasks/get carries it inline once the
	// task completed (the tasks extension).
	PremiseTaskResult Premise = "task-result"
	// PremiseEnvelope: a 404 for a gone session carries the -32003
	// session-expired envelope of the resilience profile.
	PremiseEnvelope Premise = "envelope"
	// PremiseSurvivesCut: a call whose POST stream is cut keeps running,
	// its result reachable by resumption.
	PremiseSurvivesCut Premise = "survives-cut"
	// PremiseClientCall: the client under test completes a call that no
	// fault disturbs, exiting 0 with its result printed (client mode).
	PremiseClientCall Premise = "client-call"
)

// Own marks a step whose failure is the check's own whatever its premises
// did: no failed root explains it (another principal let into a session
// is a defect of its own, even where unknown sessions get 400, not 404).
const Own Premise = "own"

// premises are the premises' roots and what each says.
var premises = map[Premise]struct{ root, says string }{
	PremiseHandshake:   {"JSONRPC-NOTIFY-202", "the initialize handshake completes: notifications/initialized is accepted, not answered with an error status"},
	PremiseGETStream:   {"GET-SSE-OR-405", "a GET with Accept: text/event-stream opens the standalone stream (200) or is refused with 405"},
	PremiseProgress:    {"PROGRESS-INCREASES", "a call's progress value increases with each notification, none sent twice"},
	PremiseTaskResult:  {"TASK-RESULT-REPEATABLE", "a task's result is had as the revision says: tasks/result blocks until the task ends and carries the related-task _meta"},
	PremiseEnvelope:    {"ENVELOPE-404", "a 404 for a gone session carries the -32003 session-expired envelope"},
	PremiseSurvivesCut: {"DISCONNECT-NOT-CANCEL", "a call whose POST stream is cut keeps running, its result reachable by resumption"},
	PremiseClientCall:  {"CLI-CALL-UNDISTURBED", "the client completes a call that no fault disturbs: it exits 0 and prints the result"},
}

// Premises lists every premise.
func Premises() []Premise {
	return []Premise{PremiseHandshake, PremiseGETStream, PremiseProgress, PremiseTaskResult, PremiseEnvelope, PremiseSurvivesCut, PremiseClientCall}
}

// Root is the check that grades p.
func (p Premise) Root() string { return premises[p].root }

// Says is what p takes for granted, for messages.
func (p Premise) Says() string { return premises[p].says }
