//go:build js && wasm

// Command wasm is the reference browser client, run by index.html: the
// reference client compiled to WebAssembly, under the page contract
// (docs/client-mode.md, package contract). Package browserclient builds
// it and serves it with its page.
package main

import "github.com/mcp-conform/mcp-conform/reference/browserclient"

func main() { browserclient.Main(browserclient.Options{}) }
