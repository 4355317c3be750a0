package serverchecks

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/fixtures/servers"
	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/reference/server"
	"github.com/mcp-conform/mcp-conform/suites/kit"
	"github.com/mcp-conform/mcp-conform/target"
)

// testMargin stands for the run's margin in a check's deadline.
const testMargin = 5 * time.Second

// revisions are the protocol revisions the task checks run in.
var revisions = []string{"2025-11-25", wire.SessionlessProtocolVersion}

// hosted serves fixture name ("" for the reference server) on a loopback
// port with the fixtures' configuration, changed by configure, and
// returns a Target for it in revision version, with the fixtures' profile.
func hosted(t *testing.T, name, version string, configure func(*server.Config)) *Target {
	t.Helper()
	var f servers.Fixture
	if name != "" {
		var err error
		if f, err = servers.Lookup(name); err != nil {
			t.Fatal(err)
		}
	}
	cfg := servers.Config()
	if configure != nil {
		configure(&cfg)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h, err := f.Host(cfg, ln)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	profile, err := target.Load("../../fixtures/profile.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return &Target{URL: h.URL(), Config: profile, ProtocolVersion: version}
}

// TestTTLKeptGrantedLonger: a server that grants a far longer ttl than
// asked (300000 ms) passes TASK-TTL-KEPT within the check's need: the
// check observes the task up to the ttl it asked for, and says so.
func TestTTLKeptGrantedLonger(t *testing.T) {
	for _, version := range revisions {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			c := checkOf(t, hosted(t, "task-unknown-500", version, nil), "TASK-TTL-KEPT")
			r := kit.Execute(context.Background(), c, c.Deadline(testMargin))
			if r.State != kit.Passed {
				t.Fatalf("state %v after %v: %s\n%s", r.State, r.Took, r.Message, r.Exchange)
			}
			if r.Took > c.Need {
				t.Errorf("the check took %v, more than its need of %v", r.Took, c.Need)
			}
			if !strings.Contains(r.Exchange, "granted a ttl of 5m0s") || !strings.Contains(r.Exchange, "up to the requested ttl only") {
				t.Errorf("the exchange does not say that the longer grant was observed up to the requested ttl only:\n%s", r.Exchange)
			}
		})
	}
}

// TestTTLKeptInconclusive: when the requested ttl ends after the check's
// deadline, TASK-TTL-KEPT neither fails nor waits: it is inconclusive,
// saying what it could not observe and why.
func TestTTLKeptInconclusive(t *testing.T) {
	tc := hosted(t, "", "2025-11-25", nil)
	c := checkOf(t, tc, "TASK-TTL-KEPT")
	d := ttlAsked(tc.Config) / 2
	r := kit.Execute(context.Background(), c, d)
	if r.State != kit.Inconclusive || !strings.Contains(r.Message, "could not be observed") || !strings.Contains(r.Message, "deadline") {
		t.Fatalf("state %v: %s, want inconclusive, saying what could not be observed and why\n%s", r.State, r.Message, r.Exchange)
	}
	if r.Took >= d {
		t.Errorf("the check took %v, its whole deadline of %v", r.Took, d)
	}
}

// TestTaskPollBounded: a server suggesting a poll interval longer than a
// task check's budget (10 minutes) passes the checks that poll; they poll
// sooner, and say so.
func TestTaskPollBounded(t *testing.T) {
	long := func(c *server.Config) { c.TaskPollInterval = 10 * time.Minute }
	for _, id := range []string{"TASK-TTL-KEPT", "TASK-CANCEL-TERMINAL"} {
		t.Run(id, func(t *testing.T) {
			t.Parallel()
			c := checkOf(t, hosted(t, "", wire.SessionlessProtocolVersion, long), id)
			r := kit.Execute(context.Background(), c, c.Deadline(testMargin))
			if r.State != kit.Passed {
				t.Fatalf("state %v after %v: %s\n%s", r.State, r.Took, r.Message, r.Exchange)
			}
			if !strings.Contains(r.Exchange, "the server suggests polling every 10m0s") {
				t.Errorf("the exchange does not say the check polled sooner than suggested:\n%s", r.Exchange)
			}
		})
	}
}
