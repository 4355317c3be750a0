package main

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-conform/mcp-conform/internal/report"
)

// TestE2EInitThirdParty: init against a server nobody here built (the Go
// SDK's, as fixtures/thirdparty/gosdk serves it), then server with the
// files it wrote, exits 0; the same server behind a proxy that answers
// 400 where it answers 404 for an unknown session (one behaviour broken)
// fails it. make conform-thirdparty runs it, with the peer it builds in
// $GOSDK_PEER.
func TestE2EInitThirdParty(t *testing.T) {
	peer := os.Getenv("GOSDK_PEER")
	if testing.Short() || peer == "" {
		t.Skip("needs the Go SDK peer in $GOSDK_PEER (make conform-thirdparty builds it)")
	}
	target := startPeer(t, peer)
	dir := t.TempDir()
	out, errOut, code := runSelf(t, suiteTimeout, "init", "--dir", dir, "--url", target, "--bearer-token", "alice-token")
	if code != exitOK {
		t.Fatalf("init: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	again := func(url string, want int) *report.Run {
		t.Helper()
		js := filepath.Join(t.TempDir(), "r.json")
		out, errOut, code := runSelf(t, suiteTimeout, "server", "--url", url, "--target-profile", filepath.Join(dir, initProfile),
			"--expected-failures", filepath.Join(dir, initExpected), "--json", js)
		if code != want {
			t.Fatalf("server --url %s with init's files: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", url, code, want, out, errOut)
		}
		return readRun(t, js)
	}
	again(target, exitOK)

	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: u.Scheme, Host: u.Host})
	proxy.ModifyResponse = func(r *http.Response) error {
		if r.StatusCode == http.StatusNotFound && r.Request.Header.Get("Mcp-Session-Id") != "" {
			r.StatusCode, r.Status = http.StatusBadRequest, "400 Bad Request"
		}
		return nil
	}
	broken := httptest.NewServer(proxy)
	t.Cleanup(broken.Close)
	r := again(broken.URL+u.Path, exitFail)
	if c := resultOf(r, "SESS-UNKNOWN-404"); c.Verdict != report.Fail {
		t.Errorf("behind the proxy: SESS-UNKNOWN-404 %s %q, want fail", c.Verdict, c.Message)
	}
}

// startPeer starts the Go SDK peer binary as start.sh does, on a free
// port, and returns its endpoint once it listens.
func startPeer(t *testing.T, bin string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "--addr", "127.0.0.1:0", "--session-timeout", "4s",
		"--bearer-token", "alice=alice-token", "--bearer-token", "alice=alice-token-refreshed", "--bearer-token", "bob=bob-token")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); cmd.Wait() })
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if u, ok := strings.CutPrefix(sc.Text(), "listening on "); ok {
			go func() {
				for sc.Scan() {
				}
			}()
			return u
		}
	}
	t.Fatalf("%s ended without a listening line: %v", bin, sc.Err())
	return ""
}
