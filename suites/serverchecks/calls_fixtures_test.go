package serverchecks

import (
	"net/http"
	"testing"

	"github.com/mcp-conform/mcp-conform/internal/wire"
)

// TestRejectsNullArguments: a tools/call with "arguments": null gets zod's
// -32603 and never reaches the tool; {} and an omitted field do.
func TestRejectsNullArguments(t *testing.T) {
	t.Parallel()
	tg := serve(t, "rejects-null-arguments")
	sid := tg.connect(tg.c)
	var counts []string
	for _, tc := range []struct {
		params  string
		refused bool
	}{
		{`{"name":"counter_increment","arguments":null}`, true},
		{`{"name":"counter_increment","arguments": null }`, true},
		{`{"name":"counter_increment","arguments":{}}`, false},
		{`{"name":"counter_increment"}`, false},
	} {
		resp := tg.send(tg.c, http.MethodPost, sid, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":`+tc.params+`}`)
		m, err := resp.Result()
		if err != nil {
			t.Fatalf("tools/call %s: %v", tc.params, err)
		}
		if tc.refused {
			if m.Error == nil || m.Error.Code != -32603 || m.Error.Message != zodNullArguments || string(m.ID) != "7" {
				t.Errorf("tools/call %s answered id %s, result %s, error %+v; want id 7, error -32603 %q",
					tc.params, m.ID, m.Result, m.Error, zodNullArguments)
			}
			continue
		}
		if m.Error != nil {
			t.Fatalf("tools/call %s answered %v, want the tool's result", tc.params, m.Error)
		}
		text, err := wire.ResultText(m.Result)
		if err != nil {
			t.Fatalf("tools/call %s: %v", tc.params, err)
		}
		counts = append(counts, text)
	}
	// The refused calls did not count: the two accepted ones are the
	// session's first and second.
	if len(counts) != 2 || counts[0] == counts[1] {
		t.Errorf("counter_increment answered %q to the accepted calls, want two different counts", counts)
	}
	t.Logf("counter_increment answered %q", counts)
}
