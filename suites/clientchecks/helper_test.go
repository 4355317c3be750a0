package clientchecks

import (
	"context"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/contract"
	"github.com/mcp-conform/mcp-conform/internal/testparallel"
	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/suites/kit"
)

// helperEnv makes the test binary a client under test of a kind the tests
// need (helperClient), instead of running the tests.
const helperEnv = "CLIENTCHECKS_HELPER"

func TestMain(m *testing.M) {
	if kind := os.Getenv(helperEnv); kind != "" {
		os.Exit(helperClient(kind))
	}
	// The budget tests wait on clients that are slow or silent on purpose.
	testparallel.PerCore(2)
	os.Exit(m.Run())
}

// helperClient is a client under test that does no MCP, only what the
// budget tests need the scripted server to see: in the measured run a
// request and an exit; in a check's run, by kind,
//
//	slow:  a request every 250ms for 10s (progressing, slowly), then exit
//	quiet: one request, then nothing
//	discover: a server/discover of 2026-07-28, then exit 1
//	listen-twice: two subscriptions/listen streams at once (listenTwice)
//	hands-nothing: an MCP client that hands its application results only (handsNothing)
func helperClient(kind string) int {
	url := os.Args[len(os.Args)-1]
	ping := func() {
		resp, err := http.Post(url, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		if err == nil {
			resp.Body.Close()
		}
	}
	if kind == "discover" && os.Getenv(contract.EnvScenario) != contract.ScenarioMeasure {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(wire.HeaderProtocolVersion, wire.SessionlessProtocolVersion)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
		return 1
	}
	if kind == "hands-nothing" {
		return handsNothing(url)
	}
	ping()
	if os.Getenv(contract.EnvScenario) == contract.ScenarioMeasure {
		return 0
	}
	switch kind {
	case "listen-twice":
		return listenTwice(url)
	case "slow":
		for range 40 {
			time.Sleep(250 * time.Millisecond)
			ping()
		}
		return 0
	}
	select {}
}

// helperCommand is the command that runs helperClient of kind.
func helperCommand(t *testing.T, kind string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return helperEnv + "=" + kind + " " + shellQuote(exe)
}

// runCheck runs check id against cl with deadline d (the check's own,
// with the harness's 10s margin, when 0).
func runCheck(t *testing.T, cl *Client, id string, d time.Duration) kit.Result {
	t.Helper()
	if cl.StateRoot == "" {
		cl.StateRoot = t.TempDir()
	}
	for _, c := range Checks(cl) {
		if c.Entry.ID == id {
			if d == 0 {
				d = c.Deadline(10 * time.Second)
			}
			return kit.Execute(context.Background(), c, d)
		}
	}
	t.Fatalf("no client check %s", id)
	return kit.Result{}
}

// persistEntry is CLI-PERSIST's entry, which the tests of the check
// machinery borrow.
func persistEntry() catalogue.Entry {
	e, ok := lookup("CLI-PERSIST")
	if !ok {
		panic("no CLI-PERSIST check")
	}
	return e
}
