package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
)

// CodeMethodNotFound and CodeInternalError are the JSON-RPC codes for an
// unknown method and a server fault.
const (
	CodeMethodNotFound = -32601
	CodeInternalError  = -32603
)

// jsonErrors turns the go-sdk's plain-text error answers (http.Error: an
// unknown method, a batch on a revision without batches, a missing Accept,
// a stream conflict) into JSON-RPC error bodies, as every other error of
// the server is. It holds such an answer back until finish, so the caller
// may also drop it and try again.
type jsonErrors struct {
	http.ResponseWriter
	id        json.RawMessage // the request's id, if it had one
	status    int             // a held-back error status, 0 if none
	body      bytes.Buffer
	committed bool // a status line went to the writer below
	answered  bool // a response to id went to the writer below
}

func (j *jsonErrors) WriteHeader(code int) {
	if j.status != 0 {
		return
	}
	if code >= 400 && strings.HasPrefix(j.Header().Get("Content-Type"), "text/plain") {
		j.status = code
		return
	}
	j.committed = true
	j.ResponseWriter.WriteHeader(code)
}

func (j *jsonErrors) Write(p []byte) (int, error) {
	if j.status != 0 {
		return j.body.Write(p)
	}
	j.committed = true
	n, err := j.ResponseWriter.Write(p)
	if err == nil && !j.answered && len(j.id) > 0 {
		j.answered = isResponseTo(p, j.id)
	}
	return n, err
}

// isResponseTo reports whether p, a write of the go-sdk's (a JSON body or
// an SSE event, each written whole), holds the response to id: an "id"
// of the same value, beside a result or an error. Values, not bytes: the
// go-sdk writes a string id unescaped ("a<b" for "a\u003cb") and a
// number as an integer.
func isResponseTo(p []byte, id json.RawMessage) bool {
	want, ok := idKey(id)
	if !ok || !bytes.Contains(p, []byte(`"result":`)) && !bytes.Contains(p, []byte(`"error":`)) {
		return false
	}
	for i := 0; ; {
		j := bytes.Index(p[i:], []byte(`"id":`))
		if j < 0 {
			return false
		}
		start := skipSpace(p, i+j+5)
		if start == len(p) {
			return false
		}
		end := valueEnd(p, start)
		if got, ok := idKey(p[start:end]); ok && got == want {
			return true
		}
		i = end
	}
}

// idKey is the value of a JSON-RPC id, a string or a number, however it
// is spelled; false for anything else. An integer is kept exact: ids
// past 2^53 that a float64 would merge stay apart (the id guard tells
// them apart too).
func idKey(raw []byte) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return "", false
	}
	switch v := v.(type) {
	case string:
		return "s" + v, true
	case json.Number:
		if i, err := v.Int64(); err == nil {
			return "n" + strconv.FormatInt(i, 10), true
		}
		if f, err := v.Float64(); err == nil {
			if i := int64(f); float64(i) == f && f > -1<<53 && f < 1<<53 {
				return "n" + strconv.FormatInt(i, 10), true // 1.0 is 1
			}
			return "n" + strconv.FormatFloat(f, 'g', -1, 64), true
		}
	}
	return "", false
}

// Unwrap exposes the real writer to http.ResponseController.
func (j *jsonErrors) Unwrap() http.ResponseWriter { return j.ResponseWriter }

// reset drops a held-back answer.
func (j *jsonErrors) reset() {
	j.status = 0
	j.body.Reset()
}

// finish writes a held-back answer as a JSON-RPC error with the same status.
func (j *jsonErrors) finish() {
	if j.status == 0 {
		return
	}
	msg := strings.TrimSpace(j.body.String())
	code := CodeInvalidRequest
	switch {
	case strings.Contains(msg, "JSON RPC not handled"):
		code, msg = CodeMethodNotFound, "Method not found: "+msg
	case j.status >= 500:
		code = CodeInternalError
	}
	j.Header().Del("X-Content-Type-Options")
	writeRPCErrorID(j.ResponseWriter, j.status, code, http.StatusText(j.status)+": "+msg, nil, j.id)
	j.reset()
}
