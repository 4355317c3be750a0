//go:build js && wasm

// Command wasm is a broken page: the reference browser client with the
// variant its URL names (?broken=NAME) taken away.
package main

import (
	"syscall/js"

	"github.com/mcp-conform/mcp-conform/reference/browserclient"
	"github.com/mcp-conform/mcp-conform/suites/clientchecks/brokenpages"
)

func main() {
	name := js.Global().Get("URLSearchParams").New(js.Global().Get("location").Get("search")).Call("get", brokenpages.Param)
	if name.IsNull() {
		js.Global().Get("console").Call("error", "no ?"+brokenpages.Param+"=NAME in the page's URL")
		return
	}
	p, err := brokenpages.Lookup(name.String())
	if err != nil {
		js.Global().Get("console").Call("error", err.Error())
		return
	}
	browserclient.Main(p.Options)
}
