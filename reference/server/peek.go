package server

import (
	"bytes"
	"encoding/json"
	"errors"
)

// peek parses a POST body just enough to route it, bound batches and answer
// errors with the request's id: whether it is an initialize, its id, the
// messages of a batch, and how many calls (requests with an id) it
// carries. Batches are routed as ordinary requests; the go-sdk answers them
// per protocol version.
func peek(body []byte) (init bool, id json.RawMessage, batch []json.RawMessage, calls int, err error) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return false, nil, nil, 0, errors.New("empty body")
	}
	if body[0] == '[' {
		return peekBatch(body)
	}
	m, ok := scanMessage(body)
	if !ok {
		if m, err = decodeMessage(body); err != nil {
			return false, nil, nil, 0, err
		}
	}
	if m.isCall() {
		calls = 1
	}
	return m.init, m.id, nil, calls, nil
}

func peekBatch(body []byte) (init bool, id json.RawMessage, batch []json.RawMessage, calls int, err error) {
	var b []json.RawMessage
	if err := json.Unmarshal(body, &b); err != nil {
		return false, nil, nil, 0, err
	}
	for _, raw := range b {
		if m, err := decodeMessage(raw); err == nil && m.isCall() {
			calls++
		}
	}
	return false, nil, b, calls, nil
}

// peeked is what peek reads of a message.
type peeked struct {
	init  bool // its method is initialize
	named bool // it has a method
	id    json.RawMessage
}

func (m peeked) isCall() bool { return m.named && len(m.id) > 0 && string(m.id) != "null" }

// decodeMessage reads a message with encoding/json.
func decodeMessage(body []byte) (peeked, error) {
	var d struct {
		Method string          `json:"method"`
		ID     json.RawMessage `json:"id"`
	}
	err := json.Unmarshal(body, &d)
	return peeked{init: d.Method == "initialize", named: d.Method != "", id: d.ID}, err
}

// scanMessage reads a message as decodeMessage does (keys matched
// case-insensitively, the last of a repeated key winning, a null method
// leaving the method as it was), without encoding/json's dozen
// allocations per body: every POST is peeked before the go-sdk decodes it
// again. ok is false for what the scan leaves to json.Unmarshal: invalid
// JSON, anything but an object, an escaped key or method, a method that is
// neither a string nor null.
func scanMessage(body []byte) (m peeked, ok bool) {
	if len(body) == 0 || body[0] != '{' || !json.Valid(body) {
		return m, false
	}
	// body is valid JSON: every index below stays in range.
	i := skipSpace(body, 1)
	for body[i] != '}' {
		end, escaped := stringEnd(body, i)
		if escaped {
			return m, false
		}
		key := body[i+1 : end-1]
		i = skipSpace(body, skipSpace(body, end)+1) // past the colon
		vend := valueEnd(body, i)
		val := body[i:vend]
		switch {
		case foldEqual(key, "method"):
			switch val[0] {
			case '"':
				if bytes.IndexByte(val, '\\') >= 0 {
					return m, false
				}
				name := val[1 : len(val)-1]
				m.init, m.named = string(name) == "initialize", len(name) > 0
			case 'n': // null leaves it as it was
			default:
				return m, false
			}
		case foldEqual(key, "id"):
			m.id = val
		}
		i = skipSpace(body, vend)
		if body[i] == ',' {
			i = skipSpace(body, i+1)
		}
	}
	return m, true
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

// foldEqual reports whether key equals the lower-case ASCII name under
// ASCII case folding, which is all encoding/json's folding does for the
// letters of "method" and "id".
func foldEqual(key []byte, name string) bool {
	if len(key) != len(name) {
		return false
	}
	for i := range key {
		c := key[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != name[i] {
			return false
		}
	}
	return true
}
