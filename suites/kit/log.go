package kit

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mcp-conform/mcp-conform/internal/report"
)

// maxExchangeHead and maxExchangeTail bound one check's exchange log: the
// beginning and the end of a long exchange are what explain a failure (the
// end holds how it ended, and what was cut from the middle).
const (
	maxExchangeHead = 48 << 10
	maxExchangeTail = 16 << 10
)

// Log is a check's record of what went over the wire: requests,
// statuses, headers, SSE lines with their ids, faults, with times relative
// to the start of the check. Beside the text it keeps the same as
// structured events, the check's timeline.
type Log struct {
	mu    sync.Mutex
	start time.Time
	buf   bytes.Buffer
	// tail holds the last lines once buf is full; dropped counts the
	// lines between them.
	tail     []string
	tailSize int
	dropped  int
	events   []report.Event
	// text is the length of the events' texts, kept within
	// report.MaxTimelineText.
	text int
	// lost counts the events past report.MaxEvents or that text bound.
	lost   int
	groups groups
	// seq numbers the HTTP exchanges of every Recorder on the log.
	seq int
}

// NewLog starts a log; times are relative to now.
func NewLog() *Log { return &Log{start: time.Now()} }

// Printf adds a line. A line starting with "!! " is a fault on the
// timeline; any other is a note of the whole check.
func (l *Log) Printf(format string, args ...any) {
	text := fmt.Sprintf(format, args...)
	kind := report.KindNote
	if strings.HasPrefix(text, "!! ") {
		kind = report.KindFault
	}
	l.Add(&report.Event{Kind: kind, Text: text}, text)
}

// exchange numbers a new HTTP exchange: its lane is "#n".
func (l *Log) exchange() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seq++
	return l.seq
}

// Mark adds a line to the text log and, on lane, to the timeline.
func (l *Log) Mark(lane string, kind report.Kind, group, line string) {
	l.Add(&report.Event{Lane: lane, Kind: kind, Text: line, Group: group}, line)
}

// RequestGroup records the request that opens exchange lane (its
// Mcp-Session-Id and Last-Event-ID headers, its body) and returns its
// group: the JSON-RPC request it carries, or for a GET resuming with
// Last-Event-ID, the group of the stream that id came from; "" if none.
func (l *Log) RequestGroup(lane, session, lastEventID, body string) string {
	return l.groups.request(lane, session, lastEventID, body)
}

// EventGroup returns the group of a message read on exchange lane (an SSE
// event's id and data, or a body): the request it names, else its
// stream's.
func (l *Log) EventGroup(lane, id, data string) string { return l.groups.event(lane, id, data) }

// Add adds a line to the text log and ev, timed now, to the timeline;
// either may be left out (nil, "").
func (l *Log) Add(ev *report.Event, line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	at := time.Since(l.start).Seconds()
	switch {
	case ev == nil:
	case len(l.events) < report.MaxEvents && l.text+len(ev.Text) <= report.MaxTimelineText:
		l.text += len(ev.Text)
		e := *ev
		e.At = float64(time.Duration(at*1e9).Round(time.Millisecond)) / 1e9
		l.events = append(l.events, e)
	default:
		l.lost++
	}
	if line == "" {
		return
	}
	for _, line := range strings.Split(line, "\n") {
		line = fmt.Sprintf("%8.3fs  %s\n", at, line)
		if l.tail == nil && l.buf.Len()+len(line) <= maxExchangeHead {
			l.buf.WriteString(line)
			continue
		}
		l.tail = append(l.tail, line)
		l.tailSize += len(line)
		for l.tailSize > maxExchangeTail {
			l.tailSize -= len(l.tail[0])
			l.tail = l.tail[1:]
			l.dropped++
		}
	}
}

// String returns the log.
func (l *Log) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.buf.String()
	if l.dropped > 0 {
		s += fmt.Sprintf("... %d lines not kept\n", l.dropped)
	}
	return s + strings.Join(l.tail, "")
}

// Events returns the timeline; past report.MaxEvents a last note says how
// many events were not kept.
func (l *Log) Events() []report.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	evs := append([]report.Event(nil), l.events...)
	if l.lost > 0 {
		evs = append(evs, report.Event{At: evs[len(evs)-1].At, Kind: report.KindNote,
			Text: fmt.Sprintf("%d more events not kept", l.lost)})
	}
	return evs
}

// Clip shortens s to n bytes, marking the cut.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
