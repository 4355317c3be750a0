package browserclient

import (
	"net/http"

	"github.com/mcp-conform/mcp-conform/contract"
)

// Options change what Main does; the zero value is the reference browser
// client. The checks' broken pages are made with them.
type Options struct {
	// Transport wraps the fetch transport.
	Transport func(http.RoundTripper) http.RoundTripper
	// Around runs the client (call) for run r.
	Around func(r contract.Run, call func() error) error
	// SharedTabs takes the tab lock away: a second tab of the page uses
	// the stored session as the first does (see Main).
	SharedTabs bool
}
