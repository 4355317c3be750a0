package server

import "testing"

// TestTaskRequest: task requests are found, escaped names included; other
// requests are not decoded to tell.
func TestTaskRequest(t *testing.T) {
	for body, want := range map[string]bool{
		`{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":"x"}}`:                      true,
		`{"jsonrpc":"2.0","id":1,"method":"\u0074asks/get","params":{"taskId":"x"}}`:                 true,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","task":{"ttl":1000}}}`:   true,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","\u0074ask":{"ttl":1}}}`: true,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`:                       false,
		`{"jsonrpc":"2.0","method":"tasks/get"}`:                                                     false, // a notification
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`:                                             false,
	} {
		if _, got := taskRequest([]byte(body)); got != want {
			t.Errorf("taskRequest(%s) = %v, want %v", body, got, want)
		}
	}
	list := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`)
	if n := testing.AllocsPerRun(100, func() { taskRequest(list) }); n != 0 {
		t.Errorf("taskRequest of a tools/list allocates %v times", n)
	}
}
