package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/mcp-conform/mcp-conform/internal/report"
	"github.com/mcp-conform/mcp-conform/internal/wire"
)

// maxHTMLReport bounds the HTML report of the embedded reference run.
const maxHTMLReport = 2 << 20

// htmlNodes returns the elements under n that match accepts.
func htmlNodes(n *html.Node, match func(*html.Node) bool) []*html.Node {
	var out []*html.Node
	for d := range n.Descendants() {
		if d.Type == html.ElementNode && match(d) {
			out = append(out, d)
		}
	}
	return out
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func hasClass(n *html.Node, class string) bool {
	return slices.Contains(strings.Fields(attr(n, "class")), class)
}

func text(n *html.Node) string {
	var b strings.Builder
	for d := range n.Descendants() {
		if d.Type == html.TextNode {
			b.WriteString(d.Data)
		}
	}
	return b.String()
}

// parsePage parses an HTML report.
func parsePage(t *testing.T, path string) *html.Node {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := html.Parse(f)
	if err != nil {
		t.Fatalf("HTML report: %v", err)
	}
	return doc
}

// checkClientLanes checks that the timeline of client check id has a lane
// for the client's first run and one for its first request.
func checkClientLanes(t *testing.T, path, id string) {
	t.Helper()
	doc := parsePage(t, path)
	lanes := map[string]bool{}
	for _, c := range htmlNodes(doc, func(n *html.Node) bool { return n.Data == "details" && attr(n, "id") == "c-"+id }) {
		for _, l := range htmlNodes(c, func(n *html.Node) bool { return hasClass(n, "lane") }) {
			lanes[attr(l, "data-lane")] = true
		}
	}
	if !lanes["run 1"] || !lanes["#1"] {
		t.Errorf("%s: lanes %v, want run 1 and #1", id, lanes)
	}
}

// checkHTMLTimeline parses an HTML report and checks that check id is in
// the summary with verdict, and that its timeline has the lanes of a check
// that cuts connections: the GET stream, the call's POST stream, a new
// stream after the cut, SSE events, and the refresh as a fault line.
func checkHTMLTimeline(t *testing.T, path, id, verdict string) {
	t.Helper()
	doc := parsePage(t, path)
	rows := htmlNodes(doc, func(n *html.Node) bool { return n.Data == "tr" && attr(n, "data-check") == "c-"+id })
	if len(rows) != 1 || !hasClass(rows[0], "v-"+verdict) {
		t.Fatalf("summary row of %s with verdict %s: found %d rows", id, verdict, len(rows))
	}
	checks := htmlNodes(doc, func(n *html.Node) bool { return n.Data == "details" && attr(n, "id") == "c-"+id })
	if len(checks) != 1 {
		t.Fatalf("no section for %s", id)
	}
	var labels []string
	exchanges := 0
	for _, l := range htmlNodes(checks[0], func(n *html.Node) bool { return hasClass(n, "lane") }) {
		if strings.HasPrefix(attr(l, "data-lane"), "#") {
			exchanges++
		}
		if ts := htmlNodes(l, func(n *html.Node) bool { return n.Data == "text" }); len(ts) > 0 {
			labels = append(labels, text(ts[0]))
		}
	}
	joined := strings.Join(labels, "; ")
	if exchanges < 4 || !strings.Contains(joined, "GET") || !strings.Contains(joined, "POST tools/call") {
		t.Errorf("%s: %d exchange lanes, labels %s; want initialize, the GET stream, the call's POST and a stream after the cut", id, exchanges, joined)
	}
	faults := htmlNodes(checks[0], func(n *html.Node) bool { return hasClass(n, "fault") })
	if len(faults) == 0 || !strings.Contains(text(faults[0]), "F-REFRESH") {
		t.Errorf("%s: %d fault lines, want the refresh", id, len(faults))
	}
	if sse := htmlNodes(checks[0], func(n *html.Node) bool { return hasClass(n, "k-sse") }); len(sse) < 3 {
		t.Errorf("%s: %d SSE event marks", id, len(sse))
	}
	if refs := htmlNodes(doc, func(n *html.Node) bool { return attr(n, "src") != "" || (n.Data == "link" && attr(n, "href") != "") }); len(refs) > 0 {
		t.Errorf("the report fetches %d external resources", len(refs))
	}
}

// TestE2EHTMLBrokenFixture: against a fixture that drops the notifications
// of a call whose POST stream died, the HTML report shows the failures and
// their timelines: the lanes before and after the cut, and the cut itself,
// drawn from the JSON report's timeline.
func TestE2EHTMLBrokenFixture(t *testing.T) {
	skipShort(t, "runs checks against a fixture")
	t.Parallel()
	page := filepath.Join(t.TempDir(), "r.html")
	r, _ := checkFixture(t, "orphaned-notifications-dropped", "../../fixtures/profile.yaml", exitFail,
		"--html", page, "--focus", "^(REDIRECT-ORPHANED|REPLAY-GAP):", "--suggest-profile", "")
	checkHTMLTimeline(t, page, "REDIRECT-ORPHANED", "fail")
	checkHTMLTimeline(t, page, "REPLAY-GAP", "fail")
	for _, c := range r.Checks {
		if c.ID == "REDIRECT-ORPHANED" && !slices.ContainsFunc(c.Timeline, func(e report.Event) bool { return e.Kind == report.KindFault }) {
			t.Errorf("REDIRECT-ORPHANED's JSON timeline has no fault: %+v", c.Timeline)
		}
	}
}

// TestE2ECutAfterOnTimeline: on the timeline of a check that arms F-CUT-AFTER
// before it sends its call, the fault line is where the proxy cut the
// call's stream, after the call and its events went out; the arming is a
// note.
func TestE2ECutAfterOnTimeline(t *testing.T) {
	skipShort(t, "runs a check against the reference")
	t.Parallel()
	js := filepath.Join(t.TempDir(), "r.json")
	out, errOut, code := runSelf(t, time.Minute, "server", "--protocol-version", wire.DefaultProtocolVersion, "--focus", "^EVT-REPLAY-POST:", "--json", js)
	if code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	var c *report.Check
	for _, ch := range readRun(t, js).Checks {
		if ch.ID == "EVT-REPLAY-POST" {
			c = &ch
		}
	}
	if c == nil || c.Verdict != report.Pass {
		t.Fatalf("EVT-REPLAY-POST: %+v", c)
	}
	var armed, cut, call *report.Event // the first of each; the call after the arming
	events := map[string]int{}         // SSE events per lane
	for i, e := range c.Timeline {
		switch {
		case e.Kind == report.KindNote && strings.HasPrefix(e.Text, "F-CUT-AFTER armed") && armed == nil:
			armed = &c.Timeline[i]
		case e.Kind == report.KindFault && strings.HasPrefix(e.Text, "!! F-CUT-AFTER") && cut == nil:
			cut = &c.Timeline[i]
		case e.Kind == report.KindRequest && strings.Contains(e.Text, "tools/call") && armed != nil && call == nil:
			call = &c.Timeline[i]
		case e.Kind == report.KindSSE || e.Kind == report.KindRetry:
			events[e.Lane]++
		}
	}
	if armed == nil || cut == nil || call == nil {
		t.Fatalf("arming note %v, cut %v, call %v in %+v", armed, cut, call, c.Timeline)
	}
	if cut.Text != "!! F-CUT-AFTER: stream cut after 3 events" || cut.At < call.At || armed.At > call.At {
		t.Errorf("armed at %.3fs, call at %.3fs, cut at %.3fs (%q): want the cut after the call", armed.At, call.At, cut.At, cut.Text)
	}
	if events[call.Lane] < 3 {
		t.Errorf("the call's lane %s has %d SSE events before its cut", call.Lane, events[call.Lane])
	}
}
