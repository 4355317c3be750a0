package server

import (
	"encoding/json"
	"testing"
)

func TestCountRequests(t *testing.T) {
	batch := []json.RawMessage{
		json.RawMessage(`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`),
		json.RawMessage(`{"jsonrpc":"2.0","method":"notifications/initialized"}`),
		json.RawMessage(`{"jsonrpc":"2.0","id":7,"result":{}}`), // a client's response
		json.RawMessage(`{"jsonrpc":"2.0","id":null,"method":"ping"}`),
		json.RawMessage(`[1,2]`),
	}
	if n := countRequests(batch); n != 3 {
		t.Fatalf("countRequests = %d, want 3 (a request, one with a null id, one that does not decode)", n)
	}
	if n := countRequests(nil); n != 1 {
		t.Fatalf("single message: %d, want 1", n)
	}
	if n := countRequests([]json.RawMessage{}); n != 0 {
		t.Fatalf("empty batch: %d, want 0", n)
	}
}
