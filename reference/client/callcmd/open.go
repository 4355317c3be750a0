//go:build !js

package callcmd

import "github.com/mcp-conform/mcp-conform/reference/client/storage"

// store is the client's storage as the command opens it.
type store interface {
	storage.Storage
	Close() error
}

// open opens the state directory dir.
func open(dir string) (store, error) { return storage.Open(dir) }
