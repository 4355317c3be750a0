//go:build !js

package callcmd

import "github.com/mcp-conform/mcp-conform/reference/client/storage"

// open opens the state directory dir.
func open(dir string) (store, error) { return storage.Open(dir) }
