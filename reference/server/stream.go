package server

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/mcp-conform/mcp-conform/reference/eventstore"
)

// streamWriter wraps the ResponseWriter of a standalone GET stream. It
// serialises the go-sdk's event writes with the server's own keep-alive
// comments and retry hints (the go-sdk writes each event in one Write),
// writes the stream's opening (priming event and backlog) when the go-sdk
// commits to 200, and records the index of the last standalone event written.
type streamWriter struct {
	http.ResponseWriter
	mu          sync.Mutex
	wroteHeader bool
	closed      bool               // replaced or returning: every later write fails
	retry       string             // retry hint still owed: closed before the header
	onEvent     func(index int)    // called with each standalone event index written and flushed
	unflushed   int                // index of the last event written, not yet flushed, if pending
	pending     bool               // unflushed is set
	primingID   string             // the priming event's id, "" for none
	backlog     []eventstore.Event // sent right after the priming event
}

// open sets what the stream opens with once the go-sdk commits to 200: the
// priming event's id ("" for none) and the backlog.
func (w *streamWriter) open(primingID string, backlog []eventstore.Event) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.primingID, w.backlog = primingID, backlog
}

// errStreamClosed refuses writes to a replaced stream, so that messages
// stay in the store for the stream that replaced it.
var errStreamClosed = errors.New("standalone stream closed")

func (w *streamWriter) WriteHeader(code int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writeHeaderLocked(code)
}

// writeHeaderLocked passes the go-sdk's status on and follows a 200 with the
// opening. The go-sdk writes the 200 before its own replay and before it
// takes live messages, so the opening precedes both.
func (w *streamWriter) writeHeaderLocked(code int) {
	if w.wroteHeader {
		return
	}
	w.wroteHeader = true
	w.ResponseWriter.WriteHeader(code)
	if code == http.StatusOK && w.retry != "" {
		// Replaced before the go-sdk answered: the 200 still carries the hint.
		w.ResponseWriter.Write([]byte(w.retry))
		http.NewResponseController(w.ResponseWriter).Flush()
	}
	if code != http.StatusOK || w.closed {
		return
	}
	var b bytes.Buffer
	if w.primingID != "" {
		b.WriteString("id: ")
		b.WriteString(w.primingID)
		b.WriteString("\ndata: \n\n")
	}
	for _, ev := range w.backlog {
		writeMessageEvent(&b, "", ev.Index, ev.Data)
	}
	backlog := w.backlog
	w.primingID, w.backlog = "", nil
	if b.Len() == 0 {
		return
	}
	if _, err := w.ResponseWriter.Write(b.Bytes()); err != nil {
		return
	}
	// Not flushed here: the go-sdk follows its 200 on a standalone stream
	// with a comment and a flush at once, which sends the opening with the
	// headers in one write to the socket rather than two. The priming event
	// is not a message; the backlog counts as delivered once that flush
	// succeeds (see flushLocked).
	if len(backlog) > 0 && w.onEvent != nil {
		w.unflushed, w.pending = backlog[len(backlog)-1].Index, true
	}
}

func (w *streamWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return 0, errStreamClosed
	}
	w.writeHeaderLocked(http.StatusOK)
	n, err := w.ResponseWriter.Write(p)
	if err == nil && w.onEvent != nil {
		if idx, ok := standaloneEventIndex(p); ok {
			w.unflushed, w.pending = idx, true
		}
	}
	return n, err
}

// finish marks the end of the request; later keep-alives and retry hints
// from other goroutines are dropped.
func (w *streamWriter) finish() {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
}

// close ends a replaced stream: a retry hint (SSE-RETRY-FIELD), then nothing
// more, even from the go-sdk before it notices.
func (w *streamWriter) close(retry time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	hint := "retry: " + strconv.FormatInt(retry.Milliseconds(), 10) + "\n\n"
	if !w.wroteHeader && !w.closed {
		w.retry = hint
	}
	w.writeRawLocked(hint)
	w.closed = true
}

// FlushError lets http.ResponseController flush under the lock. An event
// counts as sent to the client once flushed: one still buffered when the
// connection turns out dead was not, and a fresh GET gets it.
func (w *streamWriter) FlushError() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.flushLocked()
}

func (w *streamWriter) flushLocked() error {
	err := http.NewResponseController(w.ResponseWriter).Flush()
	if err == nil && w.pending {
		w.onEvent(w.unflushed)
	}
	w.pending = false
	return err
}

// Unwrap exposes the real writer to http.ResponseController.
func (w *streamWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// comment writes an SSE comment line and flushes it (within the write
// timeout: the ResponseWriter is a deadlineWriter). Before the go-sdk has
// written the headers it does nothing, so the status and content type stay
// the go-sdk's.
func (w *streamWriter) comment(text string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.writeRawLocked(": " + text + "\n\n")
}

// notify writes data (a JSON-RPC notification) as an SSE message event
// without an id, between the go-sdk's events. An id-less event does not
// move the stream's resume cursor (standaloneEventIndex and the client's
// Last-Event-ID keep the last stored event) and is never replayed: only
// advisory messages may go this way. Like comment, it does nothing before
// the go-sdk has written the headers.
func (w *streamWriter) notify(data []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.writeRawLocked("event: message\ndata: " + string(data) + "\n\n")
}

func (w *streamWriter) writeRawLocked(s string) error {
	if !w.wroteHeader || w.closed {
		return nil
	}
	if _, err := w.ResponseWriter.Write([]byte(s)); err != nil {
		return err
	}
	return w.flushLocked()
}

// abort makes a write stalled on the client fail now (see deadlineWriter).
func (w *streamWriter) abort() {
	if d, ok := w.ResponseWriter.(*deadlineWriter); ok {
		d.kill()
	}
}

// standaloneEventIndex finds the "id: _N" line of an SSE event written on
// the standalone stream.
func standaloneEventIndex(p []byte) (int, bool) {
	for line := range bytes.Lines(p) {
		if rest, ok := bytes.CutPrefix(bytes.TrimRight(line, "\r\n"), []byte("id: _")); ok {
			n, err := strconv.Atoi(string(rest))
			return n, err == nil
		}
	}
	return 0, false
}

// writeMessageEvent writes a stored message as an SSE event whose id has
// the go-sdk's "<stream>_<index>" form (the standalone stream's id is "").
func writeMessageEvent(w io.Writer, stream string, index int, data []byte) error {
	_, err := fmt.Fprintf(w, "event: message\nid: %s_%d\ndata: %s\n\n", stream, index, data)
	return err
}

// parseEventID splits a Last-Event-ID in the go-sdk's "<stream>_<index>" form.
func parseEventID(id string) (stream string, index int, err error) {
	for i := len(id) - 1; i >= 0; i-- {
		if id[i] == '_' {
			n, convErr := strconv.Atoi(id[i+1:])
			if convErr != nil || n < 0 || bytes.IndexByte([]byte(id[:i]), '_') >= 0 {
				break
			}
			return id[:i], n, nil
		}
	}
	return "", 0, fmt.Errorf("malformed %s %q: want <stream>_<index>", headerLastEventID, id)
}
