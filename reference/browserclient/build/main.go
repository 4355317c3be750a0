// Command build builds the reference browser client into a directory
// (browserclient.Build): `go run ./reference/browserclient/build DIR`.
package main

import (
	"fmt"
	"os"

	"github.com/mcp-conform/mcp-conform/reference/browserclient"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: build DIR")
		os.Exit(2)
	}
	if err := browserclient.Build(os.Args[1], browserclient.Program); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
