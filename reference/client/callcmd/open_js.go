//go:build js

package callcmd

import "github.com/mcp-conform/mcp-conform/reference/client/storage"

// store is the client's storage as the command opens it.
type store interface {
	storage.Storage
	Close() error
}

// open opens the page's localStorage, whatever dir says: a page keeps what
// the client remembers where the seeds' BrowserMcpClient keeps it, under
// the same keys (mcp_session_id, ...).
func open(string) (store, error) { return storage.OpenWeb("") }
