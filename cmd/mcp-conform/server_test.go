package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/internal/report"
	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/reference/server"
	"github.com/mcp-conform/mcp-conform/suites"
)

// TestServerSetupErrors: bad flags, bad files, unreachable and non-MCP
// targets exit 2 with one clear message before any check runs.
func TestServerSetupErrors(t *testing.T) {
	html := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte("<html>Not Found</html>"))
	}))
	defer html.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/mcp"
	ln.Close()
	badProfile := filepath.Join(t.TempDir(), "p.yaml")
	if err := os.WriteFile(badProfile, []byte("tools: {stateful: {}}"), 0o644); err != nil {
		t.Fatal(err)
	}
	baseline := filepath.Join(t.TempDir(), "expected.txt")
	if err := os.WriteFile(baseline, []byte("NOT-AN-ID # comment\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"server", "--checks", "fast"}, "--checks must be spec, resilience or all"},
		{[]string{"server", "--profile", "fast"}, "--checks must be spec, resilience or all"},
		{[]string{"server", "--parallel", "0"}, "--parallel must be 1 or more, got 0"},
		{[]string{"server", "--url", "ftp://x/mcp"}, "--url must be an http:// or https:// URL"},
		{[]string{"server", "--url", "http://127.0.0.1:{port}/mcp"}, "no --server-cmd"},
		{[]string{"server", "--server-cmd", "true"}, "--server-cmd needs --url"},
		{[]string{"server", "--server-cmd", "x {port}", "--url", "http://127.0.0.1:1/mcp"}, "must both use {port}"},
		{[]string{"server", "--label-filter", "sessions &&"}, "--label-filter"},
		{[]string{"server", "--focus", "("}, "--focus"},
		{[]string{"server", "--protocol-version", "latest"}, "--protocol-version must look like"},
		{[]string{"server", "--junit", "/no/such/dir/j.xml"}, "report directory /no/such/dir does not exist"},
		{[]string{"server", "--target-profile", badProfile}, "tools.stateful.name is empty"},
		{[]string{"server", "--expected-failures", baseline}, "not server checks: NOT-AN-ID"},
		{[]string{"server", "--expected-failures", "/no/such/file"}, "--expected-failures"},
		{[]string{"server", "extra"}, "unexpected arguments"},
		{[]string{"server", "--url", closed}, "cannot reach " + closed},
		{[]string{"server", "--url", html.URL + "/mcp"}, "does not answer like an MCP Streamable HTTP endpoint: initialize got HTTP 404 (text/html)"},
		{[]string{"server", "--server-cmd", "exit 3 # {port}", "--url", "http://127.0.0.1:{port}/mcp"}, "exited before"},
		{[]string{"list", "--yaml"}, "flag provided but not defined"},
		{[]string{"fixture", "no-such-fixture"}, "unknown fixture"},
		{[]string{"fixture"}, "want exactly one fixture name"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), tc.args, &stdout, &stderr)
		if code != exitUsage || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 containing %q", tc.args, code, stderr.String(), tc.want)
		}
		if strings.Count(strings.TrimSpace(stderr.String()), "\n") > 3 && !strings.Contains(tc.want, "exited") && !strings.Contains(tc.want, "flag provided") {
			t.Errorf("%v: want one clear message, got:\n%s", tc.args, stderr.String())
		}
	}
}

// TestList prints every catalogue entry, as a table and as JSON.
func TestList(t *testing.T) {
	var out bytes.Buffer
	if code := run(context.Background(), []string{"list"}, &out, &out); code != exitOK {
		t.Fatalf("exit %d: %s", code, out.String())
	}
	for _, e := range suites.All() {
		if !strings.Contains(out.String(), e.ID) {
			t.Errorf("list lacks %s", e.ID)
		}
	}
	if !strings.Contains(out.String(), "tools.notifying") || !strings.Contains(out.String(), "--server-cmd") || !strings.Contains(out.String(), "--replica-url") {
		t.Errorf("list does not say what checks need:\n%s", out.String())
	}
	if want := "Fixes: the TypeScript SDK 1.x docs/recipes/typescript-sdk.md#origin-403"; !strings.Contains(out.String(), want) {
		t.Errorf("list does not name ORIGIN-403's recipes (%q)", want)
	}
	out.Reset()
	if code := run(context.Background(), []string{"list", "--json"}, &out, &out); code != exitOK {
		t.Fatalf("exit %d", code)
	}
	var entries []struct {
		catalogue.Entry
		Fixes []catalogue.Recipe `json:"fixes"`
	}
	if err := json.Unmarshal(out.Bytes(), &entries); err != nil || len(entries) != len(suites.All()) {
		t.Fatalf("list --json: %v, %d entries", err, len(entries))
	}
	for _, e := range entries {
		if want := catalogue.Recipes(e.ID); len(e.Fixes) != len(want) {
			t.Errorf("list --json: %s has %d fixes, want %d", e.ID, len(e.Fixes), len(want))
		}
	}
}

// TestProfileCommand: 'profile' describes a server without running checks:
// its tools, with the reference's notifying and stateful tools as the
// likely candidates; a missing --url is a usage error.
func TestProfileCommand(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h, err := server.NewHost(server.Config{}, ln, server.HostOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"profile", "--url", h.URL()}, &out, &errOut); code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	for _, want := range []string{"advertises (5):\n#   - \"counter_increment\"\n#   - \"echo\"\n#   - \"job_get\"\n#   - \"job_start\"\n#   - \"long_operation\"\n", `#     name: "long_operation"`, `#     name: "counter_increment"`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("profile lacks %q:\n%s", want, out.String())
		}
	}
	if code := run(context.Background(), []string{"profile"}, io.Discard, &errOut); code != exitUsage || !strings.Contains(errOut.String(), "--url is required") {
		t.Errorf("profile without --url: exit %d, %q", code, errOut.String())
	}

	// A run without a profile says what each missing key would enable, as
	// docs/server-mode.md's example (generated from the catalogue) says, and writes the
	// same suggestion. ORIGIN-403 runs, with the default foreign origin, and
	// GET-NO-RESPONSES, EVT-ID-UNIQUE and SSE-PRIMING on ping and tools/list;
	// GET-PRIMED needs no tool.
	path := filepath.Join(t.TempDir(), "suggested.yaml")
	jsonPath := filepath.Join(t.TempDir(), "run.json")
	out.Reset()
	if code := run(context.Background(), []string{"server", "--url", h.URL(), "--protocol-version", "2025-11-25", "--suggest-profile", path, "--json", jsonPath}, &out, &errOut); code != exitOK {
		t.Fatalf("server without a profile: exit %d\n%s\n%s", code, out.String(), errOut.String())
	}
	summary := readmeMissingSummary(t)
	if !strings.Contains(out.String(), summary) {
		t.Errorf("the summary of missing keys is not docs/server-mode.md's:\n%s\nwant:\n%s", out.String(), summary)
	}
	for _, c := range readRun(t, jsonPath).Checks {
		switch c.ID {
		case "ORIGIN-403", "GET-NO-RESPONSES", "EVT-ID-UNIQUE", "SSE-PRIMING", "GET-PRIMED":
			if c.Verdict != report.Pass {
				t.Errorf("%s with no profile: %s %s", c.ID, c.Verdict, c.Message)
			}
		}
	}
	if data, err := os.ReadFile(path); err != nil || !strings.Contains(string(data), `#     name: "long_operation"`) {
		t.Errorf("suggested profile %s: %v\n%s", path, err, data)
	}
	if code := run(context.Background(), []string{"server", "--url", h.URL(), "--suggest-profile", "/nonexistent/x.yaml"}, io.Discard, &errOut); code != exitUsage || !strings.Contains(errOut.String(), "directory /nonexistent does not exist") {
		t.Errorf("--suggest-profile in a missing directory: exit %d, %q", code, errOut.String())
	}
}

// TestLabelFilterSelects: --label-filter runs exactly the server checks
// whose labels (side, section, profile, level) satisfy the expression; the
// others are reported as not selected. The expression mixes || and && so
// that the grammar, not only a single label, is exercised.
func TestLabelFilterSelects(t *testing.T) {
	t.Parallel()
	js := filepath.Join(t.TempDir(), "r.json")
	out, errOut, code := runSelf(t, suiteTimeout, "server", "--protocol-version", wire.DefaultProtocolVersion, "--label-filter", "jsonrpc || (envelope && res)",
		"--json", js, "--suggest-profile", "")
	if code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	want := map[string]bool{}
	for _, e := range suites.All() {
		if e.Side == catalogue.Server && (slices.Contains(e.Labels(), "jsonrpc") ||
			slices.Contains(e.Labels(), "envelope") && slices.Contains(e.Labels(), "res")) {
			want[e.ID] = true
		}
	}
	if len(want) < 2 {
		t.Fatalf("the expression selects %d catalogue entries; the test wants two sections' worth", len(want))
	}
	r := readRun(t, js)
	ran := 0
	for _, c := range r.Checks {
		unselected := c.Verdict == report.Skip && c.Cause == report.NotSelected
		switch {
		case want[c.ID] && unselected:
			t.Errorf("%s has the labels but was not selected", c.ID)
		case want[c.ID] && c.Verdict != report.Pass:
			t.Errorf("%s: %s %q against the reference", c.ID, c.Verdict, c.Message)
		case !want[c.ID] && !unselected:
			t.Errorf("%s (labels %v) ran: %s %q", c.ID, suites.MustLookup(c.ID).Labels(), c.Verdict, c.Message)
		}
		if want[c.ID] {
			ran++
		}
	}
	if ran != len(want) {
		t.Errorf("the report holds %d of the %d selected checks", ran, len(want))
	}
	if n := strings.Count(out, "\n["); n != len(want) {
		t.Errorf("%d progress lines, want one per selected check (%d):\n%s", n, len(want), out)
	}
}

// readmeMissingSummary is the summary lines of docs/server-mode.md's
// no-profile example (the generated block, less the line naming the
// profile file).
func readmeMissingSummary(t *testing.T) string {
	data, err := os.ReadFile("../../docs/server-mode.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(data), "<!-- missing-key summary: generated by go test ./harness -run TestDocBlocks -update -->\n```\n")
	block, _, _ = strings.Cut(block, "A profile to edit")
	if !ok || !strings.Contains(block, "checks were skipped for want of a target-profile key") {
		t.Fatalf("docs/server-mode.md has no missing-key summary block")
	}
	return block
}

// TestServerDiscoversRevisions: with no --protocol-version the run asks the
// target which revisions it speaks and checks those, saying so: a server
// of 2026-07-28 alone is checked at it (no initialize), one that
// negotiates 2025-06-18 at that revision, and `profile` lists the tools of
// either. A target that supports only revisions the harness does not know
// is a setup error that names them.
func TestServerDiscoversRevisions(t *testing.T) {
	for _, tt := range []struct {
		speaks, want string
	}{
		{wire.SessionlessProtocolVersion, wire.SessionlessProtocolVersion + " only"},
		{"2025-06-18", "2025-06-18 only"},
	} {
		t.Run(tt.speaks, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			h, err := server.NewHost(server.Config{Revisions: []string{tt.speaks}}, ln, server.HostOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			js := filepath.Join(t.TempDir(), "r.json")
			var out, errOut bytes.Buffer
			if code := run(context.Background(), []string{"server", "--url", h.URL(), "--focus", "^(MODERN-METHOD-404|SESS-UNKNOWN-404|JSONRPC-ID-ECHO)$", "--json", js, "--suggest-profile", ""}, &out, &errOut); code != exitOK {
				t.Fatalf("exit %d\n%s\n%s", code, out.String(), errOut.String())
			}
			if !strings.Contains(out.String(), "the target speaks protocol "+tt.want) || !strings.Contains(out.String(), "protocol "+tt.speaks+",") {
				t.Errorf("the run does not say what it found:\n%s", out.String())
			}
			r := readRun(t, js)
			if r.ProtocolVersion != tt.speaks || len(r.Revisions) != 0 {
				t.Errorf("run at %q %v, want %s alone", r.ProtocolVersion, r.Revisions, tt.speaks)
			}
			graded := 0
			for _, c := range r.Checks {
				if c.Verdict == report.Pass {
					graded++
				} else if c.Verdict != report.Skip {
					t.Errorf("%s: %s %s", c.Name(), c.Verdict, c.Message)
				}
			}
			if graded == 0 {
				t.Errorf("nothing graded at %s", tt.speaks)
			}
			out.Reset()
			if code := run(context.Background(), []string{"profile", "--url", h.URL()}, &out, &errOut); code != exitOK || !strings.Contains(out.String(), "#   - \"counter_increment\"\n#   - \"echo\"\n") {
				t.Errorf("profile: exit %d\n%s\n%s", code, out.String(), errOut.String())
			}
		})
	}
	t.Run("answers-its-oldest", func(t *testing.T) {
		// Offered a revision it does not know, the server answers with its
		// oldest (as mcp-lite 0.10 does); it accepts 2025-06-18 all the same.
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		oldest := func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				if bytes.Contains(body, []byte(`"method":"initialize"`)) && !bytes.Contains(body, []byte(`"2025-06-18"`)) {
					body = regexp.MustCompile(`"protocolVersion":"[^"]*"`).ReplaceAll(body, []byte(`"protocolVersion":"2025-03-26"`))
				}
				r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
				next.ServeHTTP(w, r)
			})
		}
		h, err := server.NewHost(server.Config{Revisions: []string{"2025-03-26", "2025-06-18"}}, ln, server.HostOptions{Wrap: oldest})
		if err != nil {
			t.Fatal(err)
		}
		defer h.Close()
		js := filepath.Join(t.TempDir(), "r.json")
		var out, errOut bytes.Buffer
		if code := run(context.Background(), []string{"server", "--url", h.URL(), "--focus", "^SESS-UNKNOWN-404$", "--json", js, "--suggest-profile", ""}, &out, &errOut); code != exitOK {
			t.Fatalf("exit %d\n%s\n%s", code, out.String(), errOut.String())
		}
		if r := readRun(t, js); r.ProtocolVersion != "2025-06-18" || !strings.Contains(out.String(), "negotiated 2025-03-26, but it accepts 2025-06-18") {
			t.Errorf("run at %s:\n%s", r.ProtocolVersion, out.String())
		}
	})
	t.Run("unknown", func(t *testing.T) {
		future := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var req struct {
				ID json.RawMessage `json:"id"`
			}
			_ = json.NewDecoder(r.Body).Decode(&req)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32022,"message":"unsupported","data":{"supported":["2099-01-01"],"requested":"x"}}}`, req.ID)
		}))
		defer future.Close()
		var errOut bytes.Buffer
		code := run(context.Background(), []string{"server", "--url", future.URL + "/mcp"}, io.Discard, &errOut)
		if code != exitUsage || !strings.Contains(errOut.String(), `supports ["2099-01-01"]; mcp-conform knows 2025-03-26 to 2026-07-28`) {
			t.Errorf("exit %d: %s", code, errOut.String())
		}
	})
}
