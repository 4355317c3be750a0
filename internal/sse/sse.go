// Package sse reads Server-Sent Events as the MCP Streamable HTTP transport
// uses them: event, id, data and retry fields, comments ignored.
package sse

import (
	"bufio"
	"errors"
	"io"
	"strconv"
	"strings"
	"time"
)

// MaxEventSize bounds one event, so a hostile stream cannot exhaust memory.
const MaxEventSize = 16 << 20

// Event is one dispatched SSE event.
type Event struct {
	Name  string // "event" field; "" means "message"
	ID    string
	HasID bool // the event carried an id field (possibly empty)
	Data  string
	// HasData: the event carried a data field (possibly empty).
	HasData bool
	// Retry is the reconnection delay from a "retry" field, 0 if none.
	Retry    time.Duration
	HasRetry bool
}

// RetryOnly reports whether the event is a bare reconnection delay: a
// retry field and nothing else, which sets the client's delay and
// dispatches nothing, so it is not the stream's first message or event
// id.
func (e Event) RetryOnly() bool {
	return e.HasRetry && !e.HasID && !e.HasData && e.Name == ""
}

// Reader reads events from a stream.
type Reader struct {
	s *bufio.Scanner
	// Comments counts comment lines (keep-alives) seen so far.
	Comments int
}

// NewReader returns a Reader on r.
func NewReader(r io.Reader) *Reader {
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 0, 4<<10), MaxEventSize) // grows as events need: thousands of idle streams stay small
	s.Split(scanLines)
	return &Reader{s: s}
}

// ErrTooLarge reports an event beyond MaxEventSize.
var ErrTooLarge = errors.New("sse: event too large")

// Next returns the next event. At the end of the stream it returns io.EOF;
// a partial event at the end is discarded, as the SSE spec says.
func (r *Reader) Next() (Event, error) {
	var ev Event
	var data []string
	has := false
	for r.s.Scan() {
		line := r.s.Text()
		if line == "" {
			if !has {
				continue
			}
			ev.Data = strings.Join(data, "\n")
			return ev, nil
		}
		if strings.HasPrefix(line, ":") {
			r.Comments++
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "event":
			ev.Name, has = value, true
		case "data":
			data, has, ev.HasData = append(data, value), true, true
		case "id":
			if !strings.Contains(value, "\x00") {
				ev.ID, ev.HasID, has = value, true, true
			}
		case "retry":
			if ms, err := strconv.Atoi(value); err == nil && ms >= 0 {
				ev.Retry, ev.HasRetry, has = time.Duration(ms)*time.Millisecond, true, true
			}
		}
	}
	if err := r.s.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return Event{}, ErrTooLarge
		}
		return Event{}, err
	}
	return Event{}, io.EOF
}

// scanLines splits on \n, \r\n or a lone \r, as SSE allows all three.
func scanLines(data []byte, atEOF bool) (int, []byte, error) {
	for i, b := range data {
		switch b {
		case '\n':
			return i + 1, data[:i], nil
		case '\r':
			if i+1 < len(data) {
				if data[i+1] == '\n' {
					return i + 2, data[:i], nil
				}
				return i + 1, data[:i], nil
			}
			if atEOF {
				return i + 1, data[:i], nil
			}
			return 0, nil, nil // need one more byte to tell \r from \r\n
		}
	}
	if atEOF && len(data) > 0 {
		return len(data), data, nil
	}
	return 0, nil, nil
}
