package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/internal/report"
	"github.com/mcp-conform/mcp-conform/reference/browserclient"
	"github.com/mcp-conform/mcp-conform/suites/clientchecks/brokenpages"
	"github.com/mcp-conform/mcp-conform/toxics/browser"
)

// pages are the browser tests' pages, built once per test binary.
var pages struct {
	once              sync.Once
	reference, broken string
	err               error
}

// buildPages builds the reference browser client and the broken pages'
// program, or skips the test where there is no Chromium to run them.
func buildPages(t *testing.T) (reference, broken string) {
	t.Helper()
	if _, err := browser.Find(); err != nil {
		t.Skip(err)
	}
	pages.once.Do(func() {
		dir, err := os.MkdirTemp("", "mcp-conform-pages-")
		if err != nil {
			pages.err = err
			return
		}
		pages.reference, pages.broken = filepath.Join(dir, "reference"), filepath.Join(dir, "broken")
		if pages.err = browserclient.Build(pages.reference, browserclient.Program); pages.err == nil {
			pages.err = browserclient.Build(pages.broken, "github.com/mcp-conform/mcp-conform/suites/clientchecks/brokenpages/wasm")
		}
	})
	if pages.err != nil {
		t.Fatal(pages.err)
	}
	return pages.reference, pages.broken
}

// runBrowser runs `mcp-conform client --browser` with args and the
// reference browser client in dir, and returns its exit status and report.
func runBrowser(t *testing.T, exe, dir string, args ...string) (int, *report.Run, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	file := filepath.Join(t.TempDir(), "run.json")
	cmd := exec.CommandContext(ctx, exe, append([]string{"client", "--browser", "--json", file}, args...)...)
	cmd.Env = append(os.Environ(), browserclient.EnvDir+"="+dir)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = 10 * time.Second
	err := cmd.Run()
	var ee *exec.ExitError
	code := 0
	switch {
	case ctx.Err() != nil:
		t.Fatalf("no exit within %v:\n%s", clientTimeout, out.String())
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return code, readRun(t, file), out.String()
}

// TestBrowserReference: the reference browser client, graded in Chromium,
// passes every client check that applies to it at both revisions: each
// run a load of the page, each kill the page torn down, the browser
// checks through the browser's own reload and offline network. Only OAuth
// is declined (the page does no authorization flow).
func TestBrowserReference(t *testing.T) {
	skipShort(t, "runs the client checks against the reference browser client in Chromium")
	t.Parallel()
	ref, _ := buildPages(t)
	exe := buildCLI(t)
	for _, version := range []string{"", "2026-07-28"} {
		t.Run("revision "+version, func(t *testing.T) {
			var args []string
			if version != "" {
				args = []string{"--protocol-version", version}
			}
			code, run, out := runBrowser(t, exe, ref, args...)
			if code != exitOK {
				t.Fatalf("exit %d, want 0:\n%s", code, out)
			}
			passed := 0
			for _, c := range run.Checks {
				switch {
				case c.Verdict == report.Pass:
					passed++
				case c.Verdict == report.Inconclusive:
					// A busy machine (CI's race pass beside this one) can
					// starve the browser: never a failure of the page.
					t.Logf("%s inconclusive: %s", c.ID, c.Message)
				case c.Verdict == report.Skip && (c.Cause == report.NoSessions || c.Cause == report.OtherRevision):
				case c.Verdict == report.Skip && c.Cause == report.NotOffered && slices.Contains([]string{"CLI-OAUTH-REFRESH", "CLI-OAUTH-DURABLE"}, c.ID):
				default:
					t.Errorf("%s is %s (%s): %s", c.ID, c.Verdict, c.Cause, c.Message)
				}
			}
			if passed < 10 {
				t.Errorf("only %d checks passed:\n%s", passed, out)
			}
			if version == "" {
				for _, id := range []string{"CLI-BROWSER-RELOAD", "CLI-BROWSER-OFFLINE", "CLI-BROWSER-SECOND-TAB", "CLI-RESUME", "CLI-PERSIST"} {
					if c := findCheck(run, id); c == nil || (c.Verdict != report.Pass && c.Verdict != report.Inconclusive) {
						t.Errorf("%s did not pass: %+v", id, c)
					}
				}
			}
		})
	}
}

// TestBrowserCatchesBrokenPages: against each broken page,
// exactly the checks it breaks fail and the others of the run pass.
func TestBrowserCatchesBrokenPages(t *testing.T) {
	skipShort(t, "runs the browser checks against the broken pages in Chromium")
	t.Parallel()
	_, broken := buildPages(t)
	exe := buildCLI(t)
	page, stop, err := browserclient.Serve(broken)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	for _, p := range brokenpages.All() {
		t.Run(p.Name, func(t *testing.T) {
			u := page + "?" + brokenpages.Param + "=" + url.QueryEscape(p.Name)
			// One check at a time: pages are heavy on a busy machine.
			args := append([]string{u, "--parallel", "1"}, scenariosOf(append(slices.Clone(p.Breaks), "CLI-CALL-UNDISTURBED", "CLI-BROWSER-RELOAD", "CLI-BROWSER-OFFLINE", "CLI-BROWSER-SECOND-TAB"))...)
			code, run, out := runBrowser(t, exe, broken, args...)
			// A check the machine left inconclusive proves nothing either
			// way: the run is made once more.
			if slices.ContainsFunc(run.Checks, func(c report.Check) bool { return c.Verdict == report.Inconclusive }) {
				t.Logf("a check was inconclusive; running again:\n%s", out)
				code, run, out = runBrowser(t, exe, broken, args...)
			}
			if code != exitFail {
				t.Fatalf("exit %d, want %d:\n%s", code, exitFail, out)
			}
			for _, id := range p.Breaks {
				if findCheck(run, id) == nil {
					t.Errorf("%s is not in the run against %s", id, p.Name)
				}
			}
			for _, c := range run.Checks {
				if leftOut(c) || skipsByDesign(c) {
					continue
				}
				switch broke := slices.Contains(p.Breaks, c.ID); {
				case broke && !caught(c):
					t.Errorf("%s is %s against %s (%s): the check does not catch it", c.ID, c.Verdict, p.Name, p.About)
				case !broke && c.Verdict != report.Pass && !(c.Verdict == report.Skip && c.Cause == report.NotOffered):
					t.Errorf("%s is %s against %s, which does not break it: %s", c.ID, c.Verdict, p.Name, c.Message)
				}
			}
		})
	}
}

// findCheck returns the check id of run, or nil.
func findCheck(run *report.Run, id string) *report.Check {
	for i := range run.Checks {
		if run.Checks[i].ID == id {
			return &run.Checks[i]
		}
	}
	return nil
}

// TestClientBrowserUsage: --browser's mistakes are usage errors (exit 2)
// that say what is wrong, and so is a machine without Chromium.
func TestClientBrowserUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  string
		want string
	}{
		{[]string{"--browser", "ftp://x"}, "", "want the page's http:// or https:// URL"},
		{[]string{"--browser", "http://a", "http://b"}, "", "takes one page URL, got http://a http://b"},
		{[]string{"--browser", "--command", "x"}, "", "give one"},
		{[]string{"--browser", "http://127.0.0.1:1/", "--scenario", "CLI-PERSIST"}, "/nonexistent/chromium", "--browser needs Chromium"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			if tc.env != "" {
				t.Setenv(browser.EnvChromium, tc.env)
			}
			var stderr bytes.Buffer
			code := run(context.Background(), append([]string{"client"}, tc.args...), io.Discard, &stderr)
			if code != exitUsage || !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr.String(), exitUsage, tc.want)
			}
		})
	}
}
