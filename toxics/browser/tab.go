package browser

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/inspector"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/storage"
	"github.com/chromedp/chromedp"
)

// Events are what a tab reports, each on a goroutine of the tab's own, in
// the order the browser sent them.
type Events struct {
	// Binding is a call of one of the tab's bindings (Open's names) by
	// the page: its name and its one string argument.
	Binding func(name, payload string)
	// Console is a console call of the page, an uncaught exception or a
	// browser log entry (a failed request, say).
	Console func(m chromedp.ConsoleMessage)
	// Crashed is the tab's renderer crashing.
	Crashed func()
	// Failed is a request of the page that failed (not one it cancelled),
	// with the browser's error: net::ERR_INTERNET_DISCONNECTED offline.
	Failed func(errorText string)
}

// Tab is one tab of a profile.
type Tab struct {
	ctx    context.Context
	cancel context.CancelFunc

	mu     sync.Mutex
	script page.ScriptIdentifier // the script Load installed, "" if none
}

// Open opens a new tab in the profile, with the bindings named (functions
// of one string argument the page can call) and ev receiving its events.
func (p *Profile) Open(bindings []string, ev Events) (*Tab, error) {
	ctx, cancel := chromedp.NewContext(p.ctx)
	t := &Tab{ctx: ctx, cancel: cancel}
	err := chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		for _, name := range bindings {
			if _, err := cdp.Call(ctx, tg, runtime.AddBinding, runtime.AddBindingParams{Name: name}); err != nil {
				return fmt.Errorf("adding binding %s: %w", name, err)
			}
		}
		return nil
	}))
	if err != nil {
		cancel()
		return nil, fmt.Errorf("opening a tab: %w", err)
	}
	calls := chromedp.Events(ctx, runtime.BindingCalled)
	console := chromedp.Console(ctx)
	crashes := chromedp.Events(ctx, inspector.TargetCrashed)
	failures := chromedp.Events(ctx, network.LoadingFailed)
	go func() {
		for f, err := range failures {
			if err != nil {
				return
			}
			if ev.Failed != nil && !f.Canceled {
				ev.Failed(f.ErrorText)
			}
		}
	}()
	go func() {
		for c, err := range calls {
			if err != nil {
				return
			}
			if ev.Binding != nil {
				ev.Binding(c.Name, c.Payload)
			}
		}
	}()
	go func() {
		for m, err := range console {
			if err != nil {
				return
			}
			if ev.Console != nil {
				ev.Console(m)
			}
		}
	}()
	go func() {
		for _, err := range crashes {
			if err != nil {
				return
			}
			if ev.Crashed != nil {
				ev.Crashed()
			}
		}
	}()
	return t, nil
}

// Load navigates the tab to url, with script run in every document before
// the page's own scripts (replacing the script of the previous Load). It
// returns once the navigation committed, not when the page finished loading.
func (t *Tab) Load(url, script string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return chromedp.Do(t.ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		if err := t.setScript(ctx, tg, script); err != nil {
			return err
		}
		res, err := cdp.Call(ctx, tg, page.Navigate, page.NavigateParams{URL: url})
		if err != nil {
			return err
		}
		if res.ErrorText != "" {
			return errors.New(res.ErrorText)
		}
		return nil
	}))
}

// Reload is F-RELOAD: the browser's own reload of the page (the user's
// refresh), script replacing the previous one for the new document.
func (t *Tab) Reload(script string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return chromedp.Do(t.ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		if err := t.setScript(ctx, tg, script); err != nil {
			return err
		}
		_, err := cdp.Call(ctx, tg, page.Reload, page.ReloadParams{})
		return err
	}))
}

// setScript makes script the one every new document of the tab runs
// first ("" none).
func (t *Tab) setScript(ctx context.Context, tg *chromedp.Target, script string) error {
	if t.script != "" {
		if _, err := cdp.Call(ctx, tg, page.RemoveScriptToEvaluateOnNewDocument, page.RemoveScriptToEvaluateOnNewDocumentParams{Identifier: t.script}); err != nil {
			return err
		}
		t.script = ""
	}
	if script == "" {
		return nil
	}
	res, err := cdp.Call(ctx, tg, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: script})
	if err != nil {
		return err
	}
	t.script = res.Identifier
	return nil
}

// Freeze stops the page at once (its scripts, timers and the callbacks of
// its requests: the web lifecycle's frozen state), as a killed process
// stops, before Unload or Reload takes its time to tear it down; what it
// stored before stays.
func (t *Tab) Freeze() error {
	return chromedp.Do(t.ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, page.SetWebLifecycleState, page.SetWebLifecycleStateParams{State: page.SetWebLifecycleStateStateFrozen})
		return err
	}))
}

// Unload tears the page down: the tab goes to about:blank, which aborts the
// page's requests and streams and ends its scripts, as a reload or a closed
// tab does (the back/forward cache is off, so nothing is kept frozen).
func (t *Tab) Unload() error { return t.Load("about:blank", "") }

// Eval evaluates expr in the page and returns its value as JSON.
func (t *Tab) Eval(expr string) (string, error) {
	var out string
	err := chromedp.Do(t.ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		res, err := cdp.Call(ctx, tg, runtime.Evaluate, runtime.EvaluateParams{Expression: expr, ReturnByValue: ptr(true)})
		if err != nil {
			return err
		}
		if res.ExceptionDetails != nil {
			return fmt.Errorf("%s", res.ExceptionDetails.Text)
		}
		if res.Result != nil {
			out = string(res.Result.Value)
		}
		return nil
	}))
	return out, err
}

// Offline switches the tab's network off (F-OFFLINE) or back on: its
// requests fail at once and navigator.onLine follows, firing the page's
// offline and online events.
func (t *Tab) Offline(off bool) error {
	return chromedp.Do(t.ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		// The rule fails the requests; the override is what the page
		// sees (navigator.onLine, its offline and online events).
		var rules []*network.Conditions
		if off {
			rules = []*network.Conditions{{Offline: true, DownloadThroughput: -1, UploadThroughput: -1}}
		}
		if _, err := cdp.Call(ctx, tg, network.EmulateNetworkConditionsByRule, network.EmulateNetworkConditionsByRuleParams{MatchedNetworkConditions: rules}); err != nil {
			return err
		}
		_, err := cdp.Call(ctx, tg, network.OverrideNetworkState, network.OverrideNetworkStateParams{Offline: off, DownloadThroughput: -1, UploadThroughput: -1})
		return err
	}))
}

// Close closes the tab (F-TAB-CLOSED).
func (t *Tab) Close() { t.cancel() }

// ClearStorage clears every kind of storage of origin (scheme://host:port)
// in the profile (F-STORAGE-CLEARED), as a user clearing the site's data.
func (p *Profile) ClearStorage(origin string) error {
	return chromedp.Do(p.ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, storage.ClearDataForOrigin, storage.ClearDataForOriginParams{Origin: origin, StorageTypes: "all"})
		return err
	}))
}

func ptr[T any](v T) *T { return &v }
