package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/mcp-conform/mcp-conform/fixtures/servers"
)

// TestStormCommand: a small storm passes on the embedded reference (exit
// 0, JSON and HTML written) and fails on a server that loses messages
// written to reset connections (exit 1, the HTML shows the loss); bad
// flags exit 2.
func TestStormCommand(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	stormRun := func(args ...string) (string, int) {
		var out, errb bytes.Buffer
		code := run(ctx, append([]string{"storm"}, args...), &out, &errb)
		return out.String() + errb.String(), code
	}
	small := []string{"--sessions", "8", "--concurrency", "8", "--arguments", `{"steps":8,"interval_ms":100}`,
		"--notifications", "8", "--interval", "100ms", "--cut-after", "3", "--reconnect-delay", "300ms", "--settle", "3s"}

	js, page := filepath.Join(t.TempDir(), "storm.json"), filepath.Join(t.TempDir(), "storm.html")
	out, code := stormRun(append(small, "--json", js, "--html", page)...)
	if code != exitOK || !strings.Contains(out, "PASS") {
		t.Fatalf("embedded reference: exit %d, want 0:\n%s", code, out)
	}
	var res struct {
		Lost      int `json:"notifications_lost"`
		Delivered int `json:"notifications_delivered"`
	}
	if b, err := os.ReadFile(js); err != nil || json.Unmarshal(b, &res) != nil || res.Lost != 0 || res.Delivered != 64 {
		t.Fatalf("--json: %v %+v", err, res)
	}
	checkStormPage(t, page, true, 64, 0)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h, err := servers.DeadStreamsForget().Host(servers.Config(), ln)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	profile := filepath.Join(t.TempDir(), "profile.yaml")
	if err := os.WriteFile(profile, []byte(`tools:
  notifying: {name: long_operation, notifications: 5, interval: 200ms}
principals: [{name: alice, token: alice-token}, {name: bob, token: bob-token}]
`), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code = stormRun(append(small, "--url", h.URL(), "--target-profile", profile, "--json", js, "--html", page)...)
	if code != exitFail || !strings.Contains(out, "notifications lost") {
		t.Fatalf("dead-streams-forget: exit %d, want 1 with lost notifications:\n%s", code, out)
	}
	var lost struct {
		Lost      int `json:"notifications_lost"`
		Delivered int `json:"notifications_delivered"`
	}
	if b, err := os.ReadFile(js); err != nil || json.Unmarshal(b, &lost) != nil || lost.Lost == 0 {
		t.Fatalf("--json: %v %+v", err, lost)
	}
	checkStormPage(t, page, false, lost.Delivered, lost.Lost)

	for _, bad := range [][]string{
		{"--sessions", "0"},
		{"--reconnect", "later"},
		{"--cut", "server"},
		{"--url", "http://127.0.0.1:1/mcp"}, // no profile
		{"--arguments", "[]", "--notifications", "5"},
		{"--server-cmd", "true"},
		{"--html", "/no/such/dir/storm.html"},
		{"--url", "http://127.0.0.1:{port}/mcp", "--target-profile", profile},
		{"--url", "http://127.0.0.1:1/mcp", "--target-profile", profile},                   // nothing listens
		{"--url", "http://127.0.0.1:1/mcp", "--target-profile", profile, "--cut", "proxy"}, // nor behind the proxy
		{"extra"},
	} {
		if out, code := stormRun(bad...); code != exitUsage {
			t.Errorf("%v: exit %d, want 2:\n%s", bad, code, out)
		}
	}
}

// checkStormPage parses a storm's HTML page: its verdict, and the chart of
// where the notifications arrived, whose bars add up to the delivered
// ones, beside a lost bar (red when some were lost); a failing page lists
// why and charts the lost steps.
func checkStormPage(t *testing.T, path string, passed bool, delivered, lost int) {
	t.Helper()
	doc := parsePage(t, path)
	h1 := htmlNodes(doc, func(n *html.Node) bool { return n.Data == "h1" })
	if want := map[bool]string{true: "PASSED", false: "FAILED"}[passed]; len(h1) != 1 || !strings.HasSuffix(text(h1[0]), want) {
		t.Errorf("storm page heading, want %s", want)
	}
	charts := htmlNodes(doc, func(n *html.Node) bool { return n.Data == "svg" && hasClass(n, "bars") })
	if len(charts) == 0 {
		t.Fatal("no chart on the storm page")
	}
	on, lostBar := 0, -1
	for _, b := range htmlNodes(charts[0], func(n *html.Node) bool { return hasClass(n, "bar") }) {
		n, err := strconv.Atoi(attr(b, "data-n"))
		if err != nil {
			t.Fatalf("bar %q: %v", attr(b, "data-label"), err)
		}
		switch label := attr(b, "data-label"); {
		case strings.HasPrefix(label, "on "):
			on += n
		case label == "lost":
			lostBar = n
			if hasClass(b, "fail") != (lost > 0) {
				t.Errorf("the lost bar's class: %q with %d lost", attr(b, "class"), lost)
			}
		}
	}
	if on != delivered || lostBar != lost {
		t.Errorf("the chart of arrivals: %d on the streams, %d lost; want %d and %d", on, lostBar, delivered, lost)
	}
	fails := htmlNodes(doc, func(n *html.Node) bool { return n.Data == "ul" && hasClass(n, "failures") })
	if passed != (len(fails) == 0) {
		t.Errorf("%d lists of failures on a page that passed=%v", len(fails), passed)
	}
	if !passed && len(charts) < 2 {
		t.Errorf("a storm that lost notifications has %d charts, want the lost steps too", len(charts))
	}
	if refs := htmlNodes(doc, func(n *html.Node) bool { return attr(n, "src") != "" || (n.Data == "link" && attr(n, "href") != "") }); len(refs) > 0 {
		t.Errorf("the storm page fetches %d external resources", len(refs))
	}
}
