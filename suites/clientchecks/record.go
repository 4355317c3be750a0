package clientchecks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcp-conform/mcp-conform/internal/report"
	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/suites/kit"
)

// exchange is one HTTP request of the client under test as the scripted
// server saw it, and what was sent back. Fields after the request's are
// written while the answer streams; read them through snapshot.
type exchange struct {
	N   int
	Run int // the client run in progress when it arrived (0: none)
	At  time.Time

	Method          string
	SessionID       string
	ProtocolVersion string
	LastEventID     string
	Authorization   string
	// RPC is the JSON-RPC message of a POST body (the first of a batch).
	RPC rpcMessage

	Status        int
	RespSessionID string
	ContentType   string
	Body          []byte     // a non-SSE answer, first 64 KiB
	Events        []sseEvent // SSE events sent, in order
	// CutAt is when the script closed the stream on purpose (zero: never).
	CutAt time.Time
	Done  time.Time // when the answer ended (zero: still going)
	// Note says what the script did with it.
	Note string
}

type rpcMessage struct {
	Method string          `json:"method"`
	ID     json.RawMessage `json:"id"`
	Params json.RawMessage `json:"params"`
}

// sseEvent is one event the server sent.
type sseEvent struct {
	At    time.Time
	ID    string
	HasID bool
	Data  string
	Retry string
}

// kind is the event's kind on the timeline.
func (e sseEvent) kind() report.Kind {
	if e.Retry != "" && e.Data == "" {
		return report.KindRetry
	}
	return report.KindSSE
}

// text is the event's lines as logged for exchange n.
func (e sseEvent) text(n int) string {
	var lines []string
	if e.HasID {
		lines = append(lines, fmt.Sprintf("#%d   | id: %s", n, e.ID))
	}
	if e.Retry != "" {
		lines = append(lines, fmt.Sprintf("#%d   | retry: %s", n, e.Retry))
	}
	for _, d := range strings.Split(e.Data, "\n") {
		if d != "" {
			lines = append(lines, fmt.Sprintf("#%d   | data: %s", n, kit.Clip(d, 600)))
		}
	}
	return strings.Join(lines, "\n")
}

// isInit reports an initialize request.
func (x exchange) isInit() bool { return x.Method == http.MethodPost && x.RPC.Method == "initialize" }

// isFreshInit reports an initialize without a session id: a new session.
func (x exchange) isFreshInit() bool { return x.isInit() && x.SessionID == "" }

// tool returns the tool name of a tools/call, or "".
func (x exchange) tool() string {
	if x.RPC.Method != "tools/call" {
		return ""
	}
	var p struct {
		Name string `json:"name"`
	}
	json.Unmarshal(x.RPC.Params, &p)
	return p.Name
}

// arguments returns a tools/call's arguments.
func (x exchange) arguments() map[string]json.RawMessage {
	var p struct {
		Arguments map[string]json.RawMessage `json:"arguments"`
	}
	json.Unmarshal(x.RPC.Params, &p)
	return p.Arguments
}

// isSSE reports an answer that is an event stream.
func (x exchange) isSSE() bool { return strings.HasPrefix(x.ContentType, wire.MediaTypeSSE) }

// opened reports a 200 SSE answer, as a GET stream that opened.
func (x exchange) opened() bool { return x.Status == http.StatusOK && x.isSSE() }

// version returns the protocolVersion of an InitializeResult answer.
func (x exchange) version() string {
	for _, m := range x.messages() {
		var r struct {
			Result struct {
				ProtocolVersion string `json:"protocolVersion"`
			} `json:"result"`
		}
		if json.Unmarshal(m, &r) == nil && r.Result.ProtocolVersion != "" {
			return r.Result.ProtocolVersion
		}
	}
	return ""
}

// messages returns the JSON-RPC messages of the answer (JSON body or SSE data).
func (x exchange) messages() []json.RawMessage {
	var out []json.RawMessage
	if !x.isSSE() && len(x.Body) > 0 {
		return append(out, x.Body)
	}
	for _, ev := range x.Events {
		if strings.TrimSpace(ev.Data) != "" {
			out = append(out, json.RawMessage(ev.Data))
		}
	}
	return out
}

// result returns the result of the JSON-RPC response in the answer, if any.
func (x exchange) result() json.RawMessage {
	for _, m := range x.messages() {
		var r struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		if json.Unmarshal(m, &r) == nil && r.Result != nil && len(r.ID) > 0 && string(r.ID) != "null" {
			return r.Result
		}
	}
	return nil
}

// errorCode returns the JSON-RPC error code of a JSON answer, or 0.
func (x exchange) errorCode() int {
	var r struct {
		Error *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(x.Body, &r) == nil && r.Error != nil {
		return r.Error.Code
	}
	return 0
}

// captureWriter records what the server writes: status, headers, the body
// or its SSE events. With a cut armed it closes the stream on purpose
// after the given number of events, writing a retry field first.
type captureWriter struct {
	http.ResponseWriter
	rec *clientRecorder
	x   *exchange

	mu      sync.Mutex
	wrote   bool
	sse     bool
	partial []byte
	event   sseEvent
	lines   int // lines of the current event
	events  int
	cut     *cutSpec
	cutDone bool
}

// cutSpec closes a stream after the first event until matches, with a
// retry field.
type cutSpec struct {
	until  func(sseEvent) bool
	retry  time.Duration
	cancel func() // ends the request for the server behind
}

var errCut = errors.New("stream closed by the scripted server")

func (w *captureWriter) WriteHeader(code int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writeHeaderLocked(code)
}

func (w *captureWriter) writeHeaderLocked(code int) {
	if w.wrote {
		return
	}
	w.wrote = true
	h := w.Header()
	w.sse = strings.HasPrefix(h.Get("Content-Type"), wire.MediaTypeSSE)
	w.rec.update(w.x, func(x *exchange) {
		x.Status, x.ContentType, x.RespSessionID = code, h.Get("Content-Type"), h.Get(wire.HeaderSessionID)
	})
	w.rec.mark(w.x, report.KindStatus, "", fmt.Sprintf("#%d ← %d%s", w.x.N, code, kit.HeaderSummary(h, []string{"Content-Type", wire.HeaderSessionID})))
	w.ResponseWriter.WriteHeader(code)
}

func (w *captureWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writeHeaderLocked(http.StatusOK)
	if !w.sse {
		w.rec.update(w.x, func(x *exchange) {
			if room := 64<<10 - len(x.Body); room > 0 {
				x.Body = append(x.Body, p[:min(room, len(p))]...)
			}
		})
		body := strings.TrimSpace(string(p))
		w.rec.mark(w.x, report.KindBody, w.rec.log.EventGroup(lane(w.x), "", body), fmt.Sprintf("#%d   body %s", w.x.N, kit.Clip(body, 600)))
		return w.ResponseWriter.Write(p)
	}
	if w.cutDone {
		return 0, errCut
	}
	// Forward whole lines, so that a cut falls between two events.
	w.partial = append(w.partial, p...)
	for !w.cutDone {
		i := bytes.IndexByte(w.partial, '\n')
		if i < 0 {
			break
		}
		line := w.partial[:i+1]
		if _, err := w.ResponseWriter.Write(line); err != nil {
			w.partial = nil
			return 0, err
		}
		w.sseLine(strings.TrimRight(string(line), "\r\n"))
		w.partial = w.partial[i+1:]
	}
	if w.cutDone {
		w.partial = nil
	}
	return len(p), nil
}

// sseLine records one SSE line and cuts the stream after the armed event.
func (w *captureWriter) sseLine(line string) {
	if strings.HasPrefix(line, ":") {
		w.rec.mark(w.x, report.KindComment, "", fmt.Sprintf("#%d   | %s", w.x.N, kit.Clip(line, 600)))
		return // a comment (keep-alive)
	}
	if line != "" {
		w.rec.log.Add(nil, fmt.Sprintf("#%d   | %s", w.x.N, kit.Clip(line, 600)))
		w.lines++
		name, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch name {
		case "id":
			w.event.ID, w.event.HasID = value, true
		case "data":
			if w.event.Data != "" {
				w.event.Data += "\n"
			}
			w.event.Data += value
		case "retry":
			w.event.Retry = value
		}
		return
	}
	if w.lines == 0 {
		return
	}
	ev := w.event
	ev.At = time.Now()
	w.event, w.lines = sseEvent{}, 0
	w.events++
	w.rec.update(w.x, func(x *exchange) { x.Events = append(x.Events, ev) })
	w.rec.log.Add(&report.Event{Lane: lane(w.x), Kind: ev.kind(), Group: w.rec.log.EventGroup(lane(w.x), ev.ID, ev.Data), Text: ev.text(w.x.N)}, "")
	if w.cut != nil && w.cut.until(ev) {
		// A retry of 0 is a connection lost, not a close on purpose: no
		// retry field.
		if w.cut.retry > 0 {
			retry := "retry: " + strconv.FormatInt(w.cut.retry.Milliseconds(), 10) + "\n\n"
			w.ResponseWriter.Write([]byte(retry))
			http.NewResponseController(w.ResponseWriter).Flush()
			w.rec.mark(w.x, report.KindRetry, "", fmt.Sprintf("#%d   | %s", w.x.N, strings.TrimSpace(retry)))
		}
		w.cutDone = true
		at := time.Now()
		w.rec.update(w.x, func(x *exchange) { x.CutAt = at })
		w.rec.logf("!! stream #%d closed by the server after %s (%s), retry %v", w.x.N, events(w.events), w.sentText(), w.cut.retry)
		w.cut.cancel()
	}
}

// events says "1 event", "2 events".
func events(n int) string {
	if n == 1 {
		return "1 event"
	}
	return fmt.Sprintf("%d events", n)
}

// sentText says what the events sent so far were: "a priming event, p1,
// l1" (p<N>, l<N>: long_operation's notifications, as steps renders them).
func (w *captureWriter) sentText() string {
	var evs []sseEvent
	w.rec.update(w.x, func(x *exchange) { evs = append(evs, x.Events...) })
	var out []string
	for _, ev := range evs {
		switch s := dataStep(ev.Data); {
		case s != "":
			out = append(out, s)
		case strings.TrimSpace(ev.Data) == "" && ev.HasID:
			out = append(out, "a priming event")
		case strings.TrimSpace(ev.Data) == "":
			out = append(out, "an empty event")
		default:
			out = append(out, "a message")
		}
	}
	return strings.Join(out, ", ")
}

// FlushError lets http.ResponseController flush through the capture.
func (w *captureWriter) FlushError() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cutDone {
		return errCut
	}
	w.writeHeaderLocked(http.StatusOK)
	return http.NewResponseController(w.ResponseWriter).Flush()
}

// Flush is http.Flusher for writers that look for it.
func (w *captureWriter) Flush() { _ = w.FlushError() }

// Unwrap exposes the real writer to http.ResponseController.
func (w *captureWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// clientRecorder keeps every exchange of a check, in arrival order.
type clientRecorder struct {
	log *kit.Log
	run func() int // the client run in progress

	mu sync.Mutex
	xs []*exchange
	// strays are the requests sent to another path than the endpoint's,
	// by run (the first few of each): they are no exchange of the
	// script's, but they are often why a run failed.
	strays map[int][]string
}

// maxStrays bounds the stray requests kept per run.
const maxStrays = 5

// stray records a request for another path than the endpoint's, which
// the server answers 404.
func (r *clientRecorder) stray(req *http.Request) {
	run := r.run()
	what := fmt.Sprintf("%s %q", req.Method, kit.Clip(req.URL.Path, 200))
	r.mu.Lock()
	if r.strays == nil {
		r.strays = map[int][]string{}
	}
	kept := len(r.strays[run]) < maxStrays
	if kept {
		r.strays[run] = append(r.strays[run], what)
	}
	r.mu.Unlock()
	if kept {
		r.logf("?? run %d sent %s, not to the MCP endpoint: answered 404", run, what)
	}
}

// straysOf returns the stray requests of run n.
func (r *clientRecorder) straysOf(n int) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.strays[n])
}

func (r *clientRecorder) logf(format string, args ...any) { r.log.Printf(format, args...) }

// mark adds a line of exchange x to the log and its lane.
func (r *clientRecorder) mark(x *exchange, kind report.Kind, group, line string) {
	r.log.Mark(lane(x), kind, group, line)
}

// lane is the timeline lane of exchange x.
func lane(x *exchange) string { return fmt.Sprintf("#%d", x.N) }

// add records a new request.
func (r *clientRecorder) add(req *http.Request, body []byte) *exchange {
	x := &exchange{
		At: time.Now(), Run: r.run(), Method: req.Method,
		SessionID:       req.Header.Get(wire.HeaderSessionID),
		ProtocolVersion: req.Header.Get(wire.HeaderProtocolVersion),
		LastEventID:     req.Header.Get(wire.HeaderLastEventID),
		Authorization:   req.Header.Get("Authorization"),
	}
	if len(bytes.TrimSpace(body)) > 0 {
		var batch []rpcMessage
		if json.Unmarshal(body, &x.RPC) != nil && json.Unmarshal(body, &batch) == nil && len(batch) > 0 {
			x.RPC = batch[0]
		}
	}
	r.mu.Lock()
	r.xs = append(r.xs, x)
	x.N = len(r.xs)
	r.mu.Unlock()
	line := fmt.Sprintf("#%d → run %d %s%s%s", x.N, x.Run, req.Method,
		kit.HeaderSummary(req.Header, []string{wire.HeaderSessionID, wire.HeaderProtocolVersion, wire.HeaderLastEventID, "Accept"}), kit.AuthSummary(req.Header))
	if len(body) > 0 {
		line += fmt.Sprintf("\n#%d   body %s", x.N, kit.Clip(string(body), 600))
	}
	r.mark(x, report.KindRequest, r.log.RequestGroup(lane(x), x.SessionID, x.LastEventID, string(body)), line)
	return x
}

// update changes a recorded exchange under the lock.
func (r *clientRecorder) update(x *exchange, f func(*exchange)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f(x)
}

// all returns copies of every exchange so far.
func (r *clientRecorder) all() []exchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]exchange, len(r.xs))
	for i, x := range r.xs {
		out[i] = *x
		out[i].Events = append([]sseEvent(nil), x.Events...)
		out[i].Body = append([]byte(nil), x.Body...)
	}
	return out
}

// note records what the script did with an exchange.
func (r *clientRecorder) note(x *exchange, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	r.update(x, func(x *exchange) { x.Note = msg })
	r.logf("!! #%d %s", x.N, msg)
}
