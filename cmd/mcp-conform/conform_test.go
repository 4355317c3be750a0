package main

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/fixtures"
	"github.com/mcp-conform/mcp-conform/internal/report"
)

// suiteTimeout bounds one full run of the server suites in a test.
const suiteTimeout = 4 * time.Minute

// readRun decodes a --json report.
func readRun(t *testing.T, path string) *report.Run {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r report.Run
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatalf("JSON report: %v", err)
	}
	return &r
}

// TestServerReference: the whole suite passes against the embedded
// reference server, every server check runs, and both reports are valid.
func TestServerReference(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	js, junit := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.xml")
	out, errOut, code := runSelf(t, suiteTimeout, "server", "--json", js, "--junit", junit)
	if code != exitOK {
		t.Fatalf("exit %d against the reference\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	r := readRun(t, js)
	var ids []string
	for _, c := range r.Checks {
		ids = append(ids, c.ID)
		if c.Verdict != report.Pass {
			t.Errorf("%s: %s (%s)", c.ID, c.Verdict, c.Message)
		}
	}
	if want := catalogue.IDs(catalogue.Server); !slices.Equal(sorted(ids), want) {
		t.Errorf("checks in report:\n%v\nwant every server ID:\n%v", sorted(ids), want)
	}
	if !r.Passed || r.SchemaVersion != report.SchemaVersion {
		t.Errorf("passed=%v schema=%d", r.Passed, r.SchemaVersion)
	}
	var doc struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Suites   []struct {
			Cases []struct {
				Name  string `xml:"name,attr"`
				Props []struct {
					Name  string `xml:"name,attr"`
					Value string `xml:"value,attr"`
				} `xml:"properties>property"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	data, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	if err := xml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("JUnit report: %v", err)
	}
	if doc.Tests != len(ids) || doc.Failures != 0 || len(doc.Suites) != 1 || len(doc.Suites[0].Cases) != len(ids) {
		t.Errorf("JUnit: tests=%d failures=%d, want %d and 0", doc.Tests, doc.Failures, len(ids))
	}
	if !strings.Contains(out, "PASSED:") {
		t.Errorf("no summary line in console output:\n%s", out)
	}
}

// TestServerCatchesFixtures: against each broken fixture, started and
// restarted by the harness through --server-cmd, exactly the checks the
// fixture breaks fail and every other check still passes.
func TestServerCatchesFixtures(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	profile, err := filepath.Abs("../../fixtures/profile.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fixtures.All() {
		t.Run(f.Name, func(t *testing.T) {
			t.Parallel()
			js := filepath.Join(t.TempDir(), "r.json")
			out, errOut, code := runSelf(t, suiteTimeout, "server",
				"--server-cmd", fmt.Sprintf("%q fixture --addr 127.0.0.1:{port} %s", exe, f.Name),
				"--url", "http://127.0.0.1:{port}/mcp", "--target-config", profile, "--json", js)
			if code != exitFail {
				t.Fatalf("exit %d, want %d (a required check failed)\nstdout:\n%s\nstderr:\n%s", code, exitFail, out, errOut)
			}
			for _, c := range readRun(t, js).Checks {
				broken := slices.Contains(f.Breaks, c.ID)
				switch {
				case broken && c.Verdict == report.Pass:
					t.Errorf("%s passed against %s (%s): the check does not catch it", c.ID, f.Name, f.About)
				case !broken && c.Verdict != report.Pass:
					t.Errorf("%s is %s against %s, which does not break it: %s", c.ID, c.Verdict, f.Name, c.Message)
				}
			}
		})
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
