package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/internal/inert"
	"github.com/mcp-conform/mcp-conform/internal/report"
)

// maxReportPerCheck bounds what one check adds to a report file: its
// message, exchange log and timeline (report.MaxMessage, the exchange
// log's 48 KiB head and 16 KiB tail, report.MaxTimelineText), each at
// most doubled by a format's escaping, plus its fixed fields.
const maxReportPerCheck = 2*(report.MaxMessage+64<<10+report.MaxTimelineText) + 4<<10

// reportsOf runs the reports flags into dir.
func reportsOf(dir string) []string {
	return []string{"--json", filepath.Join(dir, "r.json"), "--junit", filepath.Join(dir, "junit.xml"),
		"--html", filepath.Join(dir, "report.html"), "--markdown", filepath.Join(dir, "summary.md"), "--badge", filepath.Join(dir, "badge.json")}
}

// expectInert fails t when the console output carries anything that acts
// on a terminal or a CI step log, or a report file outgrows its bound.
func expectInert(t *testing.T, dir, stdout, stderr string) {
	t.Helper()
	for name, out := range map[string]string{"stdout": stdout, "stderr": stderr} {
		if bad := inert.Problems(out); len(bad) > 0 {
			t.Errorf("%s is not inert: %s", name, strings.Join(bad, "; "))
		}
		for _, line := range strings.Split(out, "\n") {
			if len(line) > inert.MaxLine {
				t.Errorf("%s has a line of %d bytes, more than %d", name, len(line), inert.MaxLine)
				break
			}
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, "r.json"))
	if err != nil {
		t.Fatal(err)
	}
	var run report.Run
	if err := json.Unmarshal(data, &run); err != nil {
		t.Fatalf("JSON report: %v", err)
	}
	bound := int64(len(run.Checks)*maxReportPerCheck + 64<<10)
	for _, f := range []string{"r.json", "junit.xml", "report.html", "summary.md", "badge.json"} {
		st, err := os.Stat(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if st.Size() > bound {
			t.Errorf("%s is %d bytes, more than the bound of %d for %d checks", f, st.Size(), bound, len(run.Checks))
		}
	}
	for _, c := range run.Checks {
		if len(c.Message) > report.MaxMessage {
			t.Errorf("%s's message is %d bytes, more than %d", c.Name(), len(c.Message), report.MaxMessage)
		}
	}
}

// TestE2EHostileServer runs every check against a server whose every text
// is hostile (fixtures/hostile: escape sequences, workflow commands,
// invalid UTF-8, session ids that are commands, 8 MiB error bodies): the
// console stays inert and the reports bounded.
func TestE2EHostileServer(t *testing.T) {
	skipShort(t, "runs the checks against the hostile server")
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	args := append([]string{"server", "-v", "--server-cmd", fmt.Sprintf("%q fixture --addr 127.0.0.1:{port} hostile", exe),
		"--url", "http://127.0.0.1:{port}/mcp", "--target-profile", "../../fixtures/profile.yaml"}, reportsOf(dir)...)
	stdout, stderr, code := runSelf(t, 4*time.Minute, args...)
	if code != exitFail {
		t.Errorf("exit %d, want %d (the server breaks checks)\n%s", code, exitFail, stderr)
	}
	if !strings.Contains(stdout, `#\u0023[error]`) {
		t.Errorf("the hostile session id is not shown, made inert: %.2000s", stdout)
	}
	expectInert(t, dir, stdout, stderr)
}

// TestE2EHostileClient grades a client whose output is hostile
// (fixtures/clients/hostile.sh) on stderr and in its JSON lines.
func TestE2EHostileClient(t *testing.T) {
	skipShort(t, "runs the client checks against the hostile client")
	t.Parallel()
	script, err := filepath.Abs("../../fixtures/clients/hostile.sh")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	stdout, stderr, code := runSelf(t, 2*time.Minute, append([]string{"client", "-v", "--command", script}, reportsOf(dir)...)...)
	if code != exitFail {
		t.Errorf("exit %d, want %d\n%s", code, exitFail, stderr)
	}
	if !strings.Contains(stdout+stderr, `\x1b[2J`) {
		t.Errorf("the client's escape sequences are not shown, made visible: %.2000s", stdout)
	}
	expectInert(t, dir, stdout, stderr)
}
