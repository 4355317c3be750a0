package serverchecks

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/mcp-conform/mcp-conform/internal/report"
	"github.com/mcp-conform/mcp-conform/suites/kit"
	"github.com/mcp-conform/mcp-conform/target"
)

// forgetful is a server whose sessions are gone right after the handshake:
// initialize works, every later request for the session gets 404. It
// counts the tools/list requests it sees.
func forgetful(lists *atomic.Int64) http.Handler {
	return forgets(lists, http.StatusNotFound, "Session not found")
}

// forgets is forgetful answering status with an error message.
func forgets(lists *atomic.Int64, status int, message string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		body, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(body, &m)
		if m.Method == "tools/list" {
			lists.Add(1)
		}
		switch {
		case m.Method == "initialize" && r.Header.Get("Mcp-Session-Id") == "":
			w.Header().Set("Mcp-Session-Id", "S1")
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"forgetful","version":"1"}}}`))
		case m.Method == "notifications/initialized":
			w.WriteHeader(http.StatusAccepted)
		default:
			http.Error(w, `{"jsonrpc":"2.0","error":{"code":-32001,"message":"`+message+`"},"id":null}`, status)
		}
	})
}

func checkOf(t *testing.T, tc *Target, id string) kit.Check {
	t.Helper()
	for _, c := range Checks(tc) {
		if c.Entry.ID == id {
			return c
		}
	}
	t.Fatalf("no check %s", id)
	return kit.Check{}
}

// TestSessionLostIsNamed: a check not about expiry whose session vanishes
// fails with a message that names the expiry first, not only the
// assertion that happened to trip on it; a grace check, whose business
// expiry is, gets no such note.
func TestSessionLostIsNamed(t *testing.T) {
	var lists atomic.Int64
	srv := httptest.NewServer(forgetful(&lists))
	defer srv.Close()
	tc := &Target{URL: srv.URL, Config: &target.Profile{}, ProtocolVersion: "2025-11-25"}

	r := kit.Execute(context.Background(), checkOf(t, tc, "RECREATE-WORKS-AFTER"), 5*time.Second)
	if r.State != kit.Failed || !strings.HasPrefix(r.Message, "the session expired during the check: tools/list on it got 404") ||
		!strings.Contains(r.Message, "could not keep it warm") {
		t.Fatalf("state %v, message:\n%s", r.State, r.Message)
	}

	tc.Config = &target.Profile{Timings: target.Timings{IdleThreshold: target.Duration(time.Second), GracePeriod: target.Duration(time.Second), ReaperInterval: target.Duration(time.Second)}}
	grace := checkOf(t, tc, "GRACE-LIVE-STREAM")
	if !mustLookup("GRACE-LIVE-STREAM").Idle {
		t.Fatal("GRACE-LIVE-STREAM is not marked Idle")
	}
	if r := kit.Execute(context.Background(), grace, 5*time.Second); strings.Contains(r.Message, "expired during the check") {
		t.Fatalf("a grace check got the expiry note: %s", r.Message)
	}
}

// TestSessionLost400: a server that answers 400 for a session it does
// not know loses the session as surely as with 404; a 400 about something
// else is not taken for an expiry.
func TestSessionLost400(t *testing.T) {
	var lists atomic.Int64
	srv := httptest.NewServer(forgets(&lists, http.StatusBadRequest, "Bad Request: No valid session ID provided"))
	defer srv.Close()
	tc := &Target{URL: srv.URL, Config: &target.Profile{}, ProtocolVersion: "2025-11-25"}
	r := kit.Execute(context.Background(), checkOf(t, tc, "RECREATE-WORKS-AFTER"), 5*time.Second)
	if r.State != kit.Failed || !strings.HasPrefix(r.Message, SessionLost+": tools/list on it got 400") {
		t.Fatalf("state %v, message:\n%s", r.State, r.Message)
	}

	other := httptest.NewServer(forgets(&lists, http.StatusBadRequest, "Invalid request"))
	defer other.Close()
	tc.URL = other.URL
	if r := kit.Execute(context.Background(), checkOf(t, tc, "RECREATE-WORKS-AFTER"), 5*time.Second); strings.Contains(r.Message, SessionLost) {
		t.Fatalf("a 400 that does not speak of the session was taken for an expiry: %s", r.Message)
	}
}

// TestSessionLostNotSkipped: a check that would skip, saying the target
// does not resume streams, after its session vanished fails instead and
// names the expiry; with the session alive the skip stands.
func TestSessionLostNotSkipped(t *testing.T) {
	var lists atomic.Int64
	srv := httptest.NewServer(forgetful(&lists))
	defer srv.Close()
	tc := &Target{URL: srv.URL, ProtocolVersion: "2025-11-25", Config: &target.Profile{}}
	skips := kit.Check{Entry: mustLookup("RESUME-NO-INIT"), Run: func(k *kit.T) {
		e := tc.setup(k, def{})
		e.connect(k.Context(), e.C)
		e.Skip(report.NotOffered, "the target does not resume streams: GET with Last-Event-ID got HTTP Bad Request")
	}}
	r := kit.Execute(context.Background(), skips, 5*time.Second)
	if r.State != kit.Failed || !strings.HasPrefix(r.Message, SessionLost+": tools/list on it got 404") ||
		!strings.Contains(r.Message, "would have been skipped: the target does not resume streams") {
		t.Fatalf("state %v, message:\n%s", r.State, r.Message)
	}
}

// TestKeptWarm: a check not about idleness sends its session a tools/list
// every third of the declared idle threshold while it runs.
func TestKeptWarm(t *testing.T) {
	var lists atomic.Int64
	srv := httptest.NewServer(forgetful(&lists))
	defer srv.Close()
	tc := &Target{URL: srv.URL, ProtocolVersion: "2025-11-25", Config: &target.Profile{Timings: target.Timings{
		IdleThreshold: target.Duration(150 * time.Millisecond), GracePeriod: target.Duration(time.Second), ReaperInterval: target.Duration(time.Second)}}}
	c := kit.Check{Entry: mustLookup("RESUME-NO-INIT"), Run: func(k *kit.T) {
		e := tc.setup(k, def{})
		e.connect(k.Context(), e.C)
		e.Eventually(lists.Load).Should(BeNumerically(">=", 3), "three tools/list from the keeper")
	}}
	if r := kit.Execute(context.Background(), c, 5*time.Second); r.State != kit.Passed {
		t.Fatalf("%v: %s", r.State, r.Message)
	}
}

// TestSessionLostInHandshake: a session gone before the handshake's
// notifications/initialized is named as lost, with how long after the
// initialize; a refusal that does not speak of the session is not.
func TestSessionLostInHandshake(t *testing.T) {
	var lists atomic.Int64
	for _, tc := range []struct {
		status  int
		message string
		lost    bool
	}{
		{http.StatusNotFound, "Session not found", true},
		{http.StatusBadRequest, "Invalid request", false},
	} {
		initialize := forgets(&lists, tc.status, tc.message)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Mcp-Session-Id") != "" { // every request after initialize
				http.Error(w, `{"jsonrpc":"2.0","error":{"code":-32001,"message":"`+tc.message+`"},"id":null}`, tc.status)
				return
			}
			initialize.ServeHTTP(w, r)
		}))
		tgt := &Target{URL: srv.URL, Config: &target.Profile{}, ProtocolVersion: "2025-11-25"}
		r := kit.Execute(context.Background(), checkOf(t, tgt, "RECREATE-WORKS-AFTER"), 5*time.Second)
		srv.Close()
		named := strings.HasPrefix(r.Message, SessionLost+": its notifications/initialized got "+strconv.Itoa(tc.status))
		if r.State != kit.Failed || named != tc.lost || !strings.Contains(r.Message, "an error status") {
			t.Errorf("%d %s: state %v, message:\n%s", tc.status, tc.message, r.State, r.Message)
		}
	}
}
