package inert

import (
	"bytes"
	"io"
	"strconv"
	"sync"
)

// MaxLine bounds one line the Writer passes on: a longer one is cut
// (Bound), so that no single quote floods a terminal or a step log.
const MaxLine = 16 << 10

// Writer passes what is written to it on to its destination a line at a
// time, each line rendered by Escape and bounded by MaxLine: the console
// of a run against a target whose text it prints. A line is passed on
// when its newline comes, or by Flush; of a line that grows past 4 times
// MaxLine before its newline, the rest up to the newline is dropped, with
// a note. It is safe for concurrent use.
type Writer struct {
	mu      sync.Mutex
	w       io.Writer
	partial []byte
	// dropped counts the bytes of the line being gathered that were not
	// kept (past 4 times MaxLine).
	dropped int
}

// NewWriter returns a Writer onto w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write takes p whole; it reports the destination's error, if any.
func (iw *Writer) Write(p []byte) (int, error) {
	iw.mu.Lock()
	defer iw.mu.Unlock()
	n := len(p)
	var err error
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			iw.gather(p)
			break
		}
		iw.gather(p[:i])
		if e := iw.emit("\n"); err == nil {
			err = e
		}
		p = p[i+1:]
	}
	return n, err
}

// gather adds p to the line being gathered, keeping enough of it that
// Bound has a beginning and an end to show.
func (iw *Writer) gather(p []byte) {
	room := 4*MaxLine - len(iw.partial)
	if len(p) <= room {
		iw.partial = append(iw.partial, p...)
		return
	}
	iw.partial = append(iw.partial, p[:max(room, 0)]...)
	iw.dropped += len(p) - max(room, 0)
}

// emit passes the gathered line on, rendered, followed by end.
func (iw *Writer) emit(end string) error {
	line := Escape(string(iw.partial))
	if iw.dropped > 0 {
		line += " …[the line went on for " + strconv.Itoa(iw.dropped) + " more bytes]"
	}
	iw.partial, iw.dropped = iw.partial[:0], 0
	_, err := io.WriteString(iw.w, Bound(line, MaxLine)+end)
	return err
}

// Flush passes on a line whose newline has not come yet.
func (iw *Writer) Flush() error {
	iw.mu.Lock()
	defer iw.mu.Unlock()
	if len(iw.partial) == 0 && iw.dropped == 0 {
		return nil
	}
	return iw.emit("")
}
