package storm_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/storm"
)

// TestNewGETInFlight: with new-get, a server may lose only the
// notifications it wrote to the call's stream after the last one the
// client read there and before the cut ended (no new standalone GET
// acknowledges them), the K steps after it; a step beyond them and any
// duplicate fail. And with the call's resume, the same loss is a failure.
func TestNewGETInFlight(t *testing.T) {
	for _, tc := range []struct {
		name      string
		s         script
		reconnect string
		pass      bool
		failure   string
	}{
		{name: "in-flight only", s: script{}, reconnect: storm.ReconnectNewGET, pass: true},
		{name: "more than in flight", s: script{drop: []int{5, 6, 7, 8}}, reconnect: storm.ReconnectNewGET,
			failure: "15 notifications lost beyond those in flight at the cut"},
		{name: "beyond K after the cut", s: script{drop: []int{6}}, reconnect: storm.ReconnectNewGET,
			failure: "6 notifications lost beyond those in flight at the cut"},
		{name: "duplicate", s: script{resend: []int{3}}, reconnect: storm.ReconnectNewGET,
			failure: "3 notifications or results duplicated"},
		{name: "resumed", s: script{}, reconnect: storm.ReconnectBoth, failure: "3 notifications lost"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(tc.s.handler(t))
			defer srv.Close()
			o := scripted(srv.URL)
			o.Reconnect = tc.reconnect
			res := run(t, o)
			if res.Passed() != tc.pass || tc.failure != "" && !slices.Contains(res.Failures, tc.failure) {
				t.Fatalf("passed %v, failures %q; want passed %v with %q", res.Passed(), res.Failures, tc.pass, tc.failure)
			}
			var b strings.Builder
			res.WriteConsole(&b)
			switch {
			case tc.reconnect != storm.ReconnectNewGET:
				if res.InFlight != nil {
					t.Fatalf("an in-flight allowance with %s: %+v", tc.reconnect, res.InFlight)
				}
			case tc.pass:
				f := res.InFlight
				if res.Lost != 3 || f == nil || f.Lost != 3 || f.Sessions != 3 || f.Bound.Min < 1 {
					t.Fatalf("lost %d, in flight %+v; want 3 in flight, one per session, K at least 1", res.Lost, f)
				}
				if !strings.Contains(b.String(), "PASS (3 notifications lost in flight at the cut") {
					t.Fatalf("the console does not say what was lost in flight:\n%s", b.String())
				}
			}
			if tc.reconnect == storm.ReconnectNewGET && !strings.Contains(b.String(), "in flight    ") {
				t.Fatalf("the console does not state the bound:\n%s", b.String())
			}
		})
	}
}

// scriptInterval is the script server's declared interval: long enough
// that K stays 1 unless the cut comes more than 1.5 intervals late.
const scriptInterval = 200 * time.Millisecond

// scripted is a storm of three sessions of a script server: 10
// notifications scriptInterval apart, cut after 3.
func scripted(target string) storm.Options {
	return storm.Options{
		URL: target, Header: http.Header{}, Tool: "steps", Arguments: map[string]any{},
		Notifications: 10, Interval: scriptInterval, Sessions: 3, Concurrency: 3, CutAfter: 3,
		Settle: 2 * time.Second, RequestTimeout: 10 * time.Second,
	}
}

// script is an MCP server whose tool, once called, waits 1.1 intervals
// and sends steps 1 to 3 an interval apart on the call's stream, then step
// 4 at once but without the blank line that ends an SSE event: written,
// never readable, as a step in the client's socket buffer at a reset is.
// When the call's stream breaks, the steps after 4 but drop, then resend,
// go to the next GET of the session. By the declared interval step 4 can
// have been written before the cut (sent + 3 intervals < sent + 3.1
// intervals < cut end), so with new-get it is in flight: K >= 1.
type script struct {
	drop, resend []int
}

func (sc script) handler(t *testing.T) http.Handler {
	type after struct {
		token json.RawMessage
		steps []int
	}
	type sess struct {
		gets atomic.Int32
		rest chan after // what to send after the cut, to one GET
	}
	var mu sync.Mutex
	sessions := map[string]*sess{}
	lookup := func(r *http.Request) *sess {
		mu.Lock()
		defer mu.Unlock()
		return sessions[r.Header.Get("Mcp-Session-Id")]
	}
	note := func(tok json.RawMessage, n int, end string) string {
		return fmt.Sprintf("id: e_%d\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":%s,\"progress\":%d,\"total\":10}}\n%s", n, tok, n, end)
	}
	stream := func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodDelete:
			w.WriteHeader(http.StatusNoContent)
			return
		case http.MethodGet:
			s := lookup(r)
			if s == nil {
				http.NotFound(w, r)
				return
			}
			stream(w)
			if s.gets.Add(1) == 1 { // the standalone stream before the cut
				<-r.Context().Done()
				return
			}
			select {
			case a := <-s.rest:
				for _, n := range a.steps {
					io.WriteString(w, note(a.token, n, "\n"))
				}
				w.(http.Flusher).Flush()
			case <-r.Context().Done():
				return
			}
			<-r.Context().Done()
			return
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Meta struct {
					Token json.RawMessage `json:"progressToken"`
				} `json:"_meta"`
			} `json:"params"`
		}
		if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
			t.Errorf("undecodable POST: %v", err)
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		switch m.Method {
		case "initialize":
			mu.Lock()
			sid := fmt.Sprintf("s%d", len(sessions)+1)
			sessions[sid] = &sess{rest: make(chan after, 1)}
			mu.Unlock()
			w.Header().Set("Mcp-Session-Id", sid)
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"script","version":"1"}}}`)
		case "tools/call":
			s := lookup(r)
			tok := m.Params.Meta.Token
			stream(w)
			wait := scriptInterval + scriptInterval/10
			for n := 1; n <= 3; n++ {
				select {
				case <-time.After(wait):
				case <-r.Context().Done():
					t.Errorf("the stream broke before step %d", n)
					return
				}
				io.WriteString(w, note(tok, n, "\n"))
				w.(http.Flusher).Flush()
				wait = scriptInterval
			}
			io.WriteString(w, note(tok, 4, ""))
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			var rest []int
			for n := 5; n <= 10; n++ {
				if !slices.Contains(sc.drop, n) {
					rest = append(rest, n)
				}
			}
			s.rest <- after{tok, append(rest, sc.resend...)}
		default:
			w.WriteHeader(http.StatusAccepted)
		}
	})
}
