package storm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/fixtures/servers"
	"github.com/mcp-conform/mcp-conform/harness"
	"github.com/mcp-conform/mcp-conform/reference/server"
	"github.com/mcp-conform/mcp-conform/storm"
)

// smallStorm is a storm of a few sessions that takes a few seconds.
func smallStorm(url string) storm.Options {
	p := harness.ReferenceProfile()
	return storm.Options{
		URL: url, Header: p.RequestHeader(),
		Tool: "long_operation", Arguments: map[string]any{"steps": 10, "interval_ms": 100},
		Notifications: 10, Interval: 100 * time.Millisecond,
		Sessions: 10, Concurrency: 10, CutAfter: 3,
		Reconnect: storm.ReconnectBoth, ReconnectDelay: 300 * time.Millisecond,
		Settle: 10 * time.Second, RequestTimeout: 10 * time.Second,
	}
}

func host(t *testing.T, f *servers.Fixture) *server.Host {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg := servers.Config()
	var h *server.Host
	if f != nil {
		h, err = f.Host(cfg, ln)
	} else {
		h, err = server.NewHost(cfg, ln, server.HostOptions{})
	}
	if err != nil {
		ln.Close()
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	return h
}

// wrapped hosts the reference behind wrap.
func wrapped(t *testing.T, wrap func(http.Handler) http.Handler) *server.Host {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h, err := server.NewHost(servers.Config(), ln, server.HostOptions{Wrap: wrap})
	if err != nil {
		ln.Close()
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	return h
}

func run(t *testing.T, o storm.Options) *storm.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := storm.Run(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	res.Judge(storm.Bounds{})
	var b strings.Builder
	res.WriteConsole(&b)
	t.Log("\n" + b.String())
	return res
}

// TestStormReference: the reference loses nothing, duplicates nothing and
// answers every call.
func TestStormReference(t *testing.T) {
	h := host(t, nil)
	res := run(t, smallStorm(h.URL()))
	if !res.Passed() || res.Lost != 0 || res.Duplicated != 0 || res.ResultsMissing != 0 {
		t.Fatalf("the reference failed the storm: %v", res.Failures)
	}
	if res.SessionsSetUp != 10 || res.Delivered != 100 {
		t.Fatalf("set up %d sessions, delivered %d notifications; want 10 and 100", res.SessionsSetUp, res.Delivered)
	}
}

// TestStormLogLevel: with a log level, each session sends logging/setLevel
// with it once, during its setup.
func TestStormLogLevel(t *testing.T) {
	var mu sync.Mutex
	levels := map[string]string{} // session id -> level set
	setLevels := 0
	h := wrapped(t, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost {
				body, _ := io.ReadAll(r.Body)
				r.Body = io.NopCloser(bytes.NewReader(body))
				var m struct {
					Method string `json:"method"`
					Params struct {
						Level string `json:"level"`
					} `json:"params"`
				}
				if json.Unmarshal(body, &m) == nil && m.Method == "logging/setLevel" {
					mu.Lock()
					levels[r.Header.Get("Mcp-Session-Id")] = m.Params.Level
					setLevels++
					mu.Unlock()
				}
			}
			next.ServeHTTP(w, r)
		})
	})
	o := smallStorm(h.URL())
	o.Sessions, o.Concurrency, o.LogLevel = 4, 4, "warning"
	res := run(t, o)
	if !res.Passed() {
		t.Fatalf("storm failed: %v", res.Failures)
	}
	mu.Lock()
	defer mu.Unlock()
	if setLevels != 4 || len(levels) != 4 {
		t.Fatalf("%d logging/setLevel requests for %d sessions, want 4 for 4", setLevels, len(levels))
	}
	for sid, level := range levels {
		if level != "warning" {
			t.Errorf("session %s: level %q, want warning", sid, level)
		}
	}
	if res.Options.LogLevel != "warning" {
		t.Errorf("the report's log level is %q", res.Options.LogLevel)
	}
}

// TestStormCatchesDeadStreams: a server that counts writes to a reset
// connection as delivered loses the notifications it wrote there, and the
// storm says so.
func TestStormCatchesDeadStreams(t *testing.T) {
	f := servers.DeadStreamsForget()
	h := host(t, &f)
	o := smallStorm(h.URL())
	o.Settle = 3 * time.Second // what is lost never comes
	res := run(t, o)
	if res.Passed() || res.Lost == 0 {
		t.Fatalf("the storm missed the lost notifications: lost %d, failures %v", res.Lost, res.Failures)
	}
	if len(res.LostAt) == 0 || !strings.Contains(strings.Join(res.Failures, ";"), "notifications lost") {
		t.Fatalf("the report does not say what was lost: %+v %v", res.LostAt, res.Failures)
	}
}

// TestStormProxyCut: when a fault proxy between the client and the server
// resets both sides (what it had read from the server is lost with it),
// the reference still loses nothing, and the server that counts writes to
// a reset connection as delivered still loses them. Every request the
// reference got came through the proxy.
func TestStormProxyCut(t *testing.T) {
	t.Run("reference", func(t *testing.T) {
		t.Parallel()
		var hosts sync.Map // Host headers seen
		h := wrapped(t, func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				hosts.Store(r.Host, true)
				next.ServeHTTP(w, r)
			})
		})
		o := smallStorm(h.URL())
		o.Cut = storm.CutProxy
		res := run(t, o)
		if !res.Passed() || res.Delivered != 100 || res.ConnectionsCut == 0 {
			t.Fatalf("the reference failed the storm: delivered %d, cut %d, %v", res.Delivered, res.ConnectionsCut, res.Failures)
		}
		u, _ := url.Parse(h.URL())
		if _, ok := hosts.Load(u.Host); ok {
			t.Fatalf("requests reached the server at %s without the proxy", u.Host)
		}
		if res.Options.Cut != storm.CutProxy || res.Options.URL != h.URL() {
			t.Fatalf("the report says cut %q on %s", res.Options.Cut, res.Options.URL)
		}
	})
	t.Run("dead-streams-forget", func(t *testing.T) {
		t.Parallel()
		f := servers.DeadStreamsForget()
		o := smallStorm(host(t, &f).URL())
		o.Cut, o.Settle = storm.CutProxy, 3*time.Second
		res := run(t, o)
		if res.Passed() || res.Lost == 0 {
			t.Fatalf("the storm missed the lost notifications: lost %d, failures %v", res.Lost, res.Failures)
		}
	})
}

// TestNoGoroutinesLeft: a storm, cut by the client or by the proxy, leaves
// no goroutine behind once the server it stormed is closed.
func TestNoGoroutinesLeft(t *testing.T) {
	for _, cut := range []string{storm.CutClient, storm.CutProxy} {
		base := runtime.NumGoroutine()
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		h, err := server.NewHost(servers.Config(), ln, server.HostOptions{})
		if err != nil {
			ln.Close()
			t.Fatal(err)
		}
		o := smallStorm(h.URL())
		o.Sessions, o.Concurrency, o.Cut = 4, 4, cut
		run(t, o)
		h.Close()
		deadline := time.Now().Add(5 * time.Second)
		for runtime.NumGoroutine() > base && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if n := runtime.NumGoroutine(); n > base {
			buf := make([]byte, 1<<20)
			t.Fatalf("cut by the %s: %d goroutines before, %d after\n%s", cut, base, n, buf[:runtime.Stack(buf, true)])
		}
	}
}

// TestProxyCutErrors: the proxy takes the URL's host, which TLS would
// refuse, so an https URL is an error before anything is sent; and a
// server that cannot be reached is named as such, not as the resets the
// proxy would answer with.
func TestProxyCutErrors(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/mcp"
	ln.Close()
	for target, want := range map[string]string{
		"https://127.0.0.1:1/mcp": "needs an http:// URL",
		closed:                    "cannot reach " + closed,
	} {
		o := smallStorm(target)
		o.Cut = storm.CutProxy
		_, err := storm.Run(context.Background(), o)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want an error saying %q", target, err, want)
		}
	}
}

// TestWarmUp: with a server to sample, one session is set up and deleted
// before the server is first read, so its one-time costs are not charged
// to the storm's sessions; without one, nothing is sent before the storm.
func TestWarmUp(t *testing.T) {
	var inits, deletes atomic.Int32
	count := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodDelete {
				deletes.Add(1)
			} else if r.Method == http.MethodPost && r.Header.Get("Mcp-Session-Id") == "" {
				inits.Add(1)
			}
			next.ServeHTTP(w, r)
		})
	}
	h := wrapped(t, count)
	o := smallStorm(h.URL())
	o.Sessions, o.ReconnectDelay = 3, 0
	var firstInits, firstDeletes int32 = -1, -1
	o.Server = func() (storm.ProcStats, error) {
		if firstInits < 0 {
			firstInits, firstDeletes = inits.Load(), deletes.Load()
		}
		return storm.ProcStats{RSS: 1 << 20}, nil
	}
	run(t, o)
	if firstInits != 1 || firstDeletes != 1 {
		t.Fatalf("when the server was first read: %d sessions set up, %d deleted; want the warm-up's 1 and 1", firstInits, firstDeletes)
	}
	if got := inits.Load(); got != 1+int32(o.Sessions) {
		t.Fatalf("%d sessions set up, want the warm-up and %d", got, o.Sessions)
	}
	inits.Store(0)
	o.Server = nil
	run(t, o)
	if got := inits.Load(); got != int32(o.Sessions) {
		t.Fatalf("without a server to sample: %d sessions set up, want %d", got, o.Sessions)
	}
}

// TestOptionsValidate: bad options are errors, not hangs.
func TestOptionsValidate(t *testing.T) {
	for name, change := range map[string]func(*storm.Options){
		"no tool":        func(o *storm.Options) { o.Tool = "" },
		"zero sessions":  func(o *storm.Options) { o.Sessions = 0 },
		"cut after all":  func(o *storm.Options) { o.CutAfter = o.Notifications },
		"bad reconnect":  func(o *storm.Options) { o.Reconnect = "later" },
		"negative delay": func(o *storm.Options) { o.ReconnectDelay = -time.Second },
		"bad log level":  func(o *storm.Options) { o.LogLevel = "loud" },
		"no interval":    func(o *storm.Options) { o.Interval = 0 },
		"bad cut":        func(o *storm.Options) { o.Cut = "server" },
	} {
		o := smallStorm("http://127.0.0.1:1/mcp")
		change(&o)
		if err := o.Validate(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// BenchmarkStorm1000: a 1000-session storm of the reference in this
// process (client and server share the CPU): 20 notifications 100 ms
// apart per call, cut after 5, both reconnects.
func BenchmarkStorm1000(b *testing.B) {
	for b.Loop() {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		cfg := server.ShortTimings()
		cfg.MaxSessionsPerPrincipal = 2000
		h, err := server.NewHost(cfg, ln, server.HostOptions{})
		if err != nil {
			b.Fatal(err)
		}
		o := smallStorm(h.URL())
		o.Sessions, o.Concurrency, o.CutAfter, o.ReconnectDelay = 1000, 50, 5, 0
		o.Arguments, o.Notifications = map[string]any{"steps": 20, "interval_ms": 100}, 20
		o.Settle = 30 * time.Second
		res, err := storm.Run(context.Background(), o)
		h.Close()
		if err != nil {
			b.Fatal(err)
		}
		res.Judge(storm.Bounds{})
		if !res.Passed() {
			b.Fatalf("storm failed: %v", res.Failures)
		}
		b.ReportMetric(res.SessionsPerSecond, "sessions/s")
		b.ReportMetric(res.Headers[storm.KindResume].P50, "resume-p50-ms")
		b.ReportMetric(res.ClientCPUSeconds, "cpu-s")
	}
}

// TestResultAfterEveryNotification: a call whose notifications all arrive
// before the cut and whose result comes only on the resume is resumed, and
// its result counted (the storm once took such a session for complete at
// its last notification, never resumed it, and reported its result missing).
func TestResultAfterEveryNotification(t *testing.T) {
	srv := httptest.NewServer(resultOnResume(t, `"result":{"content":[]}`))
	defer srv.Close()
	res := run(t, resumeOnly(srv.URL))
	if !res.Passed() || res.ResultsMissing != 0 || res.Delivered != 6 {
		t.Fatalf("results missing %d, delivered %d, failures %v", res.ResultsMissing, res.Delivered, res.Failures)
	}
}

// TestCallErrorsCounted: a call answered with an error is a failure of
// its own, named with the error, besides what it did not deliver.
func TestCallErrorsCounted(t *testing.T) {
	srv := httptest.NewServer(resultOnResume(t, `"error":{"code":-32603,"message":"context canceled"}`))
	defer srv.Close()
	res := run(t, resumeOnly(srv.URL))
	want := "3 calls answered with an error (JSON-RPC error -32603: context canceled 3)"
	if res.Passed() || res.CallErrors["JSON-RPC error -32603: context canceled"] != 3 || !slices.Contains(res.Failures, want) {
		t.Fatalf("call errors %v, failures %v; want %q", res.CallErrors, res.Failures, want)
	}
}

// TestRefusalSaysWhy: a server that refuses the standalone GET cannot be
// stormed, and the error gives its status and what its body says, once
// for all the sessions.
func TestRefusalSaysWhy(t *testing.T) {
	var sessions atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodGet:
			http.Error(w, "no standalone stream here\nsecond line", http.StatusMethodNotAllowed)
		case r.Header.Get("Mcp-Session-Id") == "":
			w.Header().Set("Mcp-Session-Id", fmt.Sprintf("s%d", sessions.Add(1)))
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"no-get","version":"1"}}}`)
		default:
			w.WriteHeader(http.StatusAccepted)
		}
	}))
	defer srv.Close()
	_, err := storm.Run(context.Background(), resumeOnly(srv.URL))
	want := `none of 3 sessions could be set up: setup: standalone GET: HTTP 405 "no standalone stream here"`
	if err == nil || err.Error() != want {
		t.Fatalf("got %v, want %s", err, want)
	}
}

// resumeOnly is a storm of three sessions of resultOnResume that resume
// the call's stream only.
func resumeOnly(target string) storm.Options {
	return storm.Options{
		URL: target, Header: http.Header{}, Tool: "slow", Arguments: map[string]any{},
		Notifications: 2, Interval: 10 * time.Millisecond, Sessions: 3, Concurrency: 3, CutAfter: 1,
		Reconnect: storm.ReconnectResume, Settle: 10 * time.Second, RequestTimeout: 10 * time.Second,
	}
}

// resultOnResume is an MCP server whose one tool sends both its progress
// notifications at once and holds its stream without its answer (answer:
// the "result" or "error" member), which only a GET resuming the stream
// after the second notification gets.
func resultOnResume(t *testing.T, answer string) http.Handler {
	var mu sync.Mutex
	calls := map[string]json.RawMessage{} // session -> its call's id
	var sessions atomic.Int32
	sse := func(w http.ResponseWriter, events ...string) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		for _, ev := range events {
			io.WriteString(w, ev)
		}
		w.(http.Flusher).Flush()
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sid := r.Header.Get("Mcp-Session-Id")
		switch r.Method {
		case http.MethodDelete:
			w.WriteHeader(http.StatusNoContent)
			return
		case http.MethodGet:
			if r.Header.Get("Last-Event-ID") != "c_2" {
				sse(w)
				<-r.Context().Done()
				return
			}
			mu.Lock()
			id := calls[sid]
			mu.Unlock()
			sse(w, `id: c_3`+"\ndata: "+`{"jsonrpc":"2.0","id":`+string(id)+`,`+answer+`}`+"\n\n")
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
			w.Header().Set("Mcp-Session-Id", fmt.Sprintf("s%d", sessions.Add(1)))
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"result-on-resume","version":"1"}}}`)
		case "tools/call":
			mu.Lock()
			calls[sid] = m.ID
			mu.Unlock()
			note := func(n int) string {
				return fmt.Sprintf("id: c_%d\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":%s,\"progress\":%d,\"total\":2}}\n\n", n, m.Params.Meta.Token, n)
			}
			sse(w, note(1), note(2))
			<-r.Context().Done()
		default:
			w.WriteHeader(http.StatusAccepted)
		}
	})
}
