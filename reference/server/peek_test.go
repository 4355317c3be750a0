package server

import (
	"bytes"
	"testing"
)

// FuzzScanMessage: where scanMessage answers, it answers as decodeMessage
// (json.Unmarshal) does, and it answers for the bodies clients send.
func FuzzScanMessage(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{ "id" : "a" , "method" : "initialize" , "params" : {"x":[1,{"y":"}"}],"z":"\"]"} }`,
		`{"Method":"ping","ID":null}`,
		`{"method":"a","method":null}`,
		`{"method":"a","METHOD":"initialize","id":1,"id":[2]}`,
		`{"method":7,"id":1}`,
		`{"method":"\u0069nitialize","id":1}`,
		`{"me\u0074hod":"initialize","id":1}`,
		`{"method":"initialize","id":-1.5e3}`,
		`{"method":"x","id":{"a":"}"}}`,
		`{"method":"ping","id":true}`,
		`{}`, `{`, `[]`, `"x"`, `{"id":1,}`, `{"method":"\xff","id":1}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		got, ok := scanMessage(body)
		want, err := decodeMessage(body)
		if !ok {
			return
		}
		if err != nil {
			t.Fatalf("%q: scanned %+v, json.Unmarshal fails: %v", body, got, err)
		}
		if !bytes.Equal(got.id, want.id) || got.init != want.init || got.named != want.named {
			t.Fatalf("%q: scanned %+v, json.Unmarshal gives %+v", body, got, want)
		}
	})
}

// TestScanMessageCovers: the scan answers for every single message the
// seeds above hold that json.Unmarshal reads without escapes or odd types,
// so peek rarely falls back.
func TestScanMessageCovers(t *testing.T) {
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":"x-1","method":"tools/call","params":{"name":"long_operation","arguments":{"steps":20,"interval_ms":100},"_meta":{"progressToken":"t"}}}`,
		` {"id":2,"result":{}} `,
	} {
		if _, ok := scanMessage(bytes.TrimSpace([]byte(body))); !ok {
			t.Errorf("%s: left to json.Unmarshal", body)
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
