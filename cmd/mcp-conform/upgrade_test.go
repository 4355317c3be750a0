package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// upgradeHop is one request the client sent through the recording proxy.
type upgradeHop struct {
	run              int
	httpMethod       string
	rpcMethod        string
	version, session string // the request's MCP-Protocol-Version and Mcp-Session-Id
	status           int
	respSession      string
	modernMeta       bool
}

func (h upgradeHop) String() string {
	return fmt.Sprintf("\n  run %d: %s %s (version %q, session %q) -> %d", h.run, h.httpMethod, h.rpcMethod, h.version, h.session, h.status)
}

// modern reports a request of 2026-07-28.
func (h upgradeHop) modern() bool {
	return h.version == "2026-07-28" || h.rpcMethod == "server/discover" || h.modernMeta
}

// upgradeProxy stands at one URL in front of a reference server that
// restarts, and records what the client sends.
type upgradeProxy struct {
	mu   sync.Mutex
	run  int
	hops []upgradeHop
}

// statusWriter calls onHeader when the answer's status is written, before
// the client can have read any of it.
type statusWriter struct {
	http.ResponseWriter
	onHeader func(status int)
}

func (w *statusWriter) WriteHeader(code int) {
	w.onHeader(code)
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Flush() { http.NewResponseController(w.ResponseWriter).Flush() }

func (p *upgradeProxy) handler(backend *url.URL) http.Handler {
	rp := httputil.NewSingleHostReverseProxy(backend)
	rp.FlushInterval = -1 // SSE answers pass at once
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var m struct {
			Method string `json:"method"`
			Params struct {
				Meta map[string]any `json:"_meta"`
			} `json:"params"`
		}
		json.Unmarshal(body, &m)
		_, meta := m.Params.Meta["io.modelcontextprotocol/protocolVersion"]
		rp.ServeHTTP(&statusWriter{ResponseWriter: w, onHeader: func(status int) {
			p.mu.Lock()
			defer p.mu.Unlock()
			p.hops = append(p.hops, upgradeHop{run: p.run, httpMethod: r.Method, rpcMethod: m.Method, modernMeta: meta,
				version: r.Header.Get("Mcp-Protocol-Version"), session: r.Header.Get("Mcp-Session-Id"),
				status: status, respSession: w.Header().Get("Mcp-Session-Id")})
		}}, r)
	})
}

// startRun numbers the requests of the client run that follows.
func (p *upgradeProxy) startRun(n int) {
	p.mu.Lock()
	p.run = n
	p.mu.Unlock()
}

func (p *upgradeProxy) hopsOf(n int) []upgradeHop {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []upgradeHop
	for _, h := range p.hops {
		if h.run == n {
			out = append(out, h)
		}
	}
	return out
}

// startReference runs the reference server binary on addr speaking
// revisions, and returns once it listens; the test kills it.
func startReference(t *testing.T, bin, addr, revisions string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(bin, "reference-server", "--addr", addr, "--revisions", revisions)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	ready := make(chan string, 1)
	go func() {
		l, _ := bufio.NewReader(stdout).ReadString('\n')
		ready <- l
		io.Copy(io.Discard, stdout)
	}()
	select {
	case l := <-ready:
		if !strings.HasPrefix(l, "listening on ") {
			t.Fatalf("reference-server --revisions %s: stdout %q, stderr:\n%s", revisions, l, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("reference-server --revisions %s did not listen within 30s; stderr:\n%s", revisions, stderr.String())
	}
	return cmd
}

// TestCallAcrossUpgrade: the reference client of 2026-07-28 completes a
// call at each step of a rolling upgrade and its rollback of the
// reference server on one port, killed and started again with another
// --revisions, the client keeping its state directory: at a 2025-11-25
// server it falls back to a session; restarted as 2026-07-28 only, its
// first request on that session is refused with -32022, and that one
// request is all the old session gets: with no initialize, GET or ping
// it asks server/discover and calls without a session; rolled back to
// 2025-11-25 only, its call of 2026-07-28 is refused with a 400 holding no error of
// 2026-07-28, and it initializes a session and calls there. No step loops.
func TestCallAcrossUpgrade(t *testing.T) {
	bin := buildCLI(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	p := &upgradeProxy{}
	ps := httptest.NewServer(p.handler(&url.URL{Scheme: "http", Host: addr}))
	defer ps.Close()
	dir := t.TempDir()
	call := func(n int, text string) []upgradeHop {
		t.Helper()
		p.startRun(n)
		ls, code, stderr := callRun(t, "--state-dir", dir, "--url", ps.URL+"/mcp", "--protocol-version", "2026-07-28", "echo", fmt.Sprintf(`{"text":%q}`, text))
		hops := p.hopsOf(n)
		t.Logf("run %d:\n%v", n, hops)
		var got string
		for _, l := range ls {
			if l.Type == "result" {
				got = l.text(t)
			}
		}
		if code != exitOK || got != text {
			t.Fatalf("run %d: exit %d, result %q, want %q\nrequests:\n%v\nstderr:\n%s", n, code, got, text, hops, stderr)
		}
		return hops
	}
	initializes := func(hops []upgradeHop) (n int, sid string) {
		for _, h := range hops {
			if h.rpcMethod == "initialize" && h.respSession != "" {
				n, sid = n+1, h.respSession
			}
		}
		return n, sid
	}
	calls := func(hops []upgradeHop) (out []upgradeHop) {
		for _, h := range hops {
			if h.rpcMethod == "tools/call" {
				out = append(out, h)
			}
		}
		return out
	}

	srv := startReference(t, bin, addr, "2025-11-25")
	hops := call(1, "one")
	n, oldSID := initializes(hops)
	if n != 1 {
		t.Fatalf("run 1 at a 2025-11-25 server made %d sessions, want 1:\n%v", n, hops)
	}

	srv.Process.Kill()
	srv.Wait()
	srv = startReference(t, bin, addr, "2026-07-28")
	hops = call(2, "two")
	if len(hops) == 0 || hops[0].session != oldSID || hops[0].status != http.StatusBadRequest || hops[0].modern() {
		t.Fatalf("run 2 did not begin with a request on its session %s that the 2026-07-28 server refused:\n%v", oldSID, hops)
	}
	// That refusal (-32022 listing 2026-07-28) is the news: from then on
	// the client speaks 2026-07-28 alone, as CLI-UPGRADE grades, and
	// presents its session no more.
	discovers := 0
	for _, h := range hops[1:] {
		if h.session != "" || h.rpcMethod == "initialize" || h.rpcMethod == "ping" || h.httpMethod == http.MethodGet || !h.modern() {
			t.Errorf("after the -32022 the client sent %v to a server of 2026-07-28 alone; all:\n%v", h, hops)
		}
		if h.rpcMethod == "server/discover" {
			discovers++
		}
	}
	if c := calls(hops[1:]); discovers != 1 || len(c) != 1 {
		t.Errorf("after the refusal: %d server/discover and %d tools/call, want 1 of each:\n%v", discovers, len(c), hops)
	}

	srv.Process.Kill()
	srv.Wait()
	startReference(t, bin, addr, "2025-11-25")
	hops = call(3, "three")
	refused := -1
	for i, h := range hops {
		if h.status == http.StatusBadRequest && h.modern() {
			refused = i
			break
		}
	}
	if refused < 0 {
		t.Fatalf("run 3 sent nothing of 2026-07-28 that the 2025-11-25 server refused:\n%v", hops)
	}
	after := hops[refused+1:]
	modern := 0
	for _, h := range after {
		if h.modern() {
			modern++
		}
	}
	n, sid := initializes(after)
	c := calls(after)
	if modern > 2 || n != 1 || len(c) != 1 || c[0].session != sid {
		t.Errorf("after the refusal: %d more requests of 2026-07-28 (at most 2: a probe and a retry), %d sessions made (want 1), %d tools/call (want 1, on the new session):\n%v", modern, n, len(c), hops)
	}
}
