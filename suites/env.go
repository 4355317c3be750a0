package suites

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/target"
	"github.com/mcp-conform/mcp-conform/toxics"
)

// Env is one check's view of the target: a wire client whose connections go
// through the check's own fault proxy and whose exchanges are logged.
type Env struct {
	Entry catalogue.Entry
	// C is the client every request of the check goes through.
	C      *wire.Client
	Config *target.Config
	log    *exchangeLog
	proxy  *toxics.Proxy
	tr     *http.Transport
}

// checkOption changes how a check's Env is built.
type checkOption func(*envConfig)

type envConfig struct {
	proxy []toxics.ProxyOption
}

// withReset arms the check's proxy for F-RESET (every close becomes a TCP
// reset, so only checks that reset use it).
func withReset() checkOption {
	return func(c *envConfig) { c.proxy = append(c.proxy, toxics.WithReset()) }
}

// check registers the spec of one catalogue ID. body runs with a context
// that ends at the check's deadline.
func check(id string, budget func(*target.Config) time.Duration, body func(ctx context.Context, e *Env), opts ...checkOption) bool {
	ent := catalogue.MustLookup(id)
	var ec envConfig
	for _, o := range opts {
		o(&ec)
	}
	return It(id+": "+ent.Summary, Label(ent.Labels()...), Offset(1), func(sctx SpecContext) {
		e := setup(ent, ec)
		d := DefaultCheckTimeout
		if budget != nil {
			d += budget(e.Config)
		}
		ctx, cancel := context.WithTimeout(sctx, d)
		defer cancel()
		body(ctx, e)
	})
}

// setup skips the check when the target cannot have the behaviour, or
// when the profile lacks what the check needs, and builds its Env.
func setup(ent catalogue.Entry, ec envConfig) *Env {
	tc := TestContext
	for _, need := range ent.Needs {
		switch {
		case need == catalogue.NeedServerCmd:
			if tc.Restart == nil {
				Skip("needs a restartable target: run with --server-cmd")
			}
		case !tc.Config.Has(need):
			Skip(fmt.Sprintf("needs target-config key %s", need))
		}
	}
	if tc.Sessionless != "" && ent.ID != "ORIGIN-403" {
		Skip("not applicable: " + tc.Sessionless)
	}
	e := &Env{Entry: ent, Config: tc.Config, log: newExchangeLog()}
	base := tc.URL
	if tc.Toxics != nil {
		u, err := url.Parse(tc.URL)
		if err != nil {
			Fail(fmt.Sprintf("target URL: %v", err))
		}
		p, err := tc.Toxics.NewProxy(strings.ToLower(ent.ID), hostPort(u), ec.proxy...)
		if err != nil {
			Fail(fmt.Sprintf("fault proxy: %v", err))
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
	e.C = e.client(base, e.defaultHeader())
	DeferCleanup(func() {
		if CurrentSpecReport().Failed() {
			AddReportEntry(ExchangeEntry, e.log.String(), ReportEntryVisibilityFailureOrVerbose)
		}
		e.tr.CloseIdleConnections()
		if e.proxy != nil {
			e.proxy.Close()
		}
	})
	return e
}

// ExchangeEntry names the report entry that carries a failed check's exchange log.
const ExchangeEntry = "exchange"

func hostPort(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	if u.Scheme == "https" {
		return net.JoinHostPort(u.Hostname(), "443")
	}
	return net.JoinHostPort(u.Hostname(), "80")
}

// defaultHeader carries the profile's headers and the first principal's token.
func (e *Env) defaultHeader() http.Header {
	h := http.Header{}
	for k, v := range e.Config.Headers {
		h.Set(k, v)
	}
	if len(e.Config.Principals) > 0 {
		h.Set("Authorization", "Bearer "+e.Config.Principals[0].Token)
	}
	if e.Config.Origins.Allowed != "" {
		h.Set("Origin", e.Config.Origins.Allowed)
	}
	return h
}

// client returns a wire client on the check's transport and log.
func (e *Env) client(u string, h http.Header) *wire.Client {
	c := wire.New(u)
	c.HTTP = &http.Client{Transport: &recorder{base: e.tr, log: e.log}}
	c.ProtocolVersion = TestContext.ProtocolVersion
	c.Header = h
	return c
}

// As returns a client that sends the given principal's token instead.
func (e *Env) As(principal int) *wire.Client {
	h := e.defaultHeader()
	h.Set("Authorization", "Bearer "+e.Config.Principals[principal].Token)
	return e.client(e.C.URL, h)
}

// Logf adds a line to the exchange log.
func (e *Env) Logf(format string, args ...any) { e.log.printf(format, args...) }

// needProxy skips a check that injects faults when there is no proxy.
func (e *Env) needProxy() *toxics.Proxy {
	if e.proxy == nil {
		Skip("injects a network fault: needs the fault proxy (run without --no-proxy)")
	}
	return e.proxy
}

// Refresh cuts every live connection of the check at once (F-REFRESH).
func (e *Env) Refresh() {
	p := e.needProxy()
	e.Logf("!! F-REFRESH: every live connection cut")
	if err := p.Refresh(); err != nil {
		Fail(fmt.Sprintf("F-REFRESH: %v", err))
	}
	e.tr.CloseIdleConnections()
}

// Freeze makes every live connection half-open (F-BLACKHOLE).
func (e *Env) Freeze() {
	p := e.needProxy()
	e.Logf("!! F-BLACKHOLE: live connections frozen, not closed")
	if err := p.Freeze(); err != nil {
		Fail(fmt.Sprintf("F-BLACKHOLE: %v", err))
	}
	e.tr.CloseIdleConnections()
}

// CutAfter arms F-CUT-AFTER: the next stream to carry n events is cut.
func (e *Env) CutAfter(n int) {
	p := e.needProxy()
	e.Logf("!! F-CUT-AFTER: the next stream to carry %d events will be cut", n)
	if err := p.CutAfter(n); err != nil {
		Fail(fmt.Sprintf("F-CUT-AFTER: %v", err))
	}
}

// Reset resets every live connection of the check (F-RESET).
func (e *Env) Reset() {
	p := e.needProxy()
	e.Logf("!! F-RESET: every live connection reset (RST)")
	if err := p.Reset(); err != nil {
		Fail(fmt.Sprintf("F-RESET: %v", err))
	}
	e.tr.CloseIdleConnections()
}

// SlowLink makes the server's data arrive late and in small pieces (F-LATENCY).
func (e *Env) SlowLink() {
	p := e.needProxy()
	e.Logf("!! F-LATENCY: 20ms latency, data sliced into ~8-byte pieces")
	if err := p.Latency(20*time.Millisecond, 5*time.Millisecond); err != nil {
		Fail(fmt.Sprintf("F-LATENCY: %v", err))
	}
	if err := p.Slicer(8, 6, time.Millisecond); err != nil {
		Fail(fmt.Sprintf("F-LATENCY: %v", err))
	}
}
