package eventstore

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
		`{"jsonrpc":"2.0","id":1,"result":{"text":"method"}}`:                       true,
		`{"jsonrpc":"2.0","id":2,"method":"elicitation/create","params":{}}`:        false,
		`not json`: false,
		``:         false, // a priming event
	} {
		if got := IsResponse([]byte(data)); got != want {
			t.Errorf("IsResponse(%s) = %v, want %v", data, got, want)
		}
		if got := decodedIsResponse([]byte(data)); got != want {
			t.Errorf("decodedIsResponse(%s) = %v, want %v", data, got, want)
		}
	}
	resp := []byte(`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"completed 20 steps"}]}}`)
	for _, data := range [][]byte{resp, nil} {
		if n := testing.AllocsPerRun(100, func() { IsResponse(data) }); n != 0 {
			t.Errorf("IsResponse(%s) allocates %v times", data, n)
		}
	}
}
