package clientchecks

import (
	"net/http"
	"strings"
	"testing"

	"github.com/mcp-conform/mcp-conform/suites/kit"
)

// TestStrayRequestsRecorded: a request to another path than the scripted
// server's endpoint (a client that appends "/", or speaks the old HTTP+SSE
// layout) is answered 404 and recorded with its run, bounded, so a failed
// run names the path it went to; the endpoint's own requests are not
// strays.
func TestStrayRequestsRecorded(t *testing.T) {
	rec := &clientRecorder{log: kit.NewLog(), run: func() int { return 3 }}
	s, err := startScripted(serverOpts{}, rec, "")
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	post := func(url string) int {
		resp, err := http.Post(url, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for range maxStrays + 2 {
		if got := post(s.url + "/"); got != http.StatusNotFound {
			t.Fatalf("POST %s/: HTTP %d, want 404", s.url, got)
		}
	}
	post(s.url)
	strays := rec.straysOf(3)
	if len(strays) != maxStrays || strays[0] != `POST "/mcp/"` {
		t.Errorf("strays of run 3 = %q, want %d of POST \"/mcp/\"", strays, maxStrays)
	}
	if len(rec.straysOf(1)) != 0 {
		t.Error("a stray recorded for a run that sent none")
	}
	if log := rec.log.String(); !strings.Contains(log, `?? run 3 sent POST "/mcp/", not to the MCP endpoint: answered 404`) {
		t.Errorf("the log does not name the stray request:\n%s", log)
	}
}
