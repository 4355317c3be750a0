package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// peek parses a POST body just enough to route it, bound batches and answer
// errors with the request's id: whether it is an initialize, its id, the
// messages of a batch, and how many calls (requests with an id) it
// carries. Batches are routed as ordinary requests; the go-sdk answers them
// per protocol version.
//
// It reads a message as the go-sdk does (jsonrpc.DecodeMessage: keys
// matched exactly, a "method" key makes a request even when null or
// empty), so that what the server vets (the id, whether it is a call or an
// initialize) is what the go-sdk then serves. A body the two could read
// differently is refused: a repeated member of the JSON-RPC envelope, or a
// key that differs from one only in case (encoding/json, which the
// server's own decoders use, would match it), is an errAmbiguous.
func peek(body []byte) (init bool, id json.RawMessage, batch []json.RawMessage, calls int, err error) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return false, nil, nil, 0, errors.New("empty body")
	}
	if body[0] == '[' {
		return peekBatch(body)
	}
	m, err := scanMessage(body)
	if err != nil {
		return false, nil, nil, 0, err
	}
	if m.isCall() {
		calls = 1
	}
	return m.isInit(), m.id, nil, calls, nil
}

func peekBatch(body []byte) (init bool, id json.RawMessage, batch []json.RawMessage, calls int, err error) {
	var b []json.RawMessage
	if err := json.Unmarshal(body, &b); err != nil {
		return false, nil, nil, 0, err
	}
	for i, raw := range b {
		m, err := scanMessage(bytes.TrimSpace(raw))
		if errors.Is(err, errAmbiguous) {
			return false, nil, nil, 0, fmt.Errorf("batch message %d: %w", i, err)
		}
		if err == nil && m.isCall() {
			calls++
		}
	}
	return false, nil, b, calls, nil
}

// errAmbiguous marks a message whose envelope the go-sdk and the server's
// own decoders could read differently; it is refused with -32600.
var errAmbiguous = errors.New("ambiguous JSON-RPC message")

// peeked is what peek reads of a message.
type peeked struct {
	method    string
	hasMethod bool // a "method" key: a request, whatever its value
	id        json.RawMessage
}

func (m peeked) isInit() bool { return m.hasMethod && m.method == "initialize" }

// isCall reports a request with an id, as the go-sdk's Request.IsCall.
func (m peeked) isCall() bool { return m.hasMethod && len(m.id) > 0 && string(m.id) != "null" }

// envelope are the members of a JSON-RPC message, as the go-sdk names them.
var envelope = [...]string{"jsonrpc", "id", "method", "params", "result", "error"}

// scanMessage reads a single message without encoding/json's dozen
// allocations per body (every POST is peeked before the go-sdk decodes it
// again); only escaped strings are decoded with it.
func scanMessage(body []byte) (m peeked, err error) {
	if len(body) == 0 || !json.Valid(body) {
		var v any
		if err := json.Unmarshal(body, &v); err != nil {
			return m, err
		}
		return m, errors.New("invalid JSON")
	}
	if body[0] != '{' {
		return m, errors.New("a JSON-RPC message must be a JSON object")
	}
	var seen [len(envelope)]bool
	// body is valid JSON: every index below stays in range.
	i := skipSpace(body, 1)
	for body[i] != '}' {
		end, _ := stringEnd(body, i)
		key, err := stringValue(body[i:end])
		if err != nil {
			return m, err
		}
		i = skipSpace(body, skipSpace(body, end)+1) // past the colon
		vend := valueEnd(body, i)
		val := body[i:vend]
		for k, name := range envelope {
			if string(key) == name {
				if seen[k] {
					return m, fmt.Errorf("%w: member %q appears twice", errAmbiguous, name)
				}
				seen[k] = true
			} else if bytes.EqualFold(key, []byte(name)) {
				return m, fmt.Errorf("%w: key %q differs from %q only in case", errAmbiguous, key, name)
			}
		}
		switch string(key) {
		case "method":
			if m.method, err = methodValue(val); err != nil {
				return m, err
			}
			m.hasMethod = true
		case "id":
			m.id = val
		}
		i = skipSpace(body, vend)
		if body[i] == ',' {
			i = skipSpace(body, i+1)
		}
	}
	return m, nil
}

// stringValue decodes the JSON string s (quotes included); only one with
// an escape or a byte beyond ASCII goes through encoding/json, which
// replaces invalid UTF-8 as the go-sdk's decoder does.
func stringValue(s []byte) ([]byte, error) {
	inner := s[1 : len(s)-1]
	if bytes.IndexByte(inner, '\\') < 0 && ascii(inner) {
		return inner, nil
	}
	var v string
	if err := json.Unmarshal(s, &v); err != nil {
		return nil, err
	}
	return []byte(v), nil
}

func ascii(b []byte) bool {
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// methodValue is a method member's value: a string, or null (the go-sdk
// reads it as "").
func methodValue(val []byte) (string, error) {
	switch val[0] {
	case '"':
		name, err := stringValue(val)
		return string(name), err
	case 'n':
		return "", nil
	}
	return "", fmt.Errorf("method must be a string, not %.20s", val)
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// stringEnd returns the index just past the string starting at b[i] ('"'),
// and whether it holds an escape.
func stringEnd(b []byte, i int) (end int, escaped bool) {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			escaped = true
			j++
		case '"':
			return j + 1, escaped
		}
	}
	return len(b), escaped
}

// valueEnd returns the index just past the value starting at b[i].
func valueEnd(b []byte, i int) int {
	switch b[i] {
	case '"':
		end, _ := stringEnd(b, i)
		return end
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end, _ := stringEnd(b, j)
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return len(b)
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\t' && b[j] != '\n' && b[j] != '\r' {
		j++
	}
	return j
}
