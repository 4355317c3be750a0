package serverchecks

import (
	"encoding/json"
	"testing"

	"github.com/mcp-conform/mcp-conform/internal/wire"
)

// TestEndOfListen: LISTEN-GRACEFUL-CLOSE grades the completion result
// whether or not notifications/cancelled for the listen comes with it,
// before or after; a cancellation alone, or one for another request, is
// still the stream's end.
func TestEndOfListen(t *testing.T) {
	t.Parallel()
	const id = `"graceful-1"`
	ack := wire.Message{JSONRPC: "2.0", Method: "notifications/subscriptions/acknowledged", Params: json.RawMessage(`{}`)}
	done := wire.Message{JSONRPC: "2.0", ID: json.RawMessage(id), Result: json.RawMessage(`{"resultType":"complete"}`)}
	cancelled := func(of string) wire.Message {
		return wire.Message{JSONRPC: "2.0", Method: "notifications/cancelled", Params: json.RawMessage(`{"requestId": ` + of + `, "reason": "shutdown"}`)}
	}
	for _, tc := range []struct {
		name     string
		msgs     []wire.Message
		response bool
		method   string
	}{
		{"result alone", []wire.Message{ack, done}, true, ""},
		{"result, then cancelled", []wire.Message{ack, done, cancelled(id)}, true, ""},
		{"cancelled, then result", []wire.Message{ack, cancelled(id), done}, true, ""},
		{"cancelled alone", []wire.Message{ack, cancelled(id)}, false, "notifications/subscriptions/acknowledged"},
		{"result, then cancelled for another request", []wire.Message{ack, done, cancelled(`"other"`)}, false, "notifications/cancelled"},
		{"acknowledgement alone", []wire.Message{ack}, false, "notifications/subscriptions/acknowledged"},
	} {
		got := endOfListen(tc.msgs, id)
		if got.IsResponse() != tc.response || (!tc.response && got.Method != tc.method) {
			t.Errorf("%s: end %s %s%s; want response %v (else %s)", tc.name, got.Method, got.Params, got.Result, tc.response, tc.method)
		}
	}
}
