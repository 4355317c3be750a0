package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// checkID refuses a JSON-RPC id the server could not echo exactly. The Go
// SDK decodes a numeric id into a float64 and then an int64, so 2^53+1
// comes back as 2^53, 1.5 as 1 and a 30-digit integer as MinInt64 (see
// README, "Request ids"). A client matching its response by id would wait
// for ever; -32600 tells it what is wrong instead.
func checkID(raw json.RawMessage) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] == '"' || bytes.Equal(raw, []byte("null")) {
		return nil
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil {
		return nil // not a number: the SDK refuses it itself
	}
	if strconv.FormatInt(int64(f), 10) != string(raw) {
		return fmt.Errorf("id %.40s cannot be echoed exactly: use a string or an integer between -2^53 and 2^53", raw)
	}
	return nil
}

// checkIDs applies checkID to a message and to every message of a batch.
func checkIDs(id json.RawMessage, batch []json.RawMessage) error {
	if err := checkID(id); err != nil {
		return err
	}
	for _, raw := range batch {
		// The id as the go-sdk reads it (see peek).
		if m, err := scanMessage(bytes.TrimSpace(raw)); err == nil {
			if err := checkID(m.id); err != nil {
				return err
			}
		}
	}
	return nil
}
