package harness

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/internal/report"
)

// hangsAfterInitialize answers the first initialize, then nothing: every
// later request waits until the client gives up or the test ends.
func hangsAfterInitialize(release <-chan struct{}) http.Handler {
	var answered atomic.Bool
	stub := &stubMCP{version: "2025-11-25"}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if answered.CompareAndSwap(false, true) {
			stub.ServeHTTP(w, r)
			return
		}
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
}

// TestHungTargetEndsTheRun: against a target that answers initialize and
// then hangs, the run ends within 15 s (not at each check's deadline, over
// two minutes), every check that was waiting is inconclusive naming the
// cause, none fails, and the run is a setup error (exit 2) saying so.
func TestHungTargetEndsTheRun(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(hangsAfterInitialize(release))
	defer srv.Close()
	defer close(release)

	began := time.Now()
	// Shorter probes than the defaults (4 x 5 s), so the test takes seconds.
	probes := LivenessProbes{Every: time.Second, Timeout: 2 * time.Second, Misses: 3}
	run, err := Run(context.Background(), Options{URL: srv.URL, SuggestProfile: "", Liveness: probes}, io.Discard, io.Discard)
	took := time.Since(began)
	t.Logf("the run took %v", took.Round(100*time.Millisecond))
	if took > 15*time.Second {
		t.Errorf("the run took %v; want it over within 15s of the target hanging", took.Round(time.Second))
	}
	var se *SetupError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "the target stopped answering") {
		t.Fatalf("Run = %v; want a setup error saying the target stopped answering", err)
	}
	if run == nil {
		t.Fatal("no run: the verdicts should stand in the reports")
	}
	inconclusive := 0
	for _, c := range run.Checks {
		switch {
		case c.Verdict == report.Inconclusive && strings.Contains(c.Message, "the target stopped answering"):
			inconclusive++
		case c.Verdict == report.Skip:
		default:
			t.Errorf("%s: %s: %s", c.ID, c.Verdict, firstLine(c.Message))
		}
	}
	if inconclusive == 0 {
		t.Error("no check was inconclusive for the hung target")
	}
}

// TestE2EHungTargetFailsNothing: a target that hangs after initialize, with
// probes slower to give up than the checks' own deadlines: the checks
// that time out on their own requests before the watcher gives up were
// still cut short by the silence, so they are inconclusive, not failed
// (at --parallel 1 they are not run at all: skipped, and a verdict must not
// depend on what ran beside a check).
func TestE2EHungTargetFailsNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("two runs against a hung target, each until the watcher gives up")
	}
	probes := LivenessProbes{Every: time.Second, Timeout: time.Second, Misses: 12}
	for _, parallel := range []int{8} {
		release := make(chan struct{})
		srv := httptest.NewServer(hangsAfterInitialize(release))
		began := time.Now()
		run, err := Run(context.Background(), Options{Common: Common{Parallel: parallel}, URL: srv.URL, Liveness: probes}, io.Discard, io.Discard)
		close(release)
		srv.Close()
		t.Logf("--parallel %d: the run took %v", parallel, time.Since(began).Round(100*time.Millisecond))
		if run == nil {
			t.Fatalf("--parallel %d: Run = %v, no run", parallel, err)
		}
		for _, c := range run.Checks {
			if c.Verdict != report.Inconclusive && c.Verdict != report.Skip {
				t.Errorf("--parallel %d: %s: %s: %s", parallel, c.Name(), c.Verdict, firstLine(c.Message))
			}
		}
	}
}

// TestE2EHungTargetSettles: when every check has ended while the target
// is silent, but the watcher has not given up yet, the run waits for its
// decision: the check that timed out on the hang is inconclusive, naming
// the silence, and the run a setup error, not a failure of the check.
func TestE2EHungTargetSettles(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the watcher to give up on a hung target")
	}
	release := make(chan struct{})
	srv := httptest.NewServer(hangsAfterInitialize(release))
	defer srv.Close()
	defer close(release)
	probes := LivenessProbes{Every: time.Second, Timeout: time.Second, Misses: 12}
	run, err := Run(context.Background(), Options{Focus: "^SESS-UNKNOWN-404$", URL: srv.URL, Liveness: probes}, io.Discard, io.Discard)
	var se *SetupError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "the target stopped answering") {
		t.Errorf("Run = %v; want a setup error saying the target stopped answering", err)
	}
	if run == nil {
		t.Fatal("no run")
	}
	for _, c := range run.Checks {
		if c.ID == "SESS-UNKNOWN-404" && (c.Verdict != report.Inconclusive || !strings.Contains(c.Message, "the target stopped answering")) {
			t.Errorf("SESS-UNKNOWN-404: %s: %s", c.Verdict, firstLine(c.Message))
		}
	}
}
