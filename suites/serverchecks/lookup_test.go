package serverchecks

import "github.com/mcp-conform/mcp-conform/catalogue"

// mustLookup is lookup for IDs fixed in the tests.
func mustLookup(id string) catalogue.Entry {
	e, ok := lookup(id)
	if !ok {
		panic("serverchecks: no check " + id)
	}
	return e
}
