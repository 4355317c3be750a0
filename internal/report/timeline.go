package report

// Event is one mark on a check's timeline: something that went over the
// wire, a fault injected or a silence kept, at a time from the check's
// start. The timeline is the structured twin of the exchange log.
type Event struct {
	// At is seconds from the check's start.
	At float64 `json:"t"`
	// Lane is the HTTP exchange ("#3") or client run ("run 1") the event
	// belongs to; empty for events of the whole check (faults, notes).
	Lane string `json:"lane,omitempty"`
	Kind Kind   `json:"kind"`
	// Text is the event's raw log lines.
	Text string `json:"text"`
	// Group ties the messages of one JSON-RPC request together (its
	// progress token or id): a request, its notifications, its response.
	Group string `json:"group,omitempty"`
	// Seconds is the length of a silence window.
	Seconds float64 `json:"duration_seconds,omitempty"`
}

// Kind is what an Event marks.
type Kind string

// Event kinds.
const (
	KindRequest   Kind = "request"   // a request sent (or, client mode, received)
	KindStatus    Kind = "status"    // the response status and headers
	KindBody      Kind = "body"      // a non-SSE response body line
	KindSSE       Kind = "sse"       // an SSE event (its id:, data:, retry: lines)
	KindComment   Kind = "comment"   // an SSE comment: a keep-alive
	KindRetry     Kind = "retry"     // an SSE event with a retry field and no data
	KindEnd       Kind = "end"       // the server ended the body
	KindClosed    Kind = "closed"    // the harness closed the body
	KindError     Kind = "error"     // a transport or body read error
	KindFault     Kind = "fault"     // a fault injected: a line across all lanes
	KindSilence   Kind = "silence"   // the check keeps silent for Seconds
	KindNote      Kind = "note"      // a line of the check's own
	KindRunStart  Kind = "run-start" // client mode: the client process started
	KindRunExit   Kind = "run-exit"  // client mode: the client process ended
	KindRunOutput Kind = "run-output"
)

// MaxEvents bounds one check's timeline, to keep reports small.
const MaxEvents = 600

// MaxTimelineText bounds the text of one check's timeline events
// together: past it, events are counted, not kept.
const MaxTimelineText = 64 << 10

// MaxMessage bounds a check's message: what it quotes of a target is cut
// there, with a note of the full length (inert.Bound).
const MaxMessage = 8 << 10
