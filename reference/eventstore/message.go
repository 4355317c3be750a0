package eventstore

import (
	"bytes"
	"encoding/json"
	"strings"
)

// notePrefix starts every notification the go-sdk writes (it encodes
// "jsonrpc", "id", "method" in this order): one with it has a top-level
// method, no decoding needed.
var notePrefix = []byte(`{"jsonrpc":"2.0","method":`)

// idPrefix starts every response and request the go-sdk writes; "result",
// "error" or "method" follows the id.
var idPrefix = []byte(`{"jsonrpc":"2.0","id":`)

// IsResponse reports whether data is a JSON-RPC response: it has a result
// or an error, and no method. What the go-sdk writes is told by its first
// keys, without decoding (every message is stored, and a decoder allocates
// dozens of times per message); anything else is decoded.
func IsResponse(data []byte) bool {
	if len(data) == 0 {
		return false // a priming event
	}
	if bytes.HasPrefix(data, notePrefix) {
		return false // a notification, most of what a stream carries
	}
	if rest, ok := bytes.CutPrefix(data, idPrefix); ok {
		if n := idLen(rest); n > 0 {
			switch after := rest[n:]; {
			case bytes.HasPrefix(after, []byte(`,"result":`)), bytes.HasPrefix(after, []byte(`,"error":`)):
				return true
			case bytes.HasPrefix(after, []byte(`,"method":`)):
				return false
			}
		}
	}
	return decodedIsResponse(data)
}

// idLen is the length of the JSON string or number b starts with, 0 when
// it starts with neither.
func idLen(b []byte) int {
	if len(b) > 0 && b[0] == '"' {
		for i := 1; i < len(b); i++ {
			switch b[i] {
			case '\\':
				i++
			case '"':
				return i + 1
			}
		}
		return 0
	}
	n := 0
	for n < len(b) && strings.IndexByte("+-.0123456789eE", b[n]) >= 0 {
		n++
	}
	return n
}

// decodedIsResponse is IsResponse by decoding: only the top-level keys are
// read, up to the first that decides.
func decodedIsResponse(data []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return false
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return false
		}
		switch k {
		case "method":
			return false
		case "result", "error":
			return true
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return false
		}
	}
	return false
}
