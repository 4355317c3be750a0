package suites

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

// maxExchangeLog bounds one check's exchange log; the beginning and the end
// of a long exchange are what explain a failure.
const maxExchangeLog = 64 << 10

// exchangeLog is a check's record of what went over the wire: requests,
// statuses, headers, SSE lines with their ids, faults, with times relative
// to the start of the check.
type exchangeLog struct {
	mu      sync.Mutex
	start   time.Time
	buf     bytes.Buffer
	dropped int
}

func newExchangeLog() *exchangeLog { return &exchangeLog{start: time.Now()} }

func (l *exchangeLog) printf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	line := fmt.Sprintf("%8.3fs  %s\n", time.Since(l.start).Seconds(), fmt.Sprintf(format, args...))
	if l.buf.Len()+len(line) > maxExchangeLog {
		l.dropped++
		return
	}
	l.buf.WriteString(line)
}

// String returns the log.
func (l *exchangeLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.buf.String()
	if l.dropped > 0 {
		s += fmt.Sprintf("... %d more lines not kept\n", l.dropped)
	}
	return s
}

// recorder is an http.RoundTripper that writes each exchange to a log.
type recorder struct {
	base http.RoundTripper
	log  *exchangeLog
	seq  int
	mu   sync.Mutex
}

var loggedHeaders = []string{wire.HeaderSessionID, wire.HeaderProtocolVersion, wire.HeaderLastEventID, "Origin", "Content-Type", "Accept"}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
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
	r.log.printf("#%d → %s %s%s%s", n, req.Method, req.URL.Path, headerSummary(req.Header, loggedHeaders), authSummary(req.Header))
	if len(body) > 0 {
		r.log.printf("#%d   body %s", n, clip(string(body), 600))
	}
	began := time.Now()
	resp, err := r.base.RoundTrip(req)
	if err != nil {
		r.log.printf("#%d ✗ %v (after %v)", n, err, time.Since(began).Round(time.Millisecond))
		return nil, err
	}
	r.log.printf("#%d ← %d%s (after %v)", n, resp.StatusCode,
		headerSummary(resp.Header, []string{"Content-Type", wire.HeaderSessionID}), time.Since(began).Round(time.Millisecond))
	resp.Body = &bodyLogger{ReadCloser: resp.Body, log: r.log, n: n}
	return resp, nil
}

func headerSummary(h http.Header, names []string) string {
	var b strings.Builder
	for _, k := range names {
		if v := h.Get(k); v != "" {
			fmt.Fprintf(&b, " %s=%q", k, v)
		}
	}
	return b.String()
}

// authSummary says which bearer token was used without printing it whole.
func authSummary(h http.Header) string {
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
	log     *exchangeLog
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
			b.log.printf("#%d   | %s", b.n, clip(line, 600))
		}
	}
	if err != nil {
		if len(b.partial) > 0 {
			b.log.printf("#%d   | %s", b.n, clip(string(b.partial), 600))
			b.partial = nil
		}
		if err == io.EOF {
			b.log.printf("#%d   end of body", b.n)
		} else {
			b.log.printf("#%d   body read error: %v", b.n, err)
		}
	}
	return k, err
}

func (b *bodyLogger) Close() error {
	if !b.closed {
		b.closed = true
		b.log.printf("#%d   closed by the harness", b.n)
	}
	return b.ReadCloser.Close()
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
