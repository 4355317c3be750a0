package server

import (
	"bytes"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// keepAliveWriteTimeout bounds one keep-alive write: a peer that stopped
// reading (a half-open connection) fails it, and its stream is dropped.
const keepAliveWriteTimeout = 10 * time.Second

// streamWriter wraps the ResponseWriter of a standalone GET stream. It
// serialises the go-sdk's event writes with the server's own keep-alive
// comments and retry hints (the go-sdk writes each event in one Write), and
// records the index of the last standalone event written.
type streamWriter struct {
	http.ResponseWriter
	mu          sync.Mutex
	wroteHeader bool
	finished    bool            // the handler is returning: the writer must not be used
	onEvent     func(index int) // called with each standalone event index written
}

func (w *streamWriter) WriteHeader(code int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.wroteHeader = true
	w.ResponseWriter.WriteHeader(code)
}

func (w *streamWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.wroteHeader = true
	n, err := w.ResponseWriter.Write(p)
	if err == nil && w.onEvent != nil {
		if idx, ok := standaloneEventIndex(p); ok {
			w.onEvent(idx)
		}
	}
	return n, err
}

// finish marks the end of the request; later keep-alives and retry hints
// from other goroutines are dropped.
func (w *streamWriter) finish() {
	w.mu.Lock()
	w.finished = true
	w.mu.Unlock()
}

// FlushError lets http.ResponseController flush under the lock.
func (w *streamWriter) FlushError() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return http.NewResponseController(w.ResponseWriter).Flush()
}

// Unwrap exposes the real writer to http.ResponseController.
func (w *streamWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// comment writes an SSE comment line and flushes it within
// keepAliveWriteTimeout. Before the go-sdk has written the headers it does
// nothing, so the status and content type stay the go-sdk's.
func (w *streamWriter) comment(text string) error {
	return w.writeRaw(": " + text + "\n\n")
}

// retry writes a bare retry field: the reconnection delay a client must wait
// when the server is about to close the stream on purpose (SSE-RETRY-FIELD).
func (w *streamWriter) retry(d time.Duration) error {
	return w.writeRaw("retry: " + strconv.FormatInt(d.Milliseconds(), 10) + "\n\n")
}

func (w *streamWriter) writeRaw(s string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.wroteHeader || w.finished {
		return nil
	}
	rc := http.NewResponseController(w.ResponseWriter)
	rc.SetWriteDeadline(time.Now().Add(keepAliveWriteTimeout))
	defer rc.SetWriteDeadline(time.Time{})
	if _, err := w.ResponseWriter.Write([]byte(s)); err != nil {
		return err
	}
	return rc.Flush()
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
