package kit

import (
	"bytes"
	"fmt"
	"sync"
	"time"
)

// maxExchangeLog bounds one check's exchange log; the beginning and the end
// of a long exchange are what explain a failure.
const maxExchangeLog = 64 << 10

// Log is a check's record of what went over the wire: requests,
// statuses, headers, SSE lines with their ids, faults, with times relative
// to the start of the check.
type Log struct {
	mu      sync.Mutex
	start   time.Time
	buf     bytes.Buffer
	dropped int
}

// NewLog starts a log; times are relative to now.
func NewLog() *Log { return &Log{start: time.Now()} }

// Printf adds a line.
func (l *Log) Printf(format string, args ...any) {
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
func (l *Log) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.buf.String()
	if l.dropped > 0 {
		s += fmt.Sprintf("... %d more lines not kept\n", l.dropped)
	}
	return s
}

// Clip shortens s to n bytes, marking the cut.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
