package harness

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/suites/kit"
)

// Liveness: a target that stops answering altogether (it answered
// initialize, then hangs) would leave every check waiting until its own
// deadline, minutes in all, and each would fail for what is one fact. So
// while the checks run, the harness pings the target now and then on a
// connection of its own; after several pings in a row got no answer at
// all, it ends the run's checks at once, inconclusive, with that fact as
// their message (kit.Unobservable).
//
// The probes are generous on purpose: a target slowed by a busy machine
// (the harness's own load among it) must never be taken for a dead one,
// so it takes four silent probes of 5 s each, about 20-30 s, before the
// run ends; a hung target still costs that instead of every deadline.
const (
	probeEvery     = 2 * time.Second
	probeTimeout   = 5 * time.Second
	probesToGiveUp = 4
)

// liveness is the watcher of one server run.
type liveness struct {
	url     string
	header  http.Header
	version string
	// every, timeout and failures are probeEvery, probeTimeout and
	// probesToGiveUp (tests shorten them).
	every, timeout time.Duration
	failures       int

	mu sync.Mutex
	// down counts what has the target down on purpose: a restart in
	// progress, or a kill (F-KILL) until the restart that follows it.
	down int
	// silent, once the watcher has given up on a silent target, is why,
	// and silentAfter the last moment the target was seen answering.
	silent      error
	silentAfter time.Time
	// missing is the pings in a row the target has not answered so far;
	// ended is set when the watcher stops.
	missing int
	ended   bool
}

// settle waits, when the target is not answering the watcher's pings
// right now, until the watcher decides: it answers again, or it has
// stopped answering (silence). A run whose checks all ended while the
// target was silent does not end before that is known, so what a silence
// cut short is judged as such (engine.silence), however fast the checks
// ended. Bounded by the watcher's own patience.
func (l *liveness) settle(ctx context.Context) {
	limit := time.After(time.Duration(l.failures+1) * (l.every + l.timeout))
	for {
		l.mu.Lock()
		decided := l.missing == 0 || l.silent != nil || l.ended
		l.mu.Unlock()
		if decided {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-limit:
			return
		case <-time.After(l.every / 4):
		}
	}
}

// silence returns why the watcher gave up on a target that stopped
// answering, and the last moment it was seen answering before that; nil
// while it answers.
func (l *liveness) silence() (error, time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.silent, l.silentAfter
}

// LivenessProbes are the liveness watcher's timings: a probe every Every,
// each given Timeout, and Misses silent probes in a row end the run.
// Zero fields take the defaults (probeEvery, probeTimeout,
// probesToGiveUp).
type LivenessProbes struct {
	Every, Timeout time.Duration
	Misses         int
}

func newLiveness(url, version string, header http.Header, p LivenessProbes) *liveness {
	l := &liveness{url: url, version: version, header: header, every: probeEvery, timeout: probeTimeout, failures: probesToGiveUp}
	if p.Every > 0 {
		l.every = p.Every
	}
	if p.Timeout > 0 {
		l.timeout = p.Timeout
	}
	if p.Misses > 0 {
		l.failures = p.Misses
	}
	return l
}

// watch probes until ctx ends; when the target stopped answering, or
// died says that the process the harness started exited on its own, it
// cancels the run with a kit.Unobservable cause and returns it.
func (l *liveness) watch(ctx context.Context, stop context.CancelCauseFunc, died <-chan error) error {
	client := &http.Client{
		Transport:     &http.Transport{DisableKeepAlives: true}, // a fresh connection each time
		CheckRedirect: wire.RedirectPolicy(false),               // any answer will do
	}
	began := time.Now()
	tick := time.NewTicker(l.every)
	defer tick.Stop()
	defer func() {
		l.mu.Lock()
		l.ended = true
		l.mu.Unlock()
	}()
	missed, first, answered := 0, time.Time{}, began
	for {
		at := time.Now()
		switch {
		case l.isDown(), l.answers(ctx, client):
			missed, answered = 0, at
			l.setMissing(0)
		case ctx.Err() != nil:
			select {
			case err := <-died:
				return &kit.Unobservable{Err: err}
			default:
			}
			return nil
		default:
			if missed == 0 {
				first = at
			}
			missed++
			l.setMissing(missed)
			if missed >= l.failures {
				cause := &kit.Unobservable{Err: fmt.Errorf("the target stopped answering: %d pings in a row, each on a fresh connection, got no answer within %v, the first at %s (%.1fs into the checks)",
					missed, l.timeout, first.Format("15:04:05"), first.Sub(began).Seconds())}
				l.mu.Lock()
				l.silent, l.silentAfter = cause, answered
				l.mu.Unlock()
				stop(cause)
				return cause
			}
		}
		select {
		case <-ctx.Done():
			// A death that came with the end is still the run's cause.
			select {
			case err := <-died:
				return &kit.Unobservable{Err: err}
			default:
			}
			return nil
		case err := <-died:
			cause := &kit.Unobservable{Err: err}
			stop(cause)
			return cause
		case <-tick.C:
		}
	}
}

// answers reports whether the target answered a ping in time: any HTTP
// status counts, and so does a refused connection (checks see that at
// once themselves); only silence does not.
func (l *liveness) answers(ctx context.Context, client *http.Client) bool {
	ctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	c := wire.New(l.url)
	c.ProtocolVersion, c.Header = l.version, l.header
	req, err := c.NewHTTPRequest(ctx, http.MethodPost, "", c.Request("ping", nil))
	if err != nil {
		return true
	}
	resp, err := client.Do(req)
	if err == nil {
		resp.Body.Close() // the status is enough; a stream need not end
		return true
	}
	var ne net.Error
	return !(errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout())
}

func (l *liveness) setMissing(n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.missing = n
}

func (l *liveness) isDown() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.down > 0
}

func (l *liveness) setDown(delta int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.down = max(0, l.down+delta)
}

// around wraps the target's restart and kill so that the watcher does not
// take a target down on purpose for one that stopped answering.
func (l *liveness) around(restart, kill func(context.Context) error) (func(context.Context) error, func(context.Context) error) {
	var mu sync.Mutex
	killed := 0 // kills not yet followed by a restart
	if restart != nil {
		inner := restart
		restart = func(ctx context.Context) error {
			l.setDown(1)
			defer func() {
				mu.Lock()
				l.setDown(-1 - killed)
				killed = 0
				mu.Unlock()
			}()
			return inner(ctx)
		}
	}
	if kill != nil {
		inner := kill
		kill = func(ctx context.Context) error {
			mu.Lock()
			killed++
			mu.Unlock()
			l.setDown(1)
			return inner(ctx)
		}
	}
	return restart, kill
}
