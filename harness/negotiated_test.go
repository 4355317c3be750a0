package harness

import (
	"context"
	"errors"
	"io"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// TestMalformedVersionIsASetupError: a target that negotiates a version
// that is not a revision (invalid UTF-8, another shape) is a setup error
// (exit 2) naming what it sent, like any other malformed handshake, not a
// run of failed checks.
func TestMalformedVersionIsASetupError(t *testing.T) {
	for _, v := range []string{"2025-11-25\xff\xfe", "2025-11-25 ", "latest", "2025-1-25", ""} {
		srv := httptest.NewServer(&stubMCP{version: v})
		_, err := Run(context.Background(), Options{URL: srv.URL, NoProxy: true, Focus: "^SESS-ID-CHARS$"}, io.Discard, io.Discard)
		srv.Close()
		var se *SetupError
		if !errors.As(err, &se) || !strings.Contains(err.Error(), "protocolVersion") {
			t.Errorf("negotiated %q: Run = %v; want a setup error about the protocolVersion", v, err)
		}
	}
}

// TestPreStreamableVersionIsASetupError: a target that negotiates
// 2024-11-05 (the HTTP+SSE transport's revision), whatever it is offered,
// is not graded by the Streamable HTTP rules of 2025-03-26 and later: the
// run is a setup error (exit 2) saying so, with --protocol-version auto
// and with a revision named.
func TestPreStreamableVersionIsASetupError(t *testing.T) {
	srv := httptest.NewServer(&stubMCP{version: "2024-11-05"})
	defer srv.Close()
	for _, offered := range []string{"", "2025-11-25"} {
		_, err := Run(context.Background(), Options{URL: srv.URL, NoProxy: true, ProtocolVersion: offered, Focus: "^JSONRPC-NOTIFY-202$"}, io.Discard, io.Discard)
		var se *SetupError
		if !errors.As(err, &se) || !strings.Contains(err.Error(), "negotiated protocol 2024-11-05, older than 2025-03-26") {
			t.Errorf("--protocol-version %q: Run = %v; want a setup error saying 2024-11-05 is older than the oldest graded revision", offered, err)
		}
	}
}

// revision is the shape of a protocol revision.
var revision = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}$`)

// FuzzNegotiatedVersion: whatever an InitializeResult holds, reading its
// version never panics, and a version it accepts is valid UTF-8, a date
// shaped YYYY-MM-DD.
func FuzzNegotiatedVersion(f *testing.F) {
	for _, seed := range []string{
		`{"protocolVersion":"2025-11-25","capabilities":{}}`,
		"{\"protocolVersion\":\"2025-11-25\xff\xfe\"}",
		`{"protocolVersion":"2025-11-25\ufffd"}`,
		`{"protocolVersion":"2025-11-25\ud800"}`,
		`{"protocolVersion":"２０２５-11-25"}`,
		`{"protocolVersion":"2025-13-40"}`,
		`{"protocolVersion":20251125}`,
		`{"protocolVersion":null}`,
		`{}`, `[]`, `"2025-11-25"`, ``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, result []byte) {
		v, err := negotiatedVersion(result)
		if err != nil {
			if v != "" {
				t.Errorf("an error (%v) with a version %q", err, v)
			}
			return
		}
		if !utf8.ValidString(v) || !revision.MatchString(v) {
			t.Fatalf("accepted %q from %q", v, result)
		}
		if _, err := time.Parse(time.DateOnly, v); err != nil {
			t.Fatalf("accepted %q, not a date: %v", v, err)
		}
	})
}
