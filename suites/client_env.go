package suites

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/contract"
)

// ClientContext is what the client checks know about the run. The harness
// fills ClientTestContext and calls RegisterClientChecks before it runs
// the specs.
type ClientContext struct {
	// Command starts the client under test; the server URL is appended.
	Command string
	// StateRoot holds one state directory per check.
	StateRoot string
}

// ClientTestContext is the client run's context.
var ClientTestContext ClientContext

var (
	clientChecks   []func()
	registerClient sync.Once
)

// RegisterClientChecks adds the client checks to the suite. They are
// registered on demand, not at init, so that server runs neither run nor
// list them; call it once, before ginkgo.RunSpecs.
func RegisterClientChecks() {
	registerClient.Do(func() {
		for _, f := range clientChecks {
			f()
		}
	})
}

// clientSection registers a Describe of client checks for RegisterClientChecks.
func clientSection(name string, body func()) bool {
	clientChecks = append(clientChecks, func() { Describe(name, body) })
	return true
}

// ClientEnv is one client check: a scripted server of its own, a state
// directory for the client under test, and the runs of that client.
type ClientEnv struct {
	Entry    catalogue.Entry
	log      *exchangeLog
	rec      *clientRecorder
	srv      *scriptedServer
	stateDir string
	running  atomic.Int64

	mu   sync.Mutex
	nrun int
	runs []*clientRun
}

// clientCheck registers the spec of one client behaviour ID; opts
// configure its server.
func clientCheck(id string, opts serverOpts, budget time.Duration, body func(ctx context.Context, e *ClientEnv)) bool {
	ent := catalogue.MustLookup(id)
	return It(id+": "+ent.Summary, Label(ent.Labels()...), func(sctx SpecContext) {
		e := newClientEnv(ent, opts)
		ctx, cancel := context.WithTimeout(sctx, DefaultCheckTimeout+budget)
		defer cancel()
		body(ctx, e)
	})
}

func newClientEnv(ent catalogue.Entry, opts serverOpts) *ClientEnv {
	GinkgoHelper()
	e := &ClientEnv{Entry: ent, log: newExchangeLog()}
	e.rec = &clientRecorder{log: e.log, run: func() int { return int(e.running.Load()) }}
	dir, err := os.MkdirTemp(ClientTestContext.StateRoot, strings.ToLower(ent.ID)+"-")
	if err != nil {
		Fail(fmt.Sprintf("state directory: %v", err))
	}
	e.stateDir = dir
	srv, err := startScripted(opts, e.rec)
	if err != nil {
		Fail(fmt.Sprintf("scripted server: %v", err))
	}
	e.srv = srv
	e.log.printf("scripted server at %s (expired answer %s, recovery hint %v, bearer token %v); state directory %s",
		srv.url, srv.cfg.ExpiredResponse, opts.hint, opts.token != "", filepath.Base(dir))
	DeferCleanup(func() {
		e.stopRuns()
		srv.close()
		if CurrentSpecReport().Failed() {
			AddReportEntry(ExchangeEntry, e.log.String(), ReportEntryVisibilityFailureOrVerbose)
		}
		os.RemoveAll(dir)
	})
	return e
}

func (e *ClientEnv) setRun(n int) { e.running.Store(int64(n)) }

func (e *ClientEnv) track(cr *clientRun) {
	e.mu.Lock()
	e.runs = append(e.runs, cr)
	e.mu.Unlock()
}

// stopRuns kills every run still going and waits for it.
func (e *ClientEnv) stopRuns() {
	e.mu.Lock()
	runs := append([]*clientRun(nil), e.runs...)
	e.mu.Unlock()
	for _, cr := range runs {
		select {
		case <-cr.done:
		default:
			cr.kill()
		}
	}
}

// call is a run that calls tool with args.
func callRun(tool string, args any) contract.Run {
	data, err := json.Marshal(args)
	if err != nil {
		panic(err)
	}
	return contract.Run{Action: contract.ActionCall, Tool: tool, Arguments: data}
}

// action is a run of an action without a tool.
func actionRun(a contract.Action) contract.Run { return contract.Run{Action: a} }

// run starts a run and waits for it to succeed.
func (e *ClientEnv) run(ctx context.Context, r contract.Run) *clientRun {
	GinkgoHelper()
	cr := e.start(r)
	cr.finish(ctx)
	return cr
}

// exchanges returns the requests of run n (every run with n 0).
func (e *ClientEnv) exchanges(n int) []exchange {
	var out []exchange
	for _, x := range e.rec.all() {
		if n == 0 || x.Run == n {
			out = append(out, x)
		}
	}
	return out
}

// sessionOf returns the session id of run n's first tools/call.
func (e *ClientEnv) sessionOf(n int) string {
	GinkgoHelper()
	for _, x := range e.exchanges(n) {
		if x.RPC.Method == "tools/call" {
			return x.SessionID
		}
	}
	Fail(fmt.Sprintf("run %d sent no tools/call", n))
	return ""
}

// toolCalls returns run n's tools/call requests.
func (e *ClientEnv) toolCalls(n int) []exchange {
	var out []exchange
	for _, x := range e.exchanges(n) {
		if x.RPC.Method == "tools/call" {
			out = append(out, x)
		}
	}
	return out
}

// waitForDuring waits until the server has seen a request that matches
// while run cr is going; the run ending first fails the check.
func (e *ClientEnv) waitForDuring(ctx context.Context, cr *clientRun, what string, match func(exchange) bool) exchange {
	GinkgoHelper()
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		for _, x := range e.rec.all() {
			if match(x) {
				return x
			}
		}
		select {
		case <-cr.done:
			cr.declined()
			Fail(fmt.Sprintf("run %d (%s) ended (%s) before the server saw %s", cr.n, cr.action, cr.exitText(), what))
		case <-ctx.Done():
			Fail(fmt.Sprintf("the server never saw %s", what))
		case <-tick.C:
		}
	}
}

// createdIn reports the session ids that initialize requests without a
// session id got in run n, in order.
func (e *ClientEnv) createdIn(n int) []string {
	var out []string
	for _, x := range e.exchanges(n) {
		if x.isFreshInit() && x.RespSessionID != "" {
			out = append(out, x.RespSessionID)
		}
	}
	return out
}

// after returns the exchanges that arrived after t.
func after(xs []exchange, t time.Time) []exchange {
	var out []exchange
	for _, x := range xs {
		if x.At.After(t) {
			out = append(out, x)
		}
	}
	return out
}
