package harness

import (
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/mcp-conform/mcp-conform/internal/wire"
)

// negotiatedVersion returns the protocolVersion of an InitializeResult, or
// an error that says why it is none: missing, not a string, not valid
// UTF-8, or not a revision (YYYY-MM-DD). Every later check compares it and
// sends it in a header, so a malformed one is a setup error.
func negotiatedVersion(result json.RawMessage) (string, error) {
	var res struct {
		ProtocolVersion json.RawMessage `json:"protocolVersion"`
	}
	if err := json.Unmarshal(result, &res); err != nil || len(res.ProtocolVersion) == 0 {
		return "", errors.New("the result is not an InitializeResult (no protocolVersion)")
	}
	// The decoder turns invalid UTF-8 into U+FFFD: look at the raw bytes.
	if !utf8.Valid(res.ProtocolVersion) {
		return "", fmt.Errorf("the negotiated protocolVersion %s is not valid UTF-8", quoteRaw(res.ProtocolVersion))
	}
	var v string
	if err := json.Unmarshal(res.ProtocolVersion, &v); err != nil {
		return "", fmt.Errorf("the negotiated protocolVersion %s is not a string", quoteRaw(res.ProtocolVersion))
	}
	if _, err := wire.ParseRevision(v); err != nil {
		return "", fmt.Errorf("the negotiated protocolVersion %w", err)
	}
	return v, nil
}

// quoteRaw shows a raw JSON value in a message, invalid bytes escaped and
// long values cut.
func quoteRaw(raw json.RawMessage) string {
	if n := len(raw); n >= 2 && raw[0] == '"' && raw[n-1] == '"' {
		raw = raw[1 : n-1] // a string: its contents, quoted once
	}
	s := fmt.Sprintf("%q", raw)
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return s
}
