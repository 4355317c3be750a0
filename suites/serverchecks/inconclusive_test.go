package serverchecks

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/suites/kit"
	"github.com/mcp-conform/mcp-conform/target"
)

// slowHandshake is a server that takes answerIn to answer initialize and
// expires a session idle (its declared idle threshold, no grace period)
// after its initialize arrived: notifications/initialized then gets 404
// if the handshake took longer than that.
func slowHandshake(answerIn, idle time.Duration) http.Handler {
	var born atomic.Int64 // unix nanoseconds of the last initialize
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		body, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(body, &m)
		switch m.Method {
		case "initialize":
			born.Store(time.Now().UnixNano())
			time.Sleep(answerIn) // the server is the harness's stand-in for a busy machine
			w.Header().Set("Mcp-Session-Id", "S1")
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"slow","version":"1"}}}`))
		default:
			if time.Since(time.Unix(0, born.Load())) >= idle {
				http.Error(w, `{"jsonrpc":"2.0","error":{"code":-32001,"message":"Session not found"},"id":null}`, http.StatusNotFound)
				return
			}
			w.WriteHeader(http.StatusAccepted)
		}
	})
}

// TestHandshakeStretchedIsInconclusive: a session that expires within its
// handshake because the handshake itself took longer than the declared
// idle threshold is inconclusive (the harness could not set up what it
// observes), never the target's failure; one that expires sooner than the
// threshold allows still fails, naming the expiry.
func TestHandshakeStretchedIsInconclusive(t *testing.T) {
	idle := 200 * time.Millisecond
	cfg := func() *target.Profile {
		c := &target.Profile{}
		c.Timings.IdleThreshold = target.Duration(idle)
		c.Timings.GracePeriod = 0
		return c
	}
	for _, tc := range []struct {
		name     string
		answerIn time.Duration
		expires  time.Duration
		want     kit.State
		says     string
	}{
		{"stretched by the harness", 2 * idle, idle, kit.Inconclusive, "the harness's own handshake left its session silent for up to"},
		{"expired too soon", 0, 0, kit.Failed, "the session expired during the check: its notifications/initialized got 404"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(slowHandshake(tc.answerIn, tc.expires))
			defer srv.Close()
			target := &Target{URL: srv.URL, Config: cfg(), ProtocolVersion: "2025-11-25"}
			r := kit.Execute(context.Background(), checkOf(t, target, "SESS-ID-CHARS"), 5*time.Second)
			if r.State != tc.want || !strings.Contains(r.Message, tc.says) {
				t.Fatalf("state %v, want %v saying %q; message:\n%s", r.State, tc.want, tc.says, r.Message)
			}
		})
	}
}
