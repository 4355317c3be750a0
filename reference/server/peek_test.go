package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// peekSeeds are bodies whose envelope a sloppy pre-parser reads otherwise
// than the go-sdk: case variants, repeats, escapes, null and odd members.
var peekSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
	`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	`{ "jsonrpc":"2.0", "id" : "a" , "method" : "initialize" , "params" : {"x":[1,{"y":"}"}],"z":"\"]"} }`,
	`{"jsonrpc":"2.0","id":9007199254740993,"ID":1,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","METHOD":""}`,
	`{"jsonrpc":"2.0","Method":"ping","ID":null}`,
	`{"jsonrpc":"2.0","id":1,"method":"a","method":null}`,
	`{"jsonrpc":"2.0","id":1,"method":null}`,
	`{"jsonrpc":"2.0","id":1,"method":""}`,
	`{"jsonrpc":"2.0","method":"a","METHOD":"initialize","id":1,"id":[2]}`,
	`{"jsonrpc":"2.0","method":7,"id":1}`,
	`{"jsonrpc":"2.0","method":"\u0069nitialize","id":1}`,
	`{"jsonrpc":"2.0","me\u0074hod":"initialize","id":1}`,
	`{"jsonrpc":"2.0","method":"initialize","id":-1.5e3}`,
	`{"jsonrpc":"2.0","method":"x","id":{"a":"}"}}`,
	`{"jsonrpc":"2.0","method":"ping","id":true}`,
	`{"jsonrpc":"2.0","method":"ping","id":1,"paramſ":{}}`,
	"{\"jsonrpc\":\"2.0\",\"method\":\"\xff\",\"id\":1}",
	`{"jsonrpc":"2.0","id":2,"result":{}}`,
	`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"Id":3,"method":"ping"}]`,
	`{}`, `{`, `[]`, `"x"`, `{"id":1,}`,
}

// FuzzPeekSDK: what peek lets through, the go-sdk reads the same way. For
// every message of a body peek accepts and jsonrpc.DecodeMessage decodes,
// both see a request or both a response, with the same method, the same
// call-or-notification, an initialize alike, and ids that match: the id
// the go-sdk echoes is the one checkID vetted, byte for byte.
func FuzzPeekSDK(f *testing.F) {
	for _, seed := range peekSeeds {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		init, id, batch, calls, err := peek(body)
		if err != nil {
			return // refused: the go-sdk never sees it
		}
		body = bytes.TrimSpace(body)
		if batch == nil {
			m, err := scanMessage(body)
			if err != nil || init != m.isInit() || !bytes.Equal(id, m.id) || calls != btoi(m.isCall()) {
				t.Fatalf("%q: peek %v %s %d, scan %+v %v", body, init, id, calls, m, err)
			}
			sameAsSDK(t, body, m)
			return
		}
		n := 0
		for _, raw := range batch {
			raw = bytes.TrimSpace(raw)
			m, err := scanMessage(raw)
			if err != nil {
				continue // the go-sdk refuses the whole batch
			}
			n += btoi(m.isCall())
			sameAsSDK(t, raw, m)
		}
		if n != calls {
			t.Fatalf("%q: peek counts %d calls, its messages %d", body, calls, n)
		}
	})
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// sameAsSDK checks m, the scan of one message, against the go-sdk's decoding.
func sameAsSDK(t *testing.T, body []byte, m peeked) {
	t.Helper()
	msg, err := jsonrpc.DecodeMessage(body)
	if err != nil {
		return // the go-sdk refuses it itself
	}
	var sdkID jsonrpc.ID
	switch v := msg.(type) {
	case *jsonrpc.Request:
		if !m.hasMethod || m.method != v.Method || m.isCall() != v.IsCall() {
			t.Fatalf("%q: scanned %+v, the go-sdk reads request %q (call %v)", body, m, v.Method, v.IsCall())
		}
		sdkID = v.ID
	case *jsonrpc.Response:
		if m.hasMethod {
			t.Fatalf("%q: scanned request %q, the go-sdk reads a response", body, m.method)
		}
		sdkID = v.ID
	}
	// The id the go-sdk read is the one peek saw...
	var raw any
	if len(m.id) > 0 {
		if err := json.Unmarshal(m.id, &raw); err != nil {
			t.Fatalf("%q: scanned id %s: %v", body, m.id, err)
		}
	}
	want, err := jsonrpc.MakeID(raw)
	if err != nil {
		t.Fatalf("%q: the go-sdk decoded id %s, MakeID refuses it: %v", body, m.id, err)
	}
	if want != sdkID {
		t.Fatalf("%q: scanned id %s (%v), the go-sdk reads %v", body, m.id, want.Raw(), sdkID.Raw())
	}
	// ...and one checkID passes comes back unchanged.
	if checkID(m.id) != nil || !sdkID.IsValid() {
		return
	}
	echoed, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: sdkID, Result: json.RawMessage("{}")})
	if err != nil {
		t.Fatal(err)
	}
	var back struct{ ID json.RawMessage }
	if json.Unmarshal(echoed, &back) != nil || !bytes.Equal(back.ID, bytes.TrimSpace(m.id)) && !sameString(back.ID, m.id) {
		t.Fatalf("%q: id %s passes checkID, the go-sdk echoes %s", body, m.id, back.ID)
	}
}

// sameString reports whether a and b are JSON strings of the same value
// (the go-sdk re-encodes escapes its own way).
func sameString(a, b json.RawMessage) bool {
	var x, y string
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && x == y
}

// TestPeekRefusesAmbiguity: every seed with a repeated envelope member or
// a case variant of one is refused as ambiguous, and the plain messages
// are not.
func TestPeekRefusesAmbiguity(t *testing.T) {
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":9007199254740993,"ID":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","METHOD":""}`,
		`{"jsonrpc":"2.0","id":1,"method":"a","method":null}`,
		`{"jsonrpc":"2.0","method":"ping","id":1,"paramſ":{}}`,
		`{"jsonrpc":"2.0","\u0069d":1,"id":2,"method":"ping"}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"Id":3,"method":"ping"}]`,
	} {
		if _, _, _, _, err := peek([]byte(body)); !errors.Is(err, errAmbiguous) {
			t.Errorf("%s: %v, want ambiguous", body, err)
		}
	}
	for _, tc := range []struct {
		body        string
		init, call  bool
		method, id  string
		wantsMethod bool
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, false, true, "tools/list", "1", true},
		{`{"jsonrpc":"2.0","id":"a","method":"\u0069nitialize"}`, true, true, "initialize", `"a"`, true},
		{`{"jsonrpc":"2.0","id":1,"method":null}`, false, true, "", "1", true},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, false, false, "notifications/initialized", "", true},
		{`{"jsonrpc":"2.0","id":2,"result":{}}`, false, false, "", "2", false},
	} {
		m, err := scanMessage([]byte(tc.body))
		if err != nil || m.isInit() != tc.init || m.isCall() != tc.call || m.method != tc.method || string(m.id) != tc.id || m.hasMethod != tc.wantsMethod {
			t.Errorf("%s: %+v %v", tc.body, m, err)
		}
	}
}

func BenchmarkPeek(b *testing.B) {
	body := []byte(`{"jsonrpc":"2.0","id":"x-1","method":"tools/call","params":{"name":"long_operation","arguments":{"steps":20,"interval_ms":100},"_meta":{"progressToken":"t"}}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, _, calls, err := peek(body); err != nil || calls != 1 {
			b.Fatal(err, calls)
		}
	}
}
