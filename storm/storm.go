// Package storm runs a refresh storm against an MCP Streamable HTTP server:
// many sessions, each with a standalone GET stream and one call of a
// notifying tool, whose connections are all reset at once while the calls
// run; every session then reconnects as a spec-following client would. It
// counts what the server lost or sent twice, and how fast it answered.
package storm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/toxics"
)

// Reconnect strategies after the cut.
const (
	ReconnectResume = "resume"  // GET with the POST stream's Last-Event-ID
	ReconnectNewGET = "new-get" // a new standalone GET (with the old GET's Last-Event-ID, if it had one)
	ReconnectBoth   = "both"    // both at once
)

// Where the connections are cut.
const (
	// CutClient: the client resets its own connections (SO_LINGER 0, then
	// close), as a crashed browser or a dropped NAT entry looks to the server.
	CutClient = "client"
	// CutProxy: an embedded fault proxy between the client and the server
	// resets both sides of every connection, as a restarting proxy does.
	// What the server wrote that the proxy had read but not passed on is
	// lost with it, although the server's write succeeded.
	CutProxy = "proxy"
)

// Options configure a storm.
type Options struct {
	URL             string
	Header          http.Header // sent on every request (token, origin)
	ProtocolVersion string
	// Tool is called once per session with a progress token; it must send
	// Notifications messages of Method before its result.
	Tool          string
	Arguments     map[string]any
	Method        string
	Notifications int
	// Interval is the declared time between two notifications; it bounds
	// the waits for them.
	Interval time.Duration

	Sessions    int
	Concurrency int
	// CutAfter is how many notifications every session receives before all
	// connections are cut.
	CutAfter int
	// Cut is where the connections are reset: CutClient (default) or
	// CutProxy.
	Cut            string
	Reconnect      string
	ReconnectDelay time.Duration
	// LogLevel, when set, is sent with logging/setLevel by each session
	// after initialize (part of its setup): which log messages the
	// server's tools send is then the client's choice, the same for every
	// server stormed.
	LogLevel string
	// Settle bounds the wait, after the reconnects, for every notification
	// and result; RequestTimeout bounds each setup request.
	Settle         time.Duration
	RequestTimeout time.Duration
	// Attempts bounds how often one stream is reopened after it ends
	// without everything expected.
	Attempts int

	// Server, when set, samples the server process's memory and CPU.
	Server func() (ProcStats, error)
}

// Defaults of the options a caller leaves zero.
const (
	DefaultSessions       = 100
	DefaultConcurrency    = 50
	DefaultCutAfter       = 5
	DefaultSettle         = 30 * time.Second
	DefaultRequestTimeout = 30 * time.Second
	DefaultAttempts       = 5
)

// Validate checks the options but the URL, and fills in defaults.
func (o *Options) Validate() error {
	switch {
	case o.Tool == "":
		return errors.New("no notifying tool: declare tools.notifying in the target profile")
	case o.Notifications < 2:
		return fmt.Errorf("the notifying tool must send at least 2 notifications, it declares %d", o.Notifications)
	case o.Interval <= 0:
		return fmt.Errorf("the notifying tool's interval must be positive, got %v", o.Interval)
	case o.Sessions < 1:
		return fmt.Errorf("--sessions must be 1 or more, got %d", o.Sessions)
	case o.Concurrency < 1:
		return fmt.Errorf("--concurrency must be 1 or more, got %d", o.Concurrency)
	case o.CutAfter < 1 || o.CutAfter >= o.Notifications:
		return fmt.Errorf("--cut-after must be between 1 and %d (the tool's notifications minus one), got %d", o.Notifications-1, o.CutAfter)
	case o.ReconnectDelay < 0:
		return fmt.Errorf("--reconnect-delay must not be negative, got %v", o.ReconnectDelay)
	case o.Settle < 0 || o.RequestTimeout < 0 || o.Attempts < 0:
		return errors.New("--settle, --request-timeout and --attempts must not be negative")
	}
	switch o.Reconnect {
	case ReconnectResume, ReconnectNewGET, ReconnectBoth:
	case "":
		o.Reconnect = ReconnectBoth
	default:
		return fmt.Errorf("--reconnect must be resume, new-get or both, got %q", o.Reconnect)
	}
	switch o.Cut {
	case CutClient, CutProxy:
	case "":
		o.Cut = CutClient
	default:
		return fmt.Errorf("--cut must be client or proxy, got %q", o.Cut)
	}
	if o.LogLevel != "" && !slices.Contains(logLevels, o.LogLevel) {
		return fmt.Errorf("--log-level must be one of %s, got %q", strings.Join(logLevels, ", "), o.LogLevel)
	}
	if o.Method == "" {
		o.Method = "notifications/progress"
	}
	if o.ProtocolVersion == "" {
		o.ProtocolVersion = wire.DefaultProtocolVersion
	}
	if o.Settle == 0 {
		o.Settle = DefaultSettle
	}
	if o.RequestTimeout == 0 {
		o.RequestTimeout = DefaultRequestTimeout
	}
	if o.Attempts == 0 {
		o.Attempts = DefaultAttempts
	}
	return nil
}

// logLevels are the MCP logging levels, least severe first.
var logLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// storm is one run in progress.
type storm struct {
	o        Options
	c        *wire.Client
	conns    *conns
	sessions []*session
	wg       sync.WaitGroup // stream readers
	httpErrs errCount
	cutting  atomic.Bool // set before the cut: stream errors after it are expected
}

// errCount counts HTTP errors by description.
type errCount struct {
	mu sync.Mutex
	n  map[string]int
}

func (e *errCount) add(what string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.n == nil {
		e.n = map[string]int{}
	}
	e.n[what]++
}

func (e *errCount) snapshot() map[string]int {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := map[string]int{}
	for k, v := range e.n {
		out[k] = v
	}
	return out
}

// Run runs one storm. An error means the storm could not run (bad options,
// no session could be set up); what the server lost is in the Result.
func Run(ctx context.Context, o Options) (*Result, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if o.URL == "" {
		return nil, errors.New("no URL to storm")
	}
	cn := newConns()
	base := o.URL
	if o.Cut == CutProxy {
		fs := toxics.NewServer()
		defer fs.Close()
		p, u, err := proxyFor(fs, o.URL)
		if err != nil {
			return nil, err
		}
		cn.proxy, base = p, u
	}
	tr := &http.Transport{
		DialContext:         cn.dial,
		MaxIdleConns:        o.Concurrency * 2,
		MaxIdleConnsPerHost: o.Concurrency * 2,
		DisableCompression:  true,
	}
	defer tr.CloseIdleConnections()
	c := wire.New(base)
	c.HTTP = &http.Client{Transport: tr}
	c.ProtocolVersion = o.ProtocolVersion
	for k, vs := range o.Header {
		c.Header[k] = append([]string(nil), vs...)
	}
	st := &storm{o: o, c: c, conns: cn}
	defer st.stop()
	return st.run(ctx)
}

// stop cuts what is still open and waits for the readers.
func (st *storm) stop() {
	st.conns.cut()
	st.wg.Wait()
}

func (st *storm) run(ctx context.Context) (*Result, error) {
	res := &Result{Options: summarise(st.o), Started: time.Now()}
	cpu0 := selfCPU()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	streams, stopStreams := context.WithCancel(ctx)
	defer stopStreams()
	if st.o.Server != nil {
		st.warmUp(ctx)
	}
	sample := st.sampleServer(res)
	defer sample.stop()

	// Setup: initialize, initialized and the standalone GET of every
	// session, Concurrency at a time.
	t0 := time.Now()
	setup := make([]time.Duration, st.o.Sessions)
	ok := make([]bool, st.o.Sessions)
	st.sessions = make([]*session, st.o.Sessions)
	pool(st.o.Sessions, st.o.Concurrency, func(i int) {
		s := newSession(i, st.o.CutAfter, st.o.Notifications, st.o.Reconnect != ReconnectNewGET)
		st.sessions[i] = s
		start := time.Now()
		if err := st.setup(ctx, streams, s); err != nil {
			st.httpErrs.add("setup: " + err.Error())
			s.errorf("setup: %v", err)
			return
		}
		setup[i], ok[i] = time.Since(start), true
	})
	res.SetupSeconds = time.Since(t0).Seconds()
	var ready []*session
	var setupTimes []time.Duration
	for i, s := range st.sessions {
		if ok[i] {
			ready = append(ready, s)
			setupTimes = append(setupTimes, setup[i])
		}
	}
	res.SessionsSetUp = len(ready)
	res.SessionsPerSecond = float64(len(ready)) / res.SetupSeconds
	res.Setup = latencies(setupTimes)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if len(ready) == 0 {
		return nil, fmt.Errorf("none of %d sessions could be set up: %s", len(st.sessions), firstErrors(st.sessions))
	}
	sample.idle(len(ready))

	// The calls: each session's POST stream is read until the cut.
	for _, s := range ready {
		s := s
		st.wg.Go(func() { st.call(streams, s) })
	}
	reachBy := time.Now().Add(time.Duration(st.o.CutAfter+2)*st.o.Interval + st.o.RequestTimeout)
	res.SessionsReachedCut = waitAll(ctx, ready, func(s *session) <-chan struct{} { return s.reached }, reachBy)

	// The cut: every connection reset at once.
	st.cutting.Store(true)
	cutAt := time.Now()
	res.ConnectionsCut = st.conns.cut()
	cutEnd := time.Now() // every reset sent: a server's later writes fail
	stopStreams()
	st.wg.Wait()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	res.CutAfterSeconds = cutAt.Sub(t0).Seconds()

	// The reconnects, after the delay.
	resume := st.o.Reconnect != ReconnectNewGET
	if err := sleep(ctx, st.o.ReconnectDelay); err != nil {
		return nil, err
	}
	again, stopAgain := context.WithCancel(ctx)
	defer stopAgain()
	sem := make(chan struct{}, st.o.Concurrency)
	deadline := time.Now().Add(st.o.Settle)
	for _, s := range ready {
		s := s
		if resume {
			st.wg.Go(func() { st.reconnect(again, sem, s, KindResume, deadline) })
		}
		if st.o.Reconnect != ReconnectResume {
			st.wg.Go(func() { st.reconnect(again, sem, s, KindNewGET, deadline) })
		}
	}
	res.SessionsComplete = waitAll(ctx, ready, func(s *session) <-chan struct{} { return s.done }, deadline)
	res.SettleSeconds = time.Since(cutAt).Seconds()
	stopAgain()
	st.conns.cut()
	st.wg.Wait()
	sample.stop()

	res.tally(st.sessions, cutAt, st.o)
	res.inFlight(st.sessions, cutEnd, st.o)
	res.HTTPErrors = st.httpErrs.snapshot()
	res.Seconds = time.Since(res.Started).Seconds()
	res.ClientCPUSeconds = (selfCPU() - cpu0).Seconds()
	res.Cores = numCPU()
	return res, nil
}

// setup opens a session and its standalone GET stream, whose reader runs
// until streams ends.
func (st *storm) setup(ctx, streams context.Context, s *session) error {
	rctx, cancel := context.WithTimeout(ctx, st.o.RequestTimeout)
	defer cancel()
	sid, err := st.c.Connect(rctx)
	if err != nil {
		return err
	}
	s.id = sid
	if st.o.LogLevel != "" {
		if err := st.setLevel(rctx, sid); err != nil {
			return err
		}
	}
	req, err := st.c.NewHTTPRequest(streams, http.MethodGet, sid, nil)
	if err != nil {
		return err
	}
	resp, err := st.openTimed(req, st.o.RequestTimeout)
	if err != nil {
		return fmt.Errorf("standalone GET: %w", err)
	}
	if resp.StatusCode != http.StatusOK || !wire.IsSSE(resp) {
		return fmt.Errorf("standalone GET: %s", refusal(resp))
	}
	st.wg.Go(func() { _ = s.read(streams, KindGET, resp, st.o.Method) })
	return nil
}

// warmUp sets up one session as the storm's sessions are set up, closes
// its stream and deletes it, before the server's RSS and CPU are first
// read: what the first session pages in (code, pools, lazily built tables)
// is paid once, whatever N, and is not any one session's. A server that
// cannot be set up is reported by the setup that follows.
func (st *storm) warmUp(ctx context.Context) {
	streams, stop := context.WithCancel(ctx)
	defer stop()
	s := newSession(-1, st.o.CutAfter, st.o.Notifications, false)
	if st.setup(ctx, streams, s) != nil {
		return
	}
	stop()
	rctx, cancel := context.WithTimeout(ctx, st.o.RequestTimeout)
	defer cancel()
	_, _ = st.c.Delete(rctx, s.id) // a server without DELETE keeps it: one session
}

// setLevel sends logging/setLevel with the storm's level and wants a result.
func (st *storm) setLevel(ctx context.Context, sid string) error {
	resp, err := st.c.Call(ctx, sid, "logging/setLevel", map[string]any{"level": st.o.LogLevel})
	if err != nil {
		return fmt.Errorf("logging/setLevel: %w", err)
	}
	if resp.Status != http.StatusOK {
		return fmt.Errorf("logging/setLevel: HTTP %d", resp.Status)
	}
	m, err := resp.Result()
	if err != nil {
		return fmt.Errorf("logging/setLevel: %w", err)
	}
	if m.Error != nil {
		return fmt.Errorf("logging/setLevel: %w", m.Error)
	}
	return nil
}

// openTimed sends req and waits at most d for its answer's headers; the
// body stays readable after, until req's own context ends.
func (st *storm) openTimed(req *http.Request, d time.Duration) (*http.Response, error) {
	ctx, cancel := context.WithCancel(req.Context())
	t := time.AfterFunc(d, cancel)
	resp, err := st.c.HTTP.Do(req.WithContext(ctx))
	if !t.Stop() {
		if err == nil {
			resp.Body.Close()
		}
		return nil, fmt.Errorf("no answer within %v", d)
	}
	return resp, err
}

// mustID is a request id as it comes back in the response.
func mustID(id any) json.RawMessage {
	b, _ := json.Marshal(id)
	return b
}

// call starts the session's tool call and reads its POST stream.
func (st *storm) call(streams context.Context, s *session) {
	body := st.c.Request("tools/call", wire.ToolParams(st.o.Tool, st.o.Arguments, s.token))
	s.reqID = mustID(body["id"])
	req, err := st.c.NewHTTPRequest(streams, http.MethodPost, s.id, body)
	if err != nil {
		s.errorf("call: %v", err)
		return
	}
	s.mu.Lock()
	s.sentAt = time.Now()
	s.mu.Unlock()
	resp, err := st.openTimed(req, st.o.RequestTimeout)
	if err != nil {
		if !st.cutting.Load() {
			st.httpErrs.add("call: " + err.Error())
			s.errorf("call: %v", err)
		}
		closeOnce(s.reached)
		return
	}
	if resp.StatusCode != http.StatusOK {
		what := refusal(resp)
		st.httpErrs.add("call: " + what)
		s.errorf("call: %s", what)
		closeOnce(s.reached)
		return
	}
	if err := s.read(streams, KindPOST, resp, st.o.Method); err != nil && !st.cutting.Load() {
		s.errorf("POST stream: %v", err)
	}
	closeOnce(s.reached) // ended before the cut: nothing more will come
}

// reconnect opens one stream of kind after the cut, and opens it again
// (with the latest Last-Event-ID) while the session is incomplete, up to
// Attempts times and until the deadline.
func (st *storm) reconnect(ctx context.Context, sem chan struct{}, s *session, kind string, deadline time.Time) {
	for attempt := 0; attempt < st.o.Attempts && time.Now().Before(deadline); attempt++ {
		if attempt > 0 {
			if sleep(ctx, 100*time.Millisecond) != nil {
				return
			}
		}
		select {
		case <-s.done:
			return
		case <-ctx.Done():
			return
		default:
		}
		post, get := s.lastIDs()
		last := get
		if kind == KindResume {
			if s.resultIn() {
				return
			}
			if post == "" {
				s.errorf("the POST stream carried no event id: it cannot be resumed")
				return
			}
			last = post
		}
		req, err := st.c.NewHTTPRequest(ctx, http.MethodGet, s.id, nil)
		if err != nil {
			return
		}
		if last != "" {
			req.Header.Set(wire.HeaderLastEventID, last)
		}
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			return
		}
		resp, err := st.openTimed(req, st.o.RequestTimeout)
		<-sem
		if err != nil {
			if ctx.Err() == nil {
				st.httpErrs.add(kind + ": " + err.Error())
			}
			continue
		}
		if resp.StatusCode != http.StatusOK || !wire.IsSSE(resp) {
			st.httpErrs.add(kind + ": " + refusal(resp))
			continue
		}
		s.markHeaders(kind)
		if err := s.read(ctx, kind, resp, st.o.Method); err != nil && ctx.Err() == nil {
			st.httpErrs.add(kind + " stream: " + err.Error())
		}
	}
}

// refusal describes an answer that is not the stream asked for, and
// closes it: its status, and the first line of its body (at most 100
// bytes), which says why when the server says it.
func refusal(resp *http.Response) string {
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 100))
	line, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	what := fmt.Sprintf("HTTP %d", resp.StatusCode)
	if resp.StatusCode == http.StatusOK {
		what += " " + resp.Header.Get("Content-Type")
	}
	if line = strings.TrimSpace(line); line != "" {
		what += " " + strconv.Quote(line)
	}
	return what
}

// pool runs f(0..n-1), k at a time.
func pool(n, k int, f func(i int)) {
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(n, k) {
		wg.Go(func() {
			for i := range next {
				f(i)
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}

// waitAll waits until each session's channel is closed or the deadline
// passes, and returns how many were closed.
func waitAll(ctx context.Context, ss []*session, ch func(*session) <-chan struct{}, deadline time.Time) int {
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	n := 0
	for _, s := range ss {
		select {
		case <-ch(s):
			n++
			continue
		case <-ctx.Done():
		case <-t.C:
		}
		break
	}
	for _, s := range ss[n:] { // count what else made it
		select {
		case <-ch(s):
			n++
		default:
		}
	}
	return n
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
