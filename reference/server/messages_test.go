package server

import "testing"

// TestIsResponse: the first keys the go-sdk writes decide without decoding,
// and agree with decoding; other shapes are decoded.
func TestIsResponse(t *testing.T) {
	for data, want := range map[string]bool{
		`{"jsonrpc":"2.0","id":1,"result":{}}`:                                      true,
		`{"jsonrpc":"2.0","id":-1.5e3,"error":{"code":-32603,"message":"x"}}`:       true,
		`{"jsonrpc":"2.0","id":"a\"b,\"method\":","result":{"method":"x"}}`:         true,
		`{"jsonrpc":"2.0","id":"x","method":"sampling/createMessage","params":{}}`:  false,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"result":1}}`: false,
		`{"id":1,"jsonrpc":"2.0","result":{}}`:                                      true,  // decoded
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}`:         true,  // decoded
		`{"jsonrpc":"2.0","id":"unterminated`:                                       false, // decoded
		`not json`:                                                                  false,
	} {
		if got := isResponse([]byte(data)); got != want {
			t.Errorf("isResponse(%s) = %v, want %v", data, got, want)
		}
		if got := decodedIsResponse([]byte(data)); got != want {
			t.Errorf("decodedIsResponse(%s) = %v, want %v", data, got, want)
		}
	}
	resp := []byte(`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"completed 20 steps"}]}}`)
	if n := testing.AllocsPerRun(100, func() { isResponse(resp) }); n != 0 {
		t.Errorf("isResponse of a go-sdk response allocates %v times", n)
	}
}

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
