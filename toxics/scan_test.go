package toxics

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// In the test streams, "«" marks where an event ends and "»" where the
// framing that merely finishes it ends; "»" is left out when nothing
// follows the event that way.
const endMark, tailMark = "«", "»"

// chunk frames s as one HTTP chunk, not counting marks in its size.
func chunk(s string) string {
	size := len(strings.NewReplacer(endMark, "", tailMark, "").Replace(s))
	return fmt.Sprintf("%x\r\n%s\r\n", size, s)
}

// response is a response head with a Content-Length body.
func response(contentType, body string) string {
	size := len(strings.NewReplacer(endMark, "", tailMark, "").Replace(body))
	return fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n%s", contentType, size, body)
}

// parseMarks strips the marks and returns, for each event, the offsets
// where it ends and where its tail ends.
func parseMarks(t *testing.T, marked string) (raw []byte, ends, tails []int) {
	t.Helper()
	for i := 0; i < len(marked); {
		switch {
		case strings.HasPrefix(marked[i:], endMark):
			ends = append(ends, len(raw))
			tails = append(tails, len(raw))
			i += len(endMark)
		case strings.HasPrefix(marked[i:], tailMark):
			tails[len(tails)-1] = len(raw)
			i += len(tailMark)
		default:
			raw = append(raw, marked[i])
			i++
		}
	}
	return raw, ends, tails
}

// scanStream is a connection's server-to-client bytes with every kind of
// framing the scanner has to follow.
var scanStream = strings.Join([]string{
	"HTTP/1.1 100 Continue\r\n\r\n",
	response("text/plain", "data: not an event\n\n"),
	"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream; charset=utf-8\r\nTransfer-Encoding: chunked\r\n\r\n",
	chunk(": hello\n\n"),
	chunk("id: 1\ndata: one\n\n«") + "»",
	chunk("data: two\r\n\r«\n") + "»",
	chunk("event: x\r\nda"), chunk("ta: three\r\n"), chunk("\r«\n") + "»",
	chunk(": a\n: b\n\n"),
	chunk("data: four\r\r«data: five\r\r«") + "»",
	chunk("x\n\n«id: 6\n\n«: trailing comment\n\n"),
	"0\r\nTrailer: y\r\n\r\n",
	"HTTP/1.1 204 No Content\r\n\r\n",
	response("application/json", `{"data": "x\n\n"}`),
	"\r\n", // a stray line end between responses
	response("TEXT/EVENT-STREAM", "data: seven\n\n«retry: 10\n\n«"),
	"HTTP/1.0 200 OK\r\nContent-Type: text/event-stream\r\n\r\n",
	"data: eight\r\n\r«\n»: ka\n\ndata: nine\n\n«",
}, "")

func TestScannerWhole(t *testing.T) {
	raw, ends, tails := parseMarks(t, scanStream)
	var s eventScanner
	if n, events := s.feed(raw, 0); n != len(raw) || events != len(ends) {
		t.Fatalf("feed without limit: %d bytes, %d events; want %d, %d", n, events, len(raw), len(ends))
	}
	for k := 1; k <= len(ends); k++ {
		var s eventScanner
		n, events := s.feed(raw, k)
		if events != k || n != tails[k-1] {
			t.Errorf("limit %d: stopped at %d after %d events; want %d after %d (%q)", k, n, events, tails[k-1], k, raw[max(0, n-12):n])
		}
	}
}

// TestScannerSplits feeds the stream in pieces, as chunks reach the toxic:
// at every split point, and byte by byte, and at random.
func TestScannerSplits(t *testing.T) {
	raw, ends, tails := parseMarks(t, scanStream)
	check := func(what string, pieces [][]byte) {
		t.Helper()
		for k := 1; k <= len(ends); k++ {
			var s eventScanner
			off, seen, cut := 0, 0, -1
			for _, p := range pieces {
				n, events := s.feed(p, k-seen)
				seen += events
				if seen == k {
					cut = off + n
					break
				}
				off += len(p)
			}
			if cut < ends[k-1] || cut > tails[k-1] {
				t.Fatalf("%s, limit %d: cut at %d, want %d..%d", what, k, cut, ends[k-1], tails[k-1])
			}
		}
	}
	for i := 0; i <= len(raw); i++ {
		check(fmt.Sprintf("split at %d", i), [][]byte{raw[:i], raw[i:]})
	}
	bytewise := make([][]byte, len(raw))
	for i := range raw {
		bytewise[i] = raw[i : i+1]
	}
	check("byte by byte", bytewise)
	rng := rand.New(rand.NewSource(1))
	for range 200 {
		var pieces [][]byte
		for rest := raw; len(rest) > 0; {
			n := min(len(rest), 1+rng.Intn(40))
			pieces, rest = append(pieces, rest[:n]), rest[n:]
		}
		check("random pieces", pieces)
	}
}

func TestScannerGivesUp(t *testing.T) {
	for name, in := range map[string]string{
		"not HTTP":            "SSH-2.0-OpenSSH\r\n\r\ndata: x\n\n",
		"switching protocols": "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\ndata: x\n\n",
		"bad chunk size":      "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\ndata: x\n\n",
		"huge head":           "HTTP/1.1 200 OK\r\nX: " + strings.Repeat("a", maxHeadBytes) + "\r\n\r\ndata: x\n\n",
	} {
		var s eventScanner
		if n, events := s.feed([]byte(in), 0); n != len(in) || events != 0 {
			t.Errorf("%s: %d bytes, %d events; want all bytes, no event", name, n, events)
		}
	}
}
