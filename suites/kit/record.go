package kit

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/mcp-conform/mcp-conform/internal/wire"
)

// Recorder is an http.RoundTripper that writes each exchange to a log.
type Recorder struct {
	Base http.RoundTripper
	Log  *Log
	seq  int
	mu   sync.Mutex
}

var loggedHeaders = []string{wire.HeaderSessionID, wire.HeaderProtocolVersion, wire.HeaderLastEventID, "Origin", "Content-Type", "Accept"}

// RoundTrip logs the request, its answer and, as it is read, its body.
func (r *Recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	r.mu.Lock()
	r.seq++
	n := r.seq
	r.mu.Unlock()
	var body []byte
	if req.Body != nil && req.GetBody != nil {
		if rc, err := req.GetBody(); err == nil {
			body, _ = io.ReadAll(io.LimitReader(rc, 2048))
			rc.Close()
		}
	}
	r.Log.Printf("#%d → %s %s%s%s", n, req.Method, req.URL.Path, HeaderSummary(req.Header, loggedHeaders), AuthSummary(req.Header))
	if len(body) > 0 {
		r.Log.Printf("#%d   body %s", n, Clip(string(body), 600))
	}
	began := time.Now()
	resp, err := r.Base.RoundTrip(req)
	if err != nil {
		r.Log.Printf("#%d ✗ %v (after %v)", n, err, time.Since(began).Round(time.Millisecond))
		return nil, err
	}
	r.Log.Printf("#%d ← %d%s (after %v)", n, resp.StatusCode,
		HeaderSummary(resp.Header, []string{"Content-Type", wire.HeaderSessionID}), time.Since(began).Round(time.Millisecond))
	resp.Body = &bodyLogger{ReadCloser: resp.Body, log: r.Log, n: n}
	return resp, nil
}

// HeaderSummary renders the named headers that are set, for a log line.
func HeaderSummary(h http.Header, names []string) string {
	var b strings.Builder
	for _, k := range names {
		if v := h.Get(k); v != "" {
			fmt.Fprintf(&b, " %s=%q", k, v)
		}
	}
	return b.String()
}

// AuthSummary says which bearer token was used without printing it whole.
func AuthSummary(h http.Header) string {
	v := h.Get("Authorization")
	if v == "" {
		return ""
	}
	if len(v) > 12 {
		v = v[:12] + "…"
	}
	return fmt.Sprintf(" Authorization=%q", v)
}

// bodyLogger logs a response body line by line as it is read: SSE fields
// (id, data, retry, comments) appear with their arrival time.
type bodyLogger struct {
	io.ReadCloser
	log     *Log
	n       int
	partial []byte
	closed  bool
}

func (b *bodyLogger) Read(p []byte) (int, error) {
	k, err := b.ReadCloser.Read(p)
	b.partial = append(b.partial, p[:k]...)
	for {
		i := bytes.IndexByte(b.partial, '\n')
		if i < 0 {
			break
		}
		line := strings.TrimRight(string(b.partial[:i]), "\r")
		b.partial = b.partial[i+1:]
		if line != "" {
			b.log.Printf("#%d   | %s", b.n, Clip(line, 600))
		}
	}
	if err != nil {
		if len(b.partial) > 0 {
			b.log.Printf("#%d   | %s", b.n, Clip(string(b.partial), 600))
			b.partial = nil
		}
		if err == io.EOF {
			b.log.Printf("#%d   end of body", b.n)
		} else {
			b.log.Printf("#%d   body read error: %v", b.n, err)
		}
	}
	return k, err
}

func (b *bodyLogger) Close() error {
	if !b.closed {
		b.closed = true
		b.log.Printf("#%d   closed by the harness", b.n)
	}
	return b.ReadCloser.Close()
}
