// Package browser drives a real Chromium through the DevTools protocol
// (chromedp): a page under test runs in a tab, and the faults of a browser
// happen to it as the browser does them (docs/faults.md):
//
//	F-RELOAD        Tab.Unload then Tab.Load: the document is torn down
//	                (its fetch streams aborted, its heap gone) and loaded
//	                again in the same tab, its origin's storage kept
//	F-TAB-CLOSED    Tab.Close, then Profile.Open: a new tab on the same storage
//	F-SECOND-TAB    Profile.Open while a tab runs: two tabs, one storage
//	F-OFFLINE       Tab.Offline: the tab's network emulated offline, then online
//	F-STORAGE-CLEARED Profile.ClearStorage: the site's data cleared
//
// Each Profile is a browser context of its own (an incognito-like profile):
// its storage is shared by its tabs and by nothing else, so checks that run
// side by side never see each other's state.
package browser

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"

	"github.com/chromedp/chromedp"
)

// EnvChromium names the Chromium executable to use instead of the one on
// PATH.
const EnvChromium = "MCP_CONFORM_CHROMIUM"

// Find returns the path of the Chromium to drive: $MCP_CONFORM_CHROMIUM,
// else chromium, chromium-browser or google-chrome on PATH.
func Find() (string, error) {
	if p := os.Getenv(EnvChromium); p != "" {
		if _, err := exec.LookPath(p); err != nil {
			return "", fmt.Errorf("$%s=%s: %w", EnvChromium, p, err)
		}
		return p, nil
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errors.New("no Chromium found (looked for chromium, chromium-browser and google-chrome on PATH, and $" + EnvChromium + "); install it (Debian: apt-get install chromium)")
}

// Browser is one headless Chromium process.
type Browser struct {
	ctx         context.Context // the browser's first tab, which keeps it alive
	cancel      context.CancelFunc
	cancelAlloc context.CancelFunc
}

// Launch starts Chromium at path, headless, with a fresh profile directory
// that goes when the browser does. Its back/forward cache is off: a page
// navigated away from is torn down, as a reload tears it down.
func Launch(path string) (*Browser, error) {
	dir, err := os.MkdirTemp("", "mcp-conform-chromium-")
	if err != nil {
		return nil, err
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.UserDataDir(dir),
		chromedp.Headless,
		chromedp.DisableGPU,
		// As root in a container, Chromium's sandbox cannot start.
		chromedp.NoSandbox,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-features", "Translate,BackForwardCache,MediaRouter,OptimizationHints"),
		// A WebAssembly page (the reference browser client's is 17 MB) is
		// compiled function by function as it runs, and never again by the
		// optimizing tier: every load of it costs far less CPU.
		chromedp.Flag("js-flags", "--wasm-lazy-compilation --no-wasm-tier-up"),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, cancel := chromedp.NewContext(actx)
	b := &Browser{ctx: bctx, cancel: cancel, cancelAlloc: func() { cancelAlloc(); os.RemoveAll(dir) }}
	if err := chromedp.Do(bctx); err != nil {
		b.Close()
		return nil, fmt.Errorf("starting %s: %w", path, err)
	}
	return b, nil
}

// Close ends the browser and removes its profile directory.
func (b *Browser) Close() {
	b.cancel()
	b.cancelAlloc()
}

// Profile is a browser context: tabs that share one storage.
type Profile struct {
	ctx    context.Context
	cancel context.CancelFunc
}

// Profile opens a new, empty browser context.
func (b *Browser) Profile() (*Profile, error) {
	ctx, cancel := chromedp.NewContext(b.ctx, chromedp.WithNewBrowserContext())
	if err := chromedp.Do(ctx); err != nil {
		cancel()
		return nil, fmt.Errorf("opening a browser context: %w", err)
	}
	return &Profile{ctx: ctx, cancel: cancel}, nil
}

// Close closes every tab of the profile and drops its storage.
func (p *Profile) Close() { p.cancel() }
