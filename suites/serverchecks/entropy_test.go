package serverchecks

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/suites/kit"
)

// TestEntropyJudgedOnWhatFits: against a server whose handshakes are slow
// (a bridge that starts a process per session), SESS-ID-ENTROPY judges
// the ids its deadline leaves room for, at least four, rather than ending
// inconclusive in the middle of its sixteenth handshake; each session is
// deleted as soon as its id is read.
func TestEntropyJudgedOnWhatFits(t *testing.T) {
	t.Parallel()
	tc := hosted(t, "", "2025-11-25", nil)
	up, err := url.Parse(tc.URL)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: up.Scheme, Host: up.Host})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if bytes.Contains(body, []byte(`"method":"initialize"`)) {
			time.Sleep(600 * time.Millisecond) // the slow handshake the test is about
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(slow.Close)
	tc.URL = slow.URL + up.Path
	c := checkOf(t, tc, "SESS-ID-ENTROPY")
	// Room for about twelve handshakes of 600 ms, not sixteen; four fit
	// even when a busy machine doubles each.
	r := kit.Execute(context.Background(), c, 8*time.Second)
	if r.State != kit.Passed || !strings.Contains(r.Exchange, "judged on these") {
		t.Fatalf("%v %q, want a pass judged on the ids that fit\n%s", r.State, r.Message, r.Exchange)
	}
	if deletes := strings.Count(r.Exchange, "→ DELETE"); deletes < minEntropySessions {
		t.Errorf("%d DELETEs, want each session ended as soon as its id was read\n%s", deletes, r.Exchange)
	}
}
