package serverchecks

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/internal/report"
	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/suites/kit"
	"github.com/mcp-conform/mcp-conform/target"
	"github.com/mcp-conform/mcp-conform/toxics"
)

// env is one check's view of the target: its kit.T (assertions, skip,
// exchange log) and a wire client whose connections go through the
// check's own fault proxy and are logged.
type env struct {
	*kit.T
	// C is the client every request of the check goes through.
	C      *wire.Client
	Config *target.Profile
	target *Target
	proxy  *toxics.Proxy
	tr     *http.Transport

	mu   sync.Mutex
	gone map[string]bool // sessions the check ended itself
	// clients are those the check made (e.client, the keep-warm one),
	// whose ids tell its own answers from other sessions' (owns).
	clients []*wire.Client
	// polls are the poll intervals of the tasks the check created.
	polls map[string]time.Duration
	// tokens are the progress tokens of the check's own calls: a token
	// outside them is another check's (expectOwnNotes).
	tokens map[string]bool
}

// def is a server check before it is bound to a target: its catalogue
// entry (Side is set here, Server) and its body.
type def struct {
	catalogue.Entry
	// need is how long the check takes against a target that behaves
	// (see kit.Check.Need); nil for a few round trips.
	need func(*target.Profile) time.Duration
	body func(ctx context.Context, e *env)
	// reset arms the check's proxy for F-RESET (every close becomes a TCP
	// reset, so only checks that reset use it).
	reset bool
}

// Checks returns the server checks, in catalogue order, bound to tc.
func Checks(tc *Target) []kit.Check {
	defs := allDefs()
	out := make([]kit.Check, len(defs))
	for i, d := range defs {
		c := kit.Check{Entry: d.Entry}
		if d.need != nil {
			c.Need = d.need(tc.Config)
		}
		if d.Restarts {
			c.Need += tc.RestartNeed
		}
		c.Run = func(t *kit.T) { d.body(t.Context(), tc.setup(t, d)) }
		out[i] = c
	}
	return out
}

// allDefs returns every server check's def, in catalogue order: the
// order of the sections here, then of the checks in each.
func allDefs() []def {
	var defs []def
	for _, section := range [][]def{
		sessionChecks(), streamChecks(), jsonrpcChecks(), graceChecks(), recreateChecks(), authRefreshChecks(),
		streamResilienceChecks(), replayChecks(), envelopeChecks(), robustnessChecks(), restartChecks(),
		replicaChecks(),
		taskChecks(), modernTaskChecks(), // their io.modelcontextprotocol/tasks variants
		modernChecks(), listenChecks(),
	} {
		for _, d := range section {
			d.Entry = serverEntry(d.Entry)
			defs = append(defs, d)
		}
	}
	return defs
}

// serverEntry is e on the server side.
func serverEntry(e catalogue.Entry) catalogue.Entry {
	e.Side = catalogue.Server
	return e
}

// Entries returns the server checks' catalogue entries, in catalogue order.
func Entries() []catalogue.Entry {
	defs := allDefs()
	out := make([]catalogue.Entry, len(defs))
	for i, d := range defs {
		out[i] = d.Entry
	}
	return out
}

// lookup finds a server check's entry by ID.
func lookup(id string) (catalogue.Entry, bool) { return catalogue.Find(entries, id) }

// entries are the server checks' entries, for lookup.
var entries = Entries()

// crossings is the process's kit.Ledger: a check whose progress
// notifications crossed to or from another running check's streams is
// run again alone. One for the process, since every check's tokens are
// unique in it (those of both revisions' checks, which run together).
var crossings = kit.NewLedger()

// NeedsKey starts the reason of a check skipped because the target
// profile lacks keys; the keys follow ("needs target-config key
// tools.notifying", "needs target-config keys principals and tools.task").
const NeedsKey = "needs target-config key"

// NoRestart is why a check that restarts the target skips without one
// the harness started.
const NoRestart = "needs a restartable target: run with --server-cmd"

// setup skips the check when the target cannot have the behaviour, or
// when the run lacks what the check needs, and builds its Env. Flags are
// looked at before keys, so a check skipped for keys needs nothing else.
func (tc *Target) setup(t *kit.T, d def) *env {
	ent := t.Entry
	if cause, why := tc.inapplicable(ent); cause != "" {
		t.Skip(cause, why)
	}
	keys, flags := ent.Missing(tc.Config.Has, tc.Restart != nil, len(tc.Replicas) > 0)
	switch {
	case slices.Contains(flags, "--server-cmd"):
		t.Skip(report.NeedsRestart, NoRestart)
	case slices.Contains(flags, "--replica-url"):
		t.Skip(report.NeedsReplica, NoReplicas)
	case len(keys) == 1:
		t.Skip(report.NeedsProfileKey, NeedsKey+" "+string(keys[0]))
	case len(keys) > 1:
		names := make([]string, len(keys))
		for i, k := range keys {
			names[i] = string(k)
		}
		t.Skip(report.NeedsProfileKey, NeedsKey+"s "+strings.Join(names, " and "))
	}
	e := &env{T: t, Config: tc.Config, target: tc, tokens: map[string]bool{}}
	crossings.Join(t)
	base := tc.URL
	if tc.Faults != nil {
		u, err := url.Parse(tc.URL)
		if err != nil {
			e.Failf("target URL: %v", err)
		}
		var opts []toxics.ProxyOption
		if d.reset {
			opts = append(opts, toxics.WithReset())
		}
		p, err := tc.Faults.NewProxy(strings.ToLower(ent.ID), toxics.UpstreamOf(u), opts...)
		if err != nil {
			e.Failf("fault proxy: %v", err)
		}
		e.proxy = p
		u.Host = p.Addr()
		base = u.String()
	}
	e.tr = &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		MaxIdleConnsPerHost: 4,
		ForceAttemptHTTP2:   false,
	}
	e.C = e.client(base, e.Config.RequestHeader())
	e.Cleanup(func(context.Context) {
		e.tr.CloseIdleConnections()
		if e.proxy != nil {
			e.proxy.Close()
		}
	})
	return e
}

// client returns a wire client on the check's transport and log.
func (e *env) client(u string, h http.Header) *wire.Client {
	c := e.newClient(u)
	c.FollowRedirects = e.target.FollowRedirects
	c.HTTP = &http.Client{Transport: &kit.Recorder{Base: e.tr, Log: e.Log()}, CheckRedirect: wire.RedirectPolicy(c.FollowRedirects)}
	c.ProtocolVersion = e.target.ProtocolVersion
	c.Stateless = e.stateless()
	c.Header = h
	return c
}

// as returns a client that sends the given principal's token instead.
func (e *env) as(principal int) *wire.Client {
	h := e.Config.RequestHeader()
	h.Set("Authorization", "Bearer "+e.Config.Principals[principal].Token)
	return e.client(e.C.URL, h)
}

// newClient is wire.New, remembered as one of the check's clients.
func (e *env) newClient(u string) *wire.Client {
	c := wire.New(u)
	e.mu.Lock()
	e.clients = append(e.clients, c)
	e.mu.Unlock()
	return c
}

// owns reports whether a response answers a request of one of the
// check's clients: one that does not came from another session (another
// check's, whose ids are unique in the run).
func (e *env) owns(m wire.Message) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, c := range e.clients {
		if c.Issued(m.ID) {
			return true
		}
	}
	return false
}

// ownResponses are the responses among msgs to the check's own requests;
// another session's are logged as evidence, not counted.
func (e *env) ownResponses(msgs []wire.Message) []wire.Message {
	var out []wire.Message
	for _, m := range responses(msgs) {
		if e.owns(m) {
			out = append(out, m)
		} else {
			e.Logf("a response to no request of this check (id %s): another session's, left to MSG-SESSION-ISOLATED", quoted(string(m.ID), 40))
		}
	}
	return out
}

// quoted shows text a target chose in a message: escaped, and cut to max
// bytes.
func quoted(s string, max int) string {
	if len(s) > max {
		return fmt.Sprintf("%q…", s[:max])
	}
	return fmt.Sprintf("%q", s)
}
