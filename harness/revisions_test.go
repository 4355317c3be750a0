package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/internal/report"
	"github.com/mcp-conform/mcp-conform/suites"
	"github.com/mcp-conform/mcp-conform/suites/kit"
)

func TestParseRevisions(t *testing.T) {
	for in, want := range map[string]string{
		"all":                              "2025-11-25 2026-07-28",
		"2026-07-28, 2025-11-25":           "2025-11-25 2026-07-28",
		"2025-11-25,2025-11-25":            "2025-11-25",
		"2025-06-18,2025-11-25,2026-07-28": "2025-06-18 2025-11-25 2026-07-28",
	} {
		got, err := parseRevisions(in)
		if err != nil || strings.Join(got, " ") != want {
			t.Errorf("%q: %v %v, want %s", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "both", "2025-11-25,", "2025-11-25;2026-07-28"} {
		if _, err := parseRevisions(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// TestEngineRevisions: a check run at two revisions gives two verdicts,
// named ID@revision; a bare --expected-failures ID expects the failure at
// both (a pass at one is stale), ID@revision at that one alone; a check
// is blocked only by its root at its own revision.
func TestEngineRevisions(t *testing.T) {
	origin, durable, fast := suites.MustLookup("ORIGIN-403"), suites.MustLookup("TASK-DURABLE-CREATE"), suites.MustLookup("TASK-CREATE-FAST")
	pass := func(*kit.T) {}
	fail := func(k *kit.T) { k.Failf("broken") }
	at := func(e catalogue.Entry, rev string, body func(*kit.T)) job {
		return job{Check: kit.Check{Entry: e, Run: body}, revision: rev}
	}
	jobs := []job{
		at(origin, "2025-11-25", pass), at(durable, "2025-11-25", pass), at(fast, "2025-11-25", fail),
		at(origin, "2026-07-28", fail), at(durable, "2026-07-28", fail), at(fast, "2026-07-28", fail),
	}
	for _, tt := range []struct {
		expected map[string]bool
		want     string
	}{
		{nil, "pass pass fail fail fail blocked"},
		{map[string]bool{"ORIGIN-403": true}, "stale pass fail expected-failure fail blocked"},
		{map[string]bool{"ORIGIN-403@2026-07-28": true}, "pass pass fail expected-failure fail blocked"},
		{map[string]bool{"ORIGIN-403@2025-11-25": true}, "stale pass fail fail fail blocked"},
	} {
		en := &engine{parallel: 2, margin: 5 * time.Second, strict: true, expected: tt.expected, progress: &bytes.Buffer{}}
		got := en.runJobs(context.Background(), jobs, func(job) bool { return true })
		var verdicts, names []string
		for _, c := range got {
			verdicts, names = append(verdicts, string(c.Verdict)), append(names, c.Name())
		}
		if strings.Join(verdicts, " ") != tt.want {
			t.Errorf("baseline %v: %s, want %s", tt.expected, strings.Join(verdicts, " "), tt.want)
		}
		if names[0] != "ORIGIN-403@2025-11-25" || names[3] != "ORIGIN-403@2026-07-28" {
			t.Errorf("names %v", names)
		}
		if by := got[5].BlockedBy; !slices.Equal(by, []string{"TASK-DURABLE-CREATE@2026-07-28"}) {
			t.Errorf("TASK-CREATE-FAST@2026-07-28 blocked by %v, want its root at its own revision", by)
		}
	}
	// A run of one revision matches ID@revision against its revision.
	en := &engine{parallel: 1, margin: 5 * time.Second, revision: "2026-07-28", expected: map[string]bool{"ORIGIN-403@2026-07-28": true}, progress: &bytes.Buffer{}}
	got := en.run(context.Background(), []kit.Check{{Entry: origin, Run: fail}}, func(catalogue.Entry) bool { return true })
	if got[0].Verdict != report.ExpectedFailure || got[0].Name() != "ORIGIN-403" {
		t.Errorf("single run: %s %s, want an expected failure named ORIGIN-403", got[0].Name(), got[0].Verdict)
	}
	en.revision = "2025-11-25"
	if got := en.run(context.Background(), []kit.Check{{Entry: origin, Run: fail}}, func(catalogue.Entry) bool { return true }); got[0].Verdict != report.Fail {
		t.Errorf("ORIGIN-403@2026-07-28 listed, a 2025-11-25 run's failure is %s, want fail", got[0].Verdict)
	}
}

// TestRevisionOptions: --focus names a check at one revision in a run of
// several (and matches nothing so in a run of one); a baseline entry
// names a check at a revision it runs at, with a revision's shape.
func TestRevisionOptions(t *testing.T) {
	valid := func(version, focus string, expected ...string) error {
		o := Options{ProtocolVersion: version, Focus: focus}
		if len(expected) > 0 {
			o.ExpectedFailures = map[string]bool{}
			for _, e := range expected {
				o.ExpectedFailures[e] = true
			}
		}
		return o.validate()
	}
	if err := valid("all", "ORIGIN-403@2026-07-28"); err != nil {
		t.Error(err)
	}
	if err := valid("2025-11-25", "ORIGIN-403@2026-07-28"); err == nil || !strings.Contains(err.Error(), "matches no server check") {
		t.Errorf("a run of one revision: %v, want --focus to match nothing", err)
	}
	if err := valid("all", "MODERN-GET-405@2025-11-25"); err == nil {
		t.Error("--focus on a check at a revision it does not run at: no error")
	}
	if err := valid("all", "", "ORIGIN-403", "MODERN-GET-405@2026-07-28", "SESS-DELETE@2025-11-25"); err != nil {
		t.Error(err)
	}
	if err := valid("all", "", "MODERN-GET-405@2025-11-25"); err == nil || !strings.Contains(err.Error(), "MODERN-GET-405@2025-11-25") {
		t.Errorf("a baseline entry at a revision the check does not run at: %v", err)
	}
	if err := valid("all", "", "ORIGIN-403@latest"); err == nil || !strings.Contains(err.Error(), "ORIGIN-403@latest") {
		t.Errorf("a baseline entry with no revision after @: %v", err)
	}

	o := Options{ProtocolVersion: "all", Focus: "^ORIGIN-403$|TASK-MCP-NAME@"}
	if err := o.validate(); err != nil {
		t.Fatal(err)
	}
	var chosen []string
	for _, j := range o.allJobs() {
		if o.jobSelector()(j) {
			chosen = append(chosen, j.name())
		}
	}
	if got := strings.Join(chosen, " "); got != "ORIGIN-403@2025-11-25 ORIGIN-403@2026-07-28 TASK-MCP-NAME@2026-07-28" {
		t.Errorf("--focus chose %s", got)
	}
	for _, j := range o.allJobs() {
		if j.revision == "2026-07-28" && !appliesAt(j.Entry.ID, j.revision) || j.Entry.ID == "TASK-SURVIVES-REFRESH" && j.revision == "2026-07-28" {
			t.Errorf("%s listed at a revision where it does not run", j.name())
		}
	}
}

// TestSuggestProfileAtRevisions: asked for several revisions (init
// --protocol-version all), SuggestProfile lists the tools at the first of
// the sessions' era, never offering "all" as a protocol version.
func TestSuggestProfileAtRevisions(t *testing.T) {
	var mu sync.Mutex
	var offered []string
	stub := &stubMCP{version: "2025-11-25"}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var m struct {
			Method string `json:"method"`
			Params struct {
				ProtocolVersion string `json:"protocolVersion"`
			} `json:"params"`
		}
		_ = json.Unmarshal(body, &m)
		if m.Method == "initialize" {
			mu.Lock()
			offered = append(offered, m.Params.ProtocolVersion)
			mu.Unlock()
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		stub.ServeHTTP(w, r)
	}))
	defer srv.Close()
	if _, err := SuggestProfile(context.Background(), srv.URL, AllRevisions, nil); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(offered) == 0 || slices.ContainsFunc(offered, func(v string) bool { return v != "2025-11-25" }) {
		t.Errorf("initialize offered %q, want 2025-11-25 each time", offered)
	}
}
