package harness

import (
	"fmt"

	"github.com/mcp-conform/mcp-conform/reference/browserclient"
	"github.com/mcp-conform/mcp-conform/suites/clientchecks"
	"github.com/mcp-conform/mcp-conform/toxics/browser"
)

// openPage starts Chromium for `client --browser` and returns the page to
// grade: url, or the reference browser client (built into tmp if need be)
// served on a loopback port when url is "". stop ends both.
func openPage(url, tmp string) (*clientchecks.Page, func(), error) {
	path, err := browser.Find()
	if err != nil {
		return nil, nil, &SetupError{fmt.Errorf("--browser needs Chromium: %w", err)}
	}
	b, err := browser.Launch(path)
	if err != nil {
		return nil, nil, &SetupError{err}
	}
	stop := b.Close
	if url == "" {
		dir, err := browserclient.Find(tmp)
		if err != nil {
			b.Close()
			return nil, nil, &SetupError{err}
		}
		u, stopServer, err := browserclient.Serve(dir)
		if err != nil {
			b.Close()
			return nil, nil, &SetupError{err}
		}
		url, stop = u, func() { b.Close(); stopServer() }
	}
	return &clientchecks.Page{URL: url, Browser: b}, stop, nil
}
