//go:build js

package callcmd

import "github.com/mcp-conform/mcp-conform/reference/client/storage"

// WebArea is the page's storage open opens: localStorage, where the
// seeds' BrowserMcpClient keeps what it remembers, under the same keys
// (mcp_session_id, ...); a page sets sessionStorage for a tab that must
// keep a session of its own.
var WebArea = "localStorage"

// open opens the page's WebArea, whatever dir says.
func open(string) (store, error) { return storage.OpenWeb(WebArea, "") }
