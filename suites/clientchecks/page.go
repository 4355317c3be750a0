package clientchecks

import (
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/mcp-conform/mcp-conform/contract"
	"github.com/mcp-conform/mcp-conform/toxics/browser"
)

// Page is a client under test that is a web page (`client --browser`):
// each run is a load of the page in a tab of Browser, under the page
// contract (package contract).
type Page struct {
	// URL is the page's address; contract.PageURLPlaceholder in it is
	// replaced with the scripted server's URL.
	URL string
	// Browser runs the pages.
	Browser *browser.Browser
}

// Origin is the page's origin, which the scripted server lets call it
// (CORS).
func (p *Page) Origin() string {
	u, err := url.Parse(p.URL)
	if err != nil {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// pageTab is a tab of a check's profile and the run it shows, if any.
type pageTab struct {
	n   int // the tab's number in its check, from 1
	tab *browser.Tab
	mu  sync.Mutex
	cur *pageRun // nil between runs
	// caught is closed when the tab's events have caught up with a run's
	// tear-down (see pageRun.finish).
	caught chan struct{}
}

// flushRun is the run number of the call that marks where a torn-down
// page's events end.
const flushRun = -1

// pageRun is one load of the page: a runner.
type pageRun struct {
	cr  *clientRun
	t   *pageTab
	end sync.Once

	mu       sync.Mutex
	failures int           // the page's requests that failed
	failedCh chan struct{} // closed at the next failure
}

func newPageRun(cr *clientRun, t *pageTab) *pageRun {
	return &pageRun{cr: cr, t: t, failedCh: make(chan struct{})}
}

// pageScript defines contract.PageGlobal for run pr before the page's
// own scripts run.
func pageScript(pr contract.PageRun) string {
	run, _ := json.Marshal(pr)
	return fmt.Sprintf(`(() => {
  const run = Object.freeze(%s);
  const call = (b, v) => globalThis[b](JSON.stringify(v));
  const api = {
    run,
    line(v) { call(%q, {run: run.run, line: typeof v === "string" ? v : JSON.stringify(v)}); },
    exit(code) { call(%q, {run: run.run, code: Number(code) | 0}); },
    oncancel: null,
  };
  Object.defineProperty(globalThis, %q, {value: api, enumerable: true});
})();`, run, contract.PageLineBinding, contract.PageExitBinding, contract.PageGlobal)
}

// loadPage starts run cr as a load of the page in an idle tab of the
// check's profile (a new tab if every tab is busy).
func (e *clientEnv) loadPage(cr *clientRun, r contract.Run) (*pageRun, error) {
	p, err := e.idleTab(cr)
	if err != nil {
		return nil, err
	}
	t := p.t
	// Opening a browser context and a tab is the harness's doing, which
	// a busy machine can make take seconds: the run starts at its load.
	cr.started = time.Now()
	page := strings.ReplaceAll(e.client.Page.URL, contract.PageURLPlaceholder, url.QueryEscape(r.URL))
	e.browserEvent("tab %d loads the page for run %d", t.n, cr.n)
	if err := t.tab.Load(page, pageScript(r.Page(cr.n))); err != nil {
		go p.finish(-1, "the page did not load: "+err.Error())
	}
	return p, nil
}

// idleTab gives run cr a tab whose run ended, or a new one, and returns
// cr's load of the page there. The tab is taken under the check's lock,
// so two runs started at once never share one.
func (e *clientEnv) idleTab(cr *clientRun) (*pageRun, error) {
	e.pmu.Lock()
	defer e.pmu.Unlock()
	take := func(t *pageTab) *pageRun {
		p := newPageRun(cr, t)
		t.cur = p
		return p
	}
	for _, t := range e.tabs {
		t.mu.Lock()
		if t.cur == nil {
			p := take(t)
			t.mu.Unlock()
			return p, nil
		}
		t.mu.Unlock()
	}
	if e.profile == nil {
		p, err := e.client.Page.Browser.Profile()
		if err != nil {
			return nil, err
		}
		e.profile = p
	}
	t := &pageTab{n: len(e.tabs) + 1}
	if t.n > 1 {
		e.browserEvent("tab %d opened beside the others, on the same storage", t.n)
	}
	tab, err := e.profile.Open([]string{contract.PageLineBinding, contract.PageExitBinding}, browser.Events{
		Binding: t.binding, Console: t.console, Crashed: t.crashed, Failed: t.failed,
	})
	if err != nil {
		return nil, err
	}
	t.tab = tab
	e.tabs = append(e.tabs, t)
	t.mu.Lock()
	defer t.mu.Unlock()
	return take(t), nil
}

// closePages closes the check's profile: its tabs and its storage.
func (e *clientEnv) closePages() {
	e.pmu.Lock()
	defer e.pmu.Unlock()
	if e.profile != nil {
		e.profile.Close()
	}
}

// current returns the tab's run, if it is run (0: any).
func (t *pageTab) current(run int) *pageRun {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cur == nil || (run != 0 && t.cur.cr.n != run) {
		return nil
	}
	return t.cur
}

func (t *pageTab) binding(name, payload string) {
	var c contract.PageCall
	err := json.Unmarshal([]byte(payload), &c)
	if err == nil && c.Run == flushRun {
		t.mu.Lock()
		if t.caught != nil {
			close(t.caught)
			t.caught = nil
		}
		t.mu.Unlock()
		return
	}
	if err != nil || c.Run == 0 {
		if p := t.current(0); p != nil {
			p.cr.consoleLine(fmt.Sprintf("%s called with %q, not what %s.line and exit pass", name, payload, contract.PageGlobal))
		}
		return
	}
	p := t.current(c.Run)
	if p == nil {
		return // a page torn down, or the run already ended
	}
	switch name {
	case contract.PageLineBinding:
		p.cr.pageWrite(p.cr.out, c.Line)
	case contract.PageExitBinding:
		p.finishAsync(c.Code, "")
	}
}

func (t *pageTab) console(m chromedp.ConsoleMessage) {
	if p := t.current(0); p != nil {
		p.cr.consoleLine("console." + string(m.Type) + ": " + m.Text)
	}
}

// failed counts a request of the run's page that failed.
func (t *pageTab) failed(string) {
	if p := t.current(0); p != nil {
		p.mu.Lock()
		p.failures++
		ch := p.failedCh
		p.failedCh = make(chan struct{})
		p.mu.Unlock()
		close(ch)
	}
}

// failed returns how many requests of the page have failed.
func (p *pageRun) failed() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.failures
}

// awaitFailure waits until more than n requests of the page have failed,
// or d passes, and reports whether they did.
func (p *pageRun) awaitFailure(n int, d time.Duration) bool {
	deadline := time.After(d)
	for {
		p.mu.Lock()
		got, ch := p.failures, p.failedCh
		p.mu.Unlock()
		if got > n {
			return true
		}
		select {
		case <-ch:
		case <-deadline:
			return false
		}
	}
}

func (t *pageTab) crashed() {
	if p := t.current(0); p != nil {
		p.finishAsync(-1, "the page crashed")
	}
}

// consoleLine is a line of the page's console: its stderr.
func (cr *clientRun) consoleLine(s string) { cr.pageWrite(cr.errw, s) }

// pageWrite writes one line the page printed, unless the run has ended.
func (cr *clientRun) pageWrite(w io.Writer, s string) {
	cr.pmu.Lock()
	defer cr.pmu.Unlock()
	if !cr.pageDone {
		w.Write([]byte(strings.ReplaceAll(s, "\n", " ") + "\n"))
	}
}

// finishAsync ends the run from one of the tab's event goroutines, which
// must not wait on the browser.
func (p *pageRun) finishAsync(code int, how string) { go p.finish(code, how) }

// caughtUp bounds the wait for a torn-down page's last events.
const caughtUp = 5 * time.Second

// finish ends the run once: the page is torn down (a page that reported
// its exit leaves no stream open, as an exited process leaves none), and
// the tab is free for the next run. What the page printed before it went
// is the run's, as a killed process's last lines are read from its pipe:
// the run ends once the tab's events have caught up with the tear-down
// (a call of the line binding from the next document, which arrives
// after every call of the old one).
func (p *pageRun) finish(code int, how string) {
	p.end.Do(func() {
		cr, t := p.cr, p.t
		why := how
		if why == "" {
			why = fmt.Sprintf("it called exit(%d), its page unloaded", code)
		}
		cr.e.browserEvent("tab %d: run %d over: %s", t.n, cr.n, why)
		caught := make(chan struct{})
		t.mu.Lock()
		t.caught = caught
		t.mu.Unlock()
		err := t.tab.Unload()
		if err == nil {
			_, err = t.tab.Eval(fmt.Sprintf(`globalThis[%q](JSON.stringify({run: %d}))`, contract.PageLineBinding, flushRun))
		}
		if err == nil {
			select {
			case <-caught:
			case <-time.After(caughtUp):
				err = fmt.Errorf("its events did not catch up within %v", caughtUp)
			}
		}
		if err != nil {
			cr.e.Logf("tearing run %d's page down: %v", cr.n, err)
		}
		cr.pmu.Lock()
		cr.pageDone = true
		cr.pmu.Unlock()
		t.mu.Lock()
		t.cur, t.caught = nil, nil
		t.mu.Unlock()
		cr.exit(code, "", how)
	})
}

func (p *pageRun) kill() {
	// The page stops handling what arrives at once; tearing it down takes
	// the browser a while, more on a busy machine.
	if err := p.t.tab.Freeze(); err != nil {
		p.cr.e.Logf("freezing run %d's page: %v", p.cr.n, err)
	}
	p.finish(-1, "its page torn down (F-REFRESH)")
}

func (p *pageRun) killing() string {
	return "frozen and torn down: its scripts stopped at once, then its tab navigated away, its requests aborted, its storage kept"
}

func (p *pageRun) reap() string { return "" }

func (p *pageRun) interrupt() string {
	got, err := p.t.tab.Eval(`(() => { const c = globalThis.` + contract.PageGlobal + `; if (c && typeof c.oncancel === "function") { c.oncancel(); return true; } return false; })()`)
	switch {
	case err != nil:
		return fmt.Sprintf("calling run %d's %s.oncancel failed: %v", p.cr.n, contract.PageGlobal, err)
	case got != "true":
		return fmt.Sprintf("run %d's page set no %s.oncancel: it cannot be cancelled", p.cr.n, contract.PageGlobal)
	}
	return fmt.Sprintf("run %d's %s.oncancel called (the page's Stop)", p.cr.n, contract.PageGlobal)
}
