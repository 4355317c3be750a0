package report

// Cause is why a check ended without judging the behaviour it is about:
// why it was skipped, or why it was inconclusive. Reports carry it beside
// the message, so that tools and tests tell causes apart without reading
// prose.
type Cause string

// The causes.
const (
	// NotSelected: --checks, --label-filter or --focus left the check out.
	NotSelected Cause = "not-selected"
	// OtherRevision: the behaviour belongs to a protocol revision the run
	// does not speak (or newer than the one negotiated), or the target
	// does not speak the run's revision.
	OtherRevision Cause = "other-revision"
	// NoSessions: the check needs sessions, which the target (a stateless
	// server) or the revision does not have.
	NoSessions Cause = "no-sessions"
	// NotOffered: the target does not offer what the behaviour is about
	// (an optional feature: a GET stream, DELETE, event ids, resumption),
	// or the client declined the action the check asked of it.
	NotOffered Cause = "not-offered"
	// NotApplicable: the behaviour does not apply to a target like this
	// one for another reason the message gives (a replicated deployment, a
	// declared timing that rules it out, a client that had nothing the
	// check grades).
	NotApplicable Cause = "not-applicable"
	// NeedsProfileKey: the target profile lacks a key the check needs.
	NeedsProfileKey Cause = "needs-profile-key"
	// NeedsRestart: the check restarts the target, which needs --server-cmd.
	NeedsRestart Cause = "needs-restart"
	// NeedsReplica: the check needs a second replica (--replica-url) or
	// one the harness started.
	NeedsReplica Cause = "needs-replica"
	// NeedsProxy: the check injects a network fault, which --no-proxy rules
	// out.
	NeedsProxy Cause = "needs-proxy"
	// NeedsBrowser: the check is about a web page in a browser; the
	// client under test is a process.
	NeedsBrowser Cause = "needs-browser"
	// Unobservable: the harness could not observe the behaviour (its own
	// setup or delay, or what the target legitimately did, left the
	// premise unmet): an inconclusive verdict, or a skip for want of what
	// the check watches for.
	Unobservable Cause = "unobservable"
	// Interfered: what the check watched for was taken by checks running
	// beside it (a target that sends one session's messages to another's
	// streams): the engine runs it again alone, and only a result of that
	// run stands.
	Interfered Cause = "interfered"
)

// Unmet reports whether c names a prerequisite of the run the user can
// supply: a profile key, --server-cmd or --replica-url.
func (c Cause) Unmet() bool {
	return c == NeedsProfileKey || c == NeedsRestart || c == NeedsReplica
}
