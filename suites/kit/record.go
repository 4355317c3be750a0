package kit

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"hash"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/mcp-conform/mcp-conform/internal/inert"
	"github.com/mcp-conform/mcp-conform/internal/report"
	"github.com/mcp-conform/mcp-conform/internal/wire"
)

// Recorder is an http.RoundTripper that writes each exchange to a log.
type Recorder struct {
	Base http.RoundTripper
	Log  *Log
}

// mark adds a log line and its timeline event on exchange n's lane.
func mark(l *Log, n int, kind report.Kind, group, line string) {
	l.Mark(fmt.Sprintf("#%d", n), kind, group, line)
}

var loggedHeaders = []string{wire.HeaderSessionID, wire.HeaderProtocolVersion, wire.HeaderLastEventID, "Origin", "Content-Type", "Accept"}

// RoundTrip logs the request, its answer and, as it is read, its body.
func (r *Recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	n := r.Log.exchange()
	var body []byte
	if req.Body != nil && req.GetBody != nil {
		if rc, err := req.GetBody(); err == nil {
			body, _ = io.ReadAll(io.LimitReader(rc, 2048))
			rc.Close()
		}
	}
	line := fmt.Sprintf("#%d → %s %s%s%s", n, req.Method, req.URL.Path, HeaderSummary(req.Header, loggedHeaders), AuthSummary(req.Header))
	group := r.Log.RequestGroup(fmt.Sprintf("#%d", n), req.Header.Get(wire.HeaderSessionID), req.Header.Get(wire.HeaderLastEventID), string(body))
	if len(body) > 0 {
		line += fmt.Sprintf("\n#%d   body %s", n, inert.Bound(string(body), 1024))
	}
	mark(r.Log, n, report.KindRequest, group, line)
	began := time.Now()
	resp, err := r.Base.RoundTrip(req)
	if err != nil {
		mark(r.Log, n, report.KindError, "", fmt.Sprintf("#%d ✗ %v (after %v)", n, err, time.Since(began).Round(time.Millisecond)))
		return nil, err
	}
	mark(r.Log, n, report.KindStatus, "", fmt.Sprintf("#%d ← %d%s (after %v)", n, resp.StatusCode,
		HeaderSummary(resp.Header, []string{"Content-Type", wire.HeaderSessionID}), time.Since(began).Round(time.Millisecond)))
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

// AuthSummary says which credential was sent without any of it: the
// scheme, then the credential's length and the first 8 hex digits of its
// SHA-256, enough to tell two tokens apart in a log.
func AuthSummary(h http.Header) string {
	v := h.Get("Authorization")
	if v == "" {
		return ""
	}
	scheme, cred, ok := strings.Cut(v, " ")
	if !ok {
		scheme, cred = "", v
	} else {
		scheme += " "
	}
	return fmt.Sprintf(" Authorization=%q %s", scheme+"…", Fingerprint(cred))
}

// Fingerprint stands for a credential in a log: its length and the start
// of its SHA-256, which tell two apart and show none of either.
func Fingerprint(cred string) string {
	sum := sha256.Sum256([]byte(cred))
	return fmt.Sprintf("(%d bytes, sha256 %x)", len(cred), sum[:4])
}

// bodyLogger logs a response body line by line as it is read: SSE fields
// (id, data, retry, comments) appear with their arrival time. On the
// timeline the fields of one SSE event make one event.
type bodyLogger struct {
	io.ReadCloser
	log *Log
	n   int
	// mu guards what follows: Close may come from another goroutine.
	mu      sync.Mutex
	partial []byte
	// long is the line being read once it outgrew maxLoggedLine: only its
	// beginning is in partial, and it is summed and counted here.
	long   hash.Hash
	longN  int
	closed bool
	sse    sseEvent
}

// maxLoggedLine bounds the part of one body line the log keeps while
// reading it; a longer line is logged as its beginning, its length and
// its SHA-256.
const maxLoggedLine = 4 << 10

func (b *bodyLogger) Read(p []byte) (int, error) {
	k, err := b.ReadCloser.Read(p)
	b.mu.Lock()
	defer b.mu.Unlock()
	for rest := p[:k]; len(rest) > 0; {
		i := bytes.IndexByte(rest, '\n')
		chunk := rest
		if i >= 0 {
			chunk = rest[:i]
		}
		b.gather(chunk)
		if i < 0 {
			break
		}
		b.endLine()
		rest = rest[i+1:]
	}
	if err != nil {
		if len(b.partial) > 0 || b.long != nil {
			b.endLine()
		}
		b.flush()
		if err == io.EOF {
			mark(b.log, b.n, report.KindEnd, "", fmt.Sprintf("#%d   end of body", b.n))
		} else {
			mark(b.log, b.n, report.KindError, "", fmt.Sprintf("#%d   body read error: %v", b.n, err))
		}
	}
	return k, err
}

// gather adds chunk, a part of the line being read, to what is kept of it.
func (b *bodyLogger) gather(chunk []byte) {
	if b.long == nil && len(b.partial)+len(chunk) <= maxLoggedLine {
		b.partial = append(b.partial, chunk...)
		return
	}
	if b.long == nil {
		b.long = sha256.New()
		b.long.Write(b.partial)
		b.longN = len(b.partial)
	}
	b.long.Write(chunk)
	b.longN += len(chunk)
	if room := maxLoggedLine - len(b.partial); room > 0 {
		b.partial = append(b.partial, chunk[:min(room, len(chunk))]...)
	}
}

// endLine logs the line read: whole, or a long one's beginning with its
// length and hash.
func (b *bodyLogger) endLine() {
	line := strings.TrimRight(string(b.partial), "\r")
	if b.long != nil {
		line = fmt.Sprintf("%s…[a line of %d bytes, sha256 %x]", strings.ToValidUTF8(line[:min(len(line), 600)], ""), b.longN, b.long.Sum(nil)[:6])
	}
	b.partial, b.long, b.longN = b.partial[:0], nil, 0
	b.line(line)
}

// line logs one body line and adds it to the timeline.
func (b *bodyLogger) line(line string) {
	if line == "" {
		b.flush()
		return
	}
	text := fmt.Sprintf("#%d   | %s", b.n, inert.Bound(line, 1024))
	switch field, value, _ := strings.Cut(line, ":"); field {
	case "":
		mark(b.log, b.n, report.KindComment, "", text)
	case "id", "data", "retry", "event":
		b.log.Add(nil, text)
		b.sse.lines = append(b.sse.lines, text)
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "id":
			b.sse.id = value
		case "data":
			if b.sse.data != "" {
				b.sse.data += "\n"
			}
			b.sse.data += value
		case "retry":
			b.sse.retry = true
		}
	default:
		mark(b.log, b.n, report.KindBody, b.log.EventGroup(fmt.Sprintf("#%d", b.n), "", line), text)
	}
}

// sseEvent gathers the fields of one SSE event.
type sseEvent struct {
	lines    []string
	id, data string
	retry    bool
}

// flush puts the SSE event read so far on the timeline.
func (b *bodyLogger) flush() {
	e := b.sse
	b.sse = sseEvent{}
	if len(e.lines) == 0 {
		return
	}
	kind := report.KindSSE
	if e.retry && strings.TrimSpace(e.data) == "" {
		kind = report.KindRetry
	}
	lane := fmt.Sprintf("#%d", b.n)
	b.log.Add(&report.Event{Lane: lane, Kind: kind, Group: b.log.EventGroup(lane, e.id, e.data), Text: strings.Join(e.lines, "\n")}, "")
}

func (b *bodyLogger) Close() error {
	b.mu.Lock()
	if !b.closed {
		b.closed = true
		b.flush()
		mark(b.log, b.n, report.KindClosed, "", fmt.Sprintf("#%d   closed by the harness", b.n))
	}
	b.mu.Unlock()
	return b.ReadCloser.Close()
}
