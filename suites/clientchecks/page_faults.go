package clientchecks

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/mcp-conform/mcp-conform/contract"
	"github.com/mcp-conform/mcp-conform/internal/report"
)

// browserLane is the timeline's lane of what the browser does: tabs
// opened, pages loaded, reloaded and torn down, the network going.
const browserLane = "browser"

// browserEvent puts what the browser did on its lane.
func (e *clientEnv) browserEvent(format string, args ...any) {
	e.Log().Mark(browserLane, report.KindNote, "", "browser: "+fmt.Sprintf(format, args...))
}

// isPage reports a client under test that is a page.
func (e *clientEnv) isPage() bool { return e.client.Page != nil }

// needsPage makes a check about what only a browser has not applicable
// to a client that is a process.
func (e *clientEnv) needsPage() {
	if !e.isPage() {
		e.Skip(report.NeedsBrowser, "not applicable: the check is about a web page in a browser (mcp-conform client --browser PAGE_URL)")
	}
}

// reload is F-RELOAD: the browser reloads cr's page (the user's refresh),
// and the new document is run r. cr ends there.
func (e *clientEnv) reload(cr *clientRun, r contract.Run) *clientRun {
	e.Helper()
	old := cr.proc.(*pageRun)
	e.Logf("!! F-RELOAD: the browser reloads run %d's page; the new document is run %d", cr.n, cr.n+1)
	e.browserEvent("tab %d reloaded (F-RELOAD)", old.t.n)
	return e.begin(r, func(next *clientRun, r contract.Run) (runner, error) {
		p := newPageRun(next, old.t)
		reloaded := false
		old.end.Do(func() {
			reloaded = true
			cr.pmu.Lock()
			cr.pageDone = true
			cr.pmu.Unlock()
			old.t.mu.Lock()
			old.t.cur = p
			old.t.mu.Unlock()
			cr.exit(-1, "", "its page reloaded by the browser (F-RELOAD)")
		})
		if !reloaded {
			// It ended by itself first, its page torn down: a load, then.
			return e.loadPage(next, r)
		}
		if err := old.t.tab.Freeze(); err != nil {
			e.Logf("freezing run %d's page: %v", cr.n, err)
		}
		if err := old.t.tab.Reload(pageScript(r.Page(next.n))); err != nil {
			go p.finish(-1, "the page did not reload: "+err.Error())
		}
		return p, nil
	})
}

// offlineUntilFailure is F-OFFLINE for at least least: cr's tab goes
// offline, and back online once a request of the page failed for it or
// at most later; it says whether one did. A page may rightly wait for its
// online event rather than try while offline; one that tries sees its
// request fail before the network comes back.
func (e *clientEnv) offlineUntilFailure(cr *clientRun, least, most time.Duration, went func()) bool {
	e.Helper()
	p := cr.proc.(*pageRun)
	before := p.failed()
	e.offline(cr, true)
	went()
	e.Pause(least)
	failed := p.awaitFailure(before, most-least)
	e.offline(cr, false)
	return failed
}

// offline is F-OFFLINE: the network of cr's tab goes off, or back on.
func (e *clientEnv) offline(cr *clientRun, off bool) {
	e.Helper()
	what := "back online"
	if off {
		what = "offline: its requests fail at once"
	}
	e.Logf("!! F-OFFLINE: run %d's tab %s", cr.n, what)
	e.browserEvent("tab %d %s", cr.proc.(*pageRun).t.n, what)
	if err := cr.proc.(*pageRun).t.tab.Offline(off); err != nil {
		e.Failf("switching the tab's network: %v", err)
	}
}

// pageStarving says why a page that showed no sign of life may never have
// been run by the browser, or "": on a machine whose load average is at
// least its cores, a page's start (its scripts parsed, its WebAssembly
// compiled: work a process start does not have) can outlast a budget
// measured on a quieter moment, and a hung page cannot be told from one
// the browser has not got to.
func (cr *clientRun) pageStarving() string {
	if _, ok := cr.proc.(*pageRun); !ok {
		return ""
	}
	if avg := loadAverage(); avg >= float64(cores) {
		return fmt.Sprintf("on a machine whose load average was %.1f on %d cores: the browser may not have got to run the page", avg, cores)
	}
	return ""
}

// loadAverage is the machine's load average over the last minute (0 where
// /proc/loadavg cannot be read).
func loadAverage() float64 {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(data))
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}
