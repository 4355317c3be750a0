package server

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"slices"
)

// unbuffered marks every SSE answer of the sessionless revision with
// X-Accel-Buffering: no, so a reverse proxy (nginx) passes each event on
// at once instead of holding the stream in its buffer.
type unbuffered struct{ http.ResponseWriter }

func (u unbuffered) WriteHeader(code int) {
	if h := u.Header(); isSSEType(h.Get("Content-Type")) {
		h.Set("X-Accel-Buffering", "no")
	}
	u.ResponseWriter.WriteHeader(code)
}

func (u unbuffered) Write(p []byte) (int, error) {
	if h := u.Header(); isSSEType(h.Get("Content-Type")) && h.Get("X-Accel-Buffering") == "" {
		h.Set("X-Accel-Buffering", "no") // an implicit 200
	}
	return u.ResponseWriter.Write(p)
}

// Unwrap exposes the real writer to http.ResponseController.
func (u unbuffered) Unwrap() http.ResponseWriter { return u.ResponseWriter }

var sseType = regexp.MustCompile(`^\s*text/event-stream\s*(;|$)`)

func isSSEType(ct string) bool { return sseType.MatchString(ct) }

// versionShaped matches a protocol version: a date.
var versionShaped = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)

// peekLimit bounds the body modernEra reads to find _meta.
const peekLimit = 64 << 10

// modernEra reports a POST of the sessionless era that names a protocol
// version the server does not speak: its header names a version after
// 2026-07-28 (every later revision is sessionless), or its body's _meta
// names its version, which no request with sessions carries. A request
// on a session is of the sessions' era. The body read stays readable.
func modernEra(r *http.Request) bool {
	v := r.Header.Get(headerProtocolVersion)
	if r.Method != http.MethodPost || v == "" || slices.Contains(legacyVersions, v) || r.Header.Get(headerSessionID) != "" {
		return false
	}
	if versionShaped.MatchString(v) && v > modernVersion {
		return true
	}
	head, _ := io.ReadAll(io.LimitReader(r.Body, peekLimit))
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(head), r.Body), r.Body}
	var m modernRequest
	if json.Unmarshal(head, &m) != nil {
		return false
	}
	_, ok := m.Params.Meta[metaVersion]
	return ok
}
