package clientchecks

import (
	"context"
	"fmt"
	"time"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/contract"
	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/suites/kit"
)

// Measurement is one undisturbed run of the client under test, timed
// before the checks.
type Measurement struct {
	// Took is the run, from its start to its exit (0: it was not timed).
	Took time.Duration
	// FirstRequest is how long after its start the server saw its first
	// request (0: none).
	FirstRequest time.Duration
	// Requests is how many requests the server saw.
	Requests int
	// Exit is how the run ended; Why, when it was not timed, says why.
	Exit, Why string
	// Revision is wire.SessionlessProtocolVersion when the client spoke
	// it (server/discover, or that MCP-Protocol-Version) though not told
	// to; "" otherwise.
	Revision string
}

// Measuring gives up on a run that shows no sign of life (no request, no
// output) for MeasureQuiet, or that runs longer than measureLimit.
const (
	MeasureQuiet = 10 * time.Second
	measureLimit = time.Minute
)

// Measure times one run of the client, a list of the tools (connect, one
// request, exit: what every revision has), against a scripted server of
// its own, with no other client running, and keeps it in cl.Measured for
// the checks' budgets, with the revision the client spoke. Call it before
// Checks.
func (cl *Client) Measure(ctx context.Context) Measurement {
	var m Measurement
	body := func(t *kit.T) {
		e := cl.newEnv(t, def{Entry: catalogue.Entry{ID: contract.ScenarioMeasure}})
		cr := e.start(actionRun(contract.ActionList))
		tick := time.NewTicker(kit.PollInterval)
		defer tick.Stop()
		for {
			select {
			case <-cr.done:
				m.Took, m.Exit = cr.ended.Sub(cr.started), cr.exitText()
				_, m.Requests = cr.lastSign()
				m.FirstRequest = cr.firstRequest()
				if !e.modern() && e.spokeModern(cr.n) != "" {
					m.Revision = wire.SessionlessProtocolVersion
				}
				return
			case <-t.Context().Done():
				m.Why = "the run was interrupted"
				return
			case <-tick.C:
				sign, _ := cr.lastSign()
				switch {
				case since(cr.started) > measureLimit:
					m.Why = fmt.Sprintf("it still ran after %v", measureLimit)
					return
				case since(later(sign, cr.started)) > MeasureQuiet:
					m.Why = fmt.Sprintf("it sent no request and printed nothing for %v", MeasureQuiet)
					return
				}
			}
		}
	}
	kit.Execute(ctx, kit.Check{Entry: catalogue.Entry{ID: contract.ScenarioMeasure, Side: catalogue.Client}, Run: body}, measureLimit+time.Minute)
	cl.Measured = m
	return m
}

// later is the later of two times.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// String says what was measured and the budget it gives a run.
func (m Measurement) String() string {
	cl := Client{Measured: m}
	if m.Revision != "" {
		return fmt.Sprintf("the client speaks %s by itself: only the checks without sessions apply; ", m.Revision) + Measurement{Took: m.Took, Exit: m.Exit, Requests: m.Requests, Why: m.Why}.String()
	}
	if m.Took <= 0 {
		return fmt.Sprintf("the client's undisturbed run could not be timed (%s): a run's budget is %v plus the scenario's waits", m.Why, cl.allowance())
	}
	return fmt.Sprintf("the client's undisturbed run took %v (%s, %d requests): a run's budget is %v (%d times that, at least %v) plus the scenario's waits, stretched when more client processes run than there are cores",
		m.Took.Round(time.Millisecond), m.Exit, m.Requests, cl.allowance().Round(time.Millisecond), runFactor, minRun)
}
