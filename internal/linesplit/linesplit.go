// Package linesplit splits a child process's output into lines while
// keeping a bounded amount of it: a process that prints a line of 100 MB,
// or prints without end, costs the harness a bounded amount of memory, and
// what was not kept is counted so that the log can say so.
package linesplit

import (
	"bytes"
	"sync"
)

// Writer splits what is written to it into lines for Line. It keeps at
// most MaxLine bytes of a line (the rest is counted as cut) and passes on
// lines until MaxTotal bytes have been; later lines are only counted
// (Dropped). Its methods may be called from several goroutines.
type Writer struct {
	MaxLine, MaxTotal int
	// Line gets each line, without its "\n" or "\r\n", and how many of its
	// bytes were cut.
	Line func(text string, cut int)

	mu      sync.Mutex
	partial []byte
	cut     int // bytes of the current line not kept
	passed  int // bytes passed to Line
	dropped int // lines not passed on
	lost    int64
}

// Write takes p, passing on each line it completes.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		chunk := p
		if i >= 0 {
			chunk = p[:i]
		}
		w.take(chunk)
		if i < 0 {
			break
		}
		w.end()
		p = p[i+1:]
	}
	return n, nil
}

// take adds b to the current line, up to MaxLine bytes.
func (w *Writer) take(b []byte) {
	room := max(0, w.MaxLine-len(w.partial))
	if len(b) > room {
		w.cut += len(b) - room
		b = b[:room]
	}
	w.partial = append(w.partial, b...)
}

// end passes on the current line, or counts it past MaxTotal.
func (w *Writer) end() {
	text := bytes.TrimRight(w.partial, "\r")
	if w.passed >= w.MaxTotal {
		w.dropped++
		w.lost += int64(len(text) + w.cut)
	} else {
		w.passed += len(text)
		w.Line(string(text), w.cut)
	}
	w.partial, w.cut = w.partial[:0], 0
}

// Flush passes on a last line that has no "\n".
func (w *Writer) Flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.partial) > 0 || w.cut > 0 {
		w.end()
	}
}

// Dropped is how many lines, of how many bytes, were not passed on
// because MaxTotal bytes had been.
func (w *Writer) Dropped() (lines int, bytes int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.dropped, w.lost
}
