package main

import (
	"net"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/fixtures"
	"github.com/mcp-conform/mcp-conform/internal/redistest"
	"github.com/mcp-conform/mcp-conform/internal/report"
	"github.com/mcp-conform/mcp-conform/suites/serverchecks"
)

// TestServerCatchesReplicaFixtures: the replica checks, run with --url and
// --replica-url against two replicas of each replica fixture (on a Redis
// of its own), pass against the reference replicas and fail against
// exactly the fixtures that break them.
func TestServerCatchesReplicaFixtures(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the replica checks against every replica fixture")
	}
	t.Parallel()
	profile, err := filepath.Abs("../../fixtures/profile.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fixtures.ReplicaFixtures() {
		t.Run(f.Name, func(t *testing.T) {
			t.Parallel()
			rs := redistest.Start(t)
			var urls []string
			for range 2 {
				ln, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				r, err := f.Start(fixtures.Config(), rs.URL(0), ln)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(r.Close)
				urls = append(urls, r.URL())
			}
			js := filepath.Join(t.TempDir(), "r.json")
			out, errOut, code := runSelf(t, suiteTimeout, "server", "--url", urls[0], "--replica-url", urls[1],
				"--target-config", profile, "--focus", "^REPLICA-", "--json", js, "--strict", "--suggest-profile", "")
			want := exitOK
			if len(f.Breaks) > 0 {
				want = exitFail
			}
			var wrong []string
			if code != want {
				wrong = append(wrong, "exit code differs")
			}
			ran := 0
			for _, c := range readRun(t, js).Checks {
				if !strings.HasPrefix(c.ID, "REPLICA-") {
					continue
				}
				ran++
				broken := slices.Contains(f.Breaks, c.ID)
				switch {
				case broken && c.Verdict == report.Pass:
					wrong = append(wrong, c.ID+" passed: the check does not catch it")
				case !broken && c.Verdict != report.Pass:
					wrong = append(wrong, c.ID+" is "+string(c.Verdict)+", but the fixture does not break it: "+c.Message)
				}
			}
			n := 0
			for _, e := range catalogue.Of(catalogue.Server) {
				if e.Section == "replicas" {
					n++
				}
			}
			if ran != n {
				wrong = append(wrong, "not every replica check ran")
			}
			if len(wrong) > 0 {
				t.Errorf("replica fixture %s (%s), exit %d:\n  %s\nconsole:\n%s\nstderr:\n%s", f.Name, f.About, code, strings.Join(wrong, "\n  "), out, errOut)
			}
		})
	}
}

// skipsForReplicas reports a replica check skipped for want of
// --replica-url: what it does against one replica (TestServerReference,
// the single-server fixtures); TestServerCatchesReplicaFixtures runs them.
func skipsForReplicas(c report.Check) bool {
	return strings.HasPrefix(c.ID, "REPLICA-") && c.Verdict == report.Skip && c.Message == serverchecks.NoReplicas
}
