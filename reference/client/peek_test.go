package client_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
)

// peekMethod reads a POST body's JSON-RPC method (and tool name for
// tools/call) and returns a fresh body with the same bytes.
func peekMethod(r *http.Request) (string, io.ReadCloser) {
	data, _ := io.ReadAll(r.Body)
	r.Body.Close()
	var m struct {
		Method string `json:"method"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	json.Unmarshal(data, &m)
	name := m.Method
	if m.Method == "tools/call" {
		name += " " + m.Params.Name
	}
	return name, io.NopCloser(bytes.NewReader(data))
}
