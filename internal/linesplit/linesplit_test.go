package linesplit

import (
	"bytes"
	"strings"
	"testing"
)

type line struct {
	text string
	cut  int
}

func collect(maxLine, maxTotal int) (*Writer, *[]line) {
	var got []line
	return &Writer{MaxLine: maxLine, MaxTotal: maxTotal, Line: func(s string, cut int) { got = append(got, line{s, cut}) }}, &got
}

// TestLongLineIsCut: a 50 MB line, written as a pipe delivers it, keeps
// MaxLine bytes and counts the rest; the buffer never grows past a bound;
// the next line arrives whole.
func TestLongLineIsCut(t *testing.T) {
	const size = 50 << 20
	w, got := collect(64<<10, 4<<20)
	chunk := bytes.Repeat([]byte{'x'}, 32<<10)
	for written := 0; written < size; written += len(chunk) {
		w.Write(chunk)
		if cap(w.partial) > 2*w.MaxLine {
			t.Fatalf("after %d bytes the line buffer holds %d bytes; want at most %d", written, cap(w.partial), 2*w.MaxLine)
		}
	}
	w.Write([]byte("\nnext\n"))
	if len(*got) != 2 {
		t.Fatalf("got %d lines, want 2", len(*got))
	}
	if l := (*got)[0]; len(l.text) != 64<<10 || l.cut != size-64<<10 {
		t.Errorf("the long line: kept %d bytes, cut %d; want %d and %d", len(l.text), l.cut, 64<<10, size-64<<10)
	}
	if l := (*got)[1]; l != (line{"next", 0}) {
		t.Errorf("the next line: %+v", l)
	}
}

// TestTotalIsBounded: past MaxTotal bytes lines are counted, not passed on.
func TestTotalIsBounded(t *testing.T) {
	w, got := collect(100, 1000)
	for range 50 {
		w.Write([]byte(strings.Repeat("y", 99) + "\n"))
	}
	w.Write([]byte("tail"))
	w.Flush()
	if len(*got) != 11 {
		t.Errorf("passed on %d lines, want 11 (until 1000 bytes were)", len(*got))
	}
	if n, b := w.Dropped(); n != 40 || b != 39*99+4 {
		t.Errorf("Dropped() = %d lines, %d bytes; want 40, %d", n, b, 39*99+4)
	}
}

// TestSplits: lines split across writes and several in one write.
func TestSplits(t *testing.T) {
	w, got := collect(100, 1000)
	w.Write([]byte("a"))
	w.Write([]byte("b\nc\r\n\nd"))
	w.Flush()
	want := []line{{"ab", 0}, {"c", 0}, {"", 0}, {"d", 0}}
	if len(*got) != len(want) {
		t.Fatalf("got %+v, want %+v", *got, want)
	}
	for i := range want {
		if (*got)[i] != want[i] {
			t.Errorf("line %d: %+v, want %+v", i, (*got)[i], want[i])
		}
	}
}
