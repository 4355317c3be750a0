package serverchecks

import (
	"crypto/rand"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

func TestSessionIDNonASCII(t *testing.T) {
	t.Parallel()
	tg := serve(t, "session-id-non-ascii")
	sid := tg.connect(tg.c)
	if !strings.HasPrefix(sid, "é") || sid[0] <= 0x7e {
		t.Fatalf("session id %q: want a first byte outside visible ASCII", sid)
	}
	if got := tg.status(tg.c, sid); got != http.StatusOK {
		t.Fatalf("tools/list with the shown id: HTTP %d", got)
	}
}

func TestSessionIDSequential(t *testing.T) {
	t.Parallel()
	tg := serve(t, "session-id-sequential")
	for _, want := range []string{"s1", "s2"} {
		sid := tg.connect(tg.c)
		if sid != want {
			t.Fatalf("session id %q, want %q", sid, want)
		}
		if got := tg.status(tg.c, sid); got != http.StatusOK {
			t.Fatalf("tools/list on %s: HTTP %d", sid, got)
		}
	}
}

func TestMissingID404(t *testing.T) {
	t.Parallel()
	tg := serve(t, "missing-id-404")
	tg.connect(tg.c)
	if got := tg.status(tg.c, ""); got != http.StatusNotFound {
		t.Fatalf("tools/list without a session id: HTTP %d, want 404", got)
	}
}

func TestUnknownID400(t *testing.T) {
	t.Parallel()
	tg := serve(t, "unknown-id-400")
	unknown := rand.Text()
	for method, want := range map[string]int{http.MethodGet: 400, http.MethodDelete: 400, http.MethodPost: 404} {
		var body any
		if method == http.MethodPost {
			body = tg.c.Request("tools/list", nil)
		}
		if got := tg.send(tg.c, method, unknown, body).Status; got != want {
			t.Errorf("%s with an unknown id: HTTP %d, want %d", method, got, want)
		}
	}
}

// TestUnknownID400Everywhere: an unknown id gets 400 on every method, a
// live session works and a new initialize works.
func TestUnknownID400Everywhere(t *testing.T) {
	t.Parallel()
	tg := serve(t, "unknown-id-400-everywhere")
	unknown := rand.Text()
	for _, method := range []string{http.MethodGet, http.MethodDelete, http.MethodPost} {
		var body any
		if method == http.MethodPost {
			body = tg.c.Request("tools/list", nil)
		}
		if got := tg.send(tg.c, method, unknown, body).Status; got != http.StatusBadRequest {
			t.Errorf("%s with an unknown id: HTTP %d, want 400", method, got)
		}
	}
	if got := tg.status(tg.c, tg.connect(tg.c)); got != http.StatusOK {
		t.Errorf("tools/list on a new session: HTTP %d, want 200", got)
	}
}

func TestDeleteKeepsSession(t *testing.T) {
	t.Parallel()
	tg := serve(t, "delete-keeps-session")
	sid := tg.connect(tg.c)
	if got := tg.send(tg.c, http.MethodDelete, sid, nil).Status; got != http.StatusNoContent {
		t.Fatalf("DELETE: HTTP %d, want 204", got)
	}
	if got := tg.status(tg.c, sid); got != http.StatusOK {
		t.Fatalf("tools/list after DELETE: HTTP %d, want 200 (the session lives on)", got)
	}
	if got := tg.send(tg.c, http.MethodDelete, rand.Text(), nil).Status; got != http.StatusNotFound {
		t.Fatalf("DELETE of an unknown id: HTTP %d, want 404", got)
	}
}

func TestReinitReusesGoneID(t *testing.T) {
	t.Parallel()
	tg := serve(t, "reinit-reuses-gone-id")
	gone := rand.Text()
	if got := tg.status(tg.c, gone); got != http.StatusNotFound {
		t.Fatalf("unknown id: HTTP %d, want 404", got)
	}
	sid := tg.connect(tg.c)
	if sid != gone {
		t.Fatalf("new session id %q, want the refused %q", sid, gone)
	}
	if got := tg.status(tg.c, sid); got != http.StatusOK {
		t.Fatalf("tools/list on the new session: HTTP %d", got)
	}
	if again := tg.connect(tg.c); again == gone {
		t.Fatalf("the refused id was handed out twice")
	}
}

func TestVersionUnchecked(t *testing.T) {
	t.Parallel()
	tg := serve(t, "version-unchecked")
	sid := tg.connect(tg.c)
	tg.c.ProtocolVersion = "1999-01-01"
	if got := tg.status(tg.c, sid); got != http.StatusOK {
		t.Fatalf("tools/list with MCP-Protocol-Version 1999-01-01: HTTP %d, want 200", got)
	}
}

func TestOriginUnchecked(t *testing.T) {
	t.Parallel()
	tg := serve(t, "origin-unchecked")
	tg.c.Header.Set("Origin", "https://evil.example")
	resp, err := tg.c.Initialize(tg.ctx(), "")
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != http.StatusOK {
		t.Fatalf("initialize with a disallowed Origin: HTTP %d, want 200", resp.Status)
	}
}

// TestConcurrentRequestsOneSession: a fixture that probes the session of
// each request keeps every one of many concurrent requests in it alive
// (probes sharing one id were refused as duplicates, and the session
// then told gone).
func TestConcurrentRequestsOneSession(t *testing.T) {
	t.Parallel()
	tg := serve(t, "unknown-id-400-everywhere")
	sid := tg.connect(tg.c)
	var refused atomic.Int64
	var wg sync.WaitGroup
	for range 100 {
		wg.Go(func() {
			if tg.status(tg.c, sid) != http.StatusOK {
				refused.Add(1)
			}
		})
	}
	wg.Wait()
	if n := refused.Load(); n > 0 {
		t.Fatalf("%d of 100 concurrent tools/list on a live session refused", n)
	}
}
