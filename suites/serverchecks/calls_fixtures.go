package serverchecks

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/mcp-conform/mcp-conform/fixtures/servers"
	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/reference/server"
)

// A server as strict as the schema-validating SDKs: it breaks no check, but
// the harness passes against it only if it never sends null arguments.
func init() {
	servers.Register(servers.Fixture{
		Name: "rejects-null-arguments",
		About: "a tools/call whose params.arguments is null is answered -32603 \"expected record, received null\", " +
			"as a zod inputSchema in the TypeScript SDK answers it; {} or no arguments field is accepted. " +
			"It breaks nothing: every check must pass, which a harness that sends null cannot",
		Wrap: rejectsNullArguments,
	})
}

// zodNullArguments is zod's message for null where an object is wanted.
const zodNullArguments = "expected record, received null"

// rejectsNullArguments answers a tools/call with null arguments itself,
// with the error a schema-validating server gives; everything else,
// including a call with no arguments field, goes to the reference server.
func rejectsNullArguments(next http.Handler, _ server.Config) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if m := servers.PeekRPC(r); m.Method == "tools/call" && len(m.ID) > 0 && nullArguments(servers.PeekBody(r)) {
			writeRPC(w, wire.Message{JSONRPC: "2.0", ID: m.ID, Error: &wire.RPCError{Code: -32603, Message: zodNullArguments}})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// nullArguments reports a JSON-RPC message whose params.arguments is
// present and null.
func nullArguments(body []byte) bool {
	var m struct {
		Params struct {
			Arguments json.RawMessage `json:"arguments"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &m) != nil {
		return false
	}
	// Unmarshal leaves a RawMessage holding the literal null as "null";
	// a missing field leaves it nil.
	return bytes.Equal(bytes.TrimSpace(m.Params.Arguments), []byte("null"))
}
