package server

import (
	"encoding/json"
	"testing"
)

// TestIsResponseTo: the go-sdk writes a response's id in its own spelling
// (strings unescaped, numbers as integers), so the id a request was sent
// with matches by value, not by its bytes; a longer id it merely begins
// is another id.
func TestIsResponseTo(t *testing.T) {
	for _, tc := range []struct {
		id, written string
		want        bool
	}{
		{`"a\u003cbN"`, `{"jsonrpc":"2.0","id":"a<bN","result":{}}`, true},
		{`"a<bN"`, `{"jsonrpc":"2.0","id":"a\u003cbN","result":{}}`, true},
		{`"a\/b\u0041"`, "event: message\nid: X_1\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"a/bA\",\"error\":{\"code\":-32603}}\n\n", true},
		{`"x"`, `{"jsonrpc":"2.0", "id": "x" ,"result":{}}`, true},
		{`1.0`, `{"jsonrpc":"2.0","id":1,"result":{}}`, true},
		{`7`, `{"jsonrpc":"2.0","id":7,"result":{}}`, true},
		{`1`, `{"jsonrpc":"2.0","id":12,"result":{}}`, false},
		{`9007199254740993`, `{"jsonrpc":"2.0","id":9007199254740992,"result":{}}`, false},
		{`9007199254740993`, `{"jsonrpc":"2.0","id":9007199254740993,"result":{}}`, true},
		{`1e2`, `{"jsonrpc":"2.0","id":100,"result":{}}`, true},
		{`"a"`, `{"jsonrpc":"2.0","id":"ab","result":{}}`, false},
		{`"a<bN"`, `{"jsonrpc":"2.0","id":"a<bM","result":{}}`, false},
		{`"1"`, `{"jsonrpc":"2.0","id":1,"result":{}}`, false},
		{`"a<bN"`, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"a<bN"}}`, false},
		{`"x"`, `{"jsonrpc":"2.0","id":"y","method":"sampling/createMessage","params":{"_meta":{"id":"x"}}}`, false},
	} {
		if got := isResponseTo([]byte(tc.written), json.RawMessage(tc.id)); got != tc.want {
			t.Errorf("isResponseTo(%s, id %s) = %v, want %v", tc.written, tc.id, got, tc.want)
		}
	}
}

// TestUnansweredByValue: a replica reporting the calls of a dead one lost
// matches the responses on the stream to the calls' ids by value, so a
// call whose id the go-sdk echoed in its own spelling is not reported lost
// after its answer.
func TestUnansweredByValue(t *testing.T) {
	answered := map[string]bool{}
	for _, resp := range []string{
		`{"jsonrpc":"2.0","id":"a<b","result":{}}`,
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
	} {
		answered[responseID([]byte(resp))] = true
	}
	ids := []json.RawMessage{json.RawMessage(`"a\u003cb"`), json.RawMessage(`1.0`), json.RawMessage(`"a<c"`), json.RawMessage(`2`)}
	got, _ := json.Marshal(unanswered(ids, answered))
	if string(got) != `["a\u003cc",2]` {
		t.Fatalf("unanswered: %s, want the calls \"a<c\" and 2 only", got)
	}
}
