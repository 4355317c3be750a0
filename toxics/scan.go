package toxics

import (
	"bytes"
	"strconv"
)

// Limits that keep a malformed or hostile response stream from growing the
// scanner's buffers; past them the scanner stops counting for that connection.
const (
	maxHeadBytes = 64 << 10
	maxLineBytes = 4 << 10
)

// HTTP/1.x framing states of a response stream.
const (
	stHead      = iota // status line and header fields
	stChunkSize        // chunk-size line of a chunked body
	stChunkData        // chunk data
	stChunkEnd         // CRLF after chunk data
	stTrailer          // trailer fields after the last chunk
	stBody             // Content-Length body
	stBodyToEOF        // body delimited by the end of the connection
	stLost             // framing not understood (101, TLS, garbage): count nothing
)

// SSE line kinds, decided by the first byte of a line.
const (
	lineEmpty = iota
	lineComment
	lineField
)

// eventScanner follows the server-to-client bytes of an HTTP/1.x connection,
// across any chunk boundaries, and counts complete SSE events in
// text/event-stream bodies. CutAfter needs it to find the byte right after
// the n-th event: raw bytes also hold status lines, header fields and
// chunked framing, which are not SSE. An event is a block ending in a blank
// line with at least one non-comment field; keep-alive comment blocks do not
// count. Lines may end in "\r\n", "\n" or a lone "\r".
//
// Responses to HEAD requests are not recognised (the scanner sees only one
// direction), so a HEAD with a Content-Length desynchronises the count.
type eventScanner struct {
	state  int
	line   []byte // header block, chunk-size line or trailer line
	remain int64  // bytes left in the chunk or Content-Length body
	sse    bool   // the current body is text/event-stream

	// SSE state of the current body.
	afterCR  bool // the last body byte was '\r'; a '\n' next belongs to it
	lineKind int  // kind of the current line
	hasField bool // the current block has a non-comment field
}

// feed scans data. With limit > 0 it stops right after the limit-th event
// completed in data, and also takes in the bytes of data that merely finish
// that event's framing (the '\n' of a "\r\n" ending, a chunk's CRLF).
// It returns the number of bytes consumed and the events completed in them.
func (s *eventScanner) feed(data []byte, limit int) (n, events int) {
	for n < len(data) {
		next := data[n:]
		if limit > 0 && events == limit {
			if !s.isTail(data[n]) {
				break
			}
			next = next[:1]
		}
		k, ev := s.step(next)
		n += k
		if ev {
			events++
		}
	}
	return n, events
}

// isTail reports whether b only finishes the framing of the event that has
// just completed, so forwarding it adds no content.
func (s *eventScanner) isTail(b byte) bool {
	switch s.state {
	case stChunkEnd:
		return true
	case stChunkData, stBody, stBodyToEOF:
		return s.afterCR && b == '\n'
	}
	return false
}

// step consumes at least one byte of data (which is not empty) and reports
// how many, and whether an event completed.
func (s *eventScanner) step(data []byte) (int, bool) {
	switch s.state {
	case stHead:
		return s.stepHead(data), false
	case stChunkSize, stTrailer:
		return s.stepLine(data), false
	case stChunkEnd:
		switch data[0] {
		case '\r':
		case '\n':
			s.state = stChunkSize
		default:
			s.state = stLost
		}
		return 1, false
	case stChunkData, stBody:
		k, ev := s.body(data, s.remain)
		s.remain -= int64(k)
		if s.remain == 0 {
			if s.state == stChunkData {
				s.state = stChunkEnd
			} else {
				s.state = stHead
			}
		}
		return k, ev
	case stBodyToEOF:
		return s.body(data, int64(len(data)))
	default: // stLost
		return len(data), false
	}
}

// body consumes body bytes, at most max of them, stopping after a completed
// event so that feed can honour its limit.
func (s *eventScanner) body(data []byte, max int64) (int, bool) {
	if int64(len(data)) > max {
		data = data[:max]
	}
	if !s.sse {
		return len(data), false
	}
	for i, b := range data {
		if s.sseByte(b) {
			return i + 1, true
		}
	}
	return len(data), false
}

// sseByte advances the SSE line state by one body byte and reports whether
// it completed an event.
func (s *eventScanner) sseByte(b byte) bool {
	if s.afterCR {
		s.afterCR = false
		if b == '\n' {
			return false
		}
	}
	switch b {
	case '\r', '\n':
		s.afterCR = b == '\r'
		kind := s.lineKind
		s.lineKind = lineEmpty
		switch kind {
		case lineField:
			s.hasField = true
		case lineEmpty:
			if s.hasField {
				s.hasField = false
				return true
			}
		}
	default:
		if s.lineKind == lineEmpty {
			if b == ':' {
				s.lineKind = lineComment
			} else {
				s.lineKind = lineField
			}
		}
	}
	return false
}

// stepHead collects the status line and header fields up to the blank line.
func (s *eventScanner) stepHead(data []byte) int {
	for i, b := range data {
		if len(s.line) == 0 && (b == '\r' || b == '\n') {
			continue // stray line ends between responses
		}
		s.line = append(s.line, b)
		if b != '\n' {
			continue
		}
		if bytes.HasSuffix(s.line, []byte("\r\n\r\n")) || bytes.HasSuffix(s.line, []byte("\n\n")) {
			s.startBody(s.line)
			s.line = s.line[:0]
			return i + 1
		}
		if len(s.line) > maxHeadBytes {
			s.lose()
			return i + 1
		}
	}
	if len(s.line) > maxHeadBytes {
		s.lose()
	}
	return len(data)
}

// stepLine collects one chunk-size or trailer line.
func (s *eventScanner) stepLine(data []byte) int {
	i := bytes.IndexByte(data, '\n')
	if i < 0 {
		s.line = append(s.line, data...)
		if len(s.line) > maxLineBytes {
			s.lose()
		}
		return len(data)
	}
	s.line = append(s.line, data[:i]...)
	line := bytes.TrimRight(s.line, "\r")
	s.line = s.line[:0]
	if s.state == stTrailer {
		if len(line) == 0 {
			s.state = stHead
		}
		return i + 1
	}
	if j := bytes.IndexByte(line, ';'); j >= 0 {
		line = line[:j]
	}
	size, err := strconv.ParseInt(string(bytes.TrimSpace(line)), 16, 64)
	switch {
	case err != nil || size < 0:
		s.lose()
	case size == 0:
		s.state = stTrailer
	default:
		s.state, s.remain = stChunkData, size
	}
	return i + 1
}

// startBody reads a complete header block and picks the body framing.
func (s *eventScanner) startBody(head []byte) {
	lines := bytes.Split(bytes.ReplaceAll(head, []byte("\r\n"), []byte("\n")), []byte("\n"))
	status := string(lines[0])
	if len(status) < len("HTTP/1.1 200") || status[:5] != "HTTP/" {
		s.lose()
		return
	}
	_, codeText, _ := bytes.Cut(lines[0], []byte(" "))
	code, err := strconv.Atoi(string(bytes.TrimSpace(codeText[:min(3, len(codeText))])))
	if err != nil {
		s.lose()
		return
	}
	var contentType []byte
	length := int64(-1)
	chunked := false
	for _, l := range lines[1:] {
		name, value, ok := bytes.Cut(l, []byte(":"))
		if !ok {
			continue
		}
		value = bytes.TrimSpace(value)
		switch {
		case bytes.EqualFold(name, []byte("Content-Type")):
			contentType = value
		case bytes.EqualFold(name, []byte("Content-Length")):
			if n, err := strconv.ParseInt(string(value), 10, 64); err == nil && n >= 0 {
				length = n
			}
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			codings := bytes.Split(value, []byte(","))
			chunked = bytes.EqualFold(bytes.TrimSpace(codings[len(codings)-1]), []byte("chunked"))
		}
	}
	mediaType, _, _ := bytes.Cut(contentType, []byte(";"))
	s.sse = bytes.EqualFold(bytes.TrimSpace(mediaType), []byte("text/event-stream"))
	s.afterCR, s.lineKind, s.hasField = false, lineEmpty, false
	switch {
	case code == 101:
		s.lose() // the connection now speaks another protocol
	case code < 200 || code == 204 || code == 304:
		s.state = stHead
	case chunked:
		s.state = stChunkSize
	case length == 0:
		s.state = stHead
	case length > 0:
		s.state, s.remain = stBody, length
	default:
		s.state = stBodyToEOF
	}
}

// lose gives up on the connection's framing: nothing more is counted.
func (s *eventScanner) lose() {
	s.state = stLost
	s.line = nil
}
