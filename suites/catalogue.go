package suites

import (
	"fmt"
	"slices"
	"sort"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/suites/clientchecks"
	"github.com/mcp-conform/mcp-conform/suites/serverchecks"
)

// The catalogue is the checks' own entries: each check declares its entry
// beside its body (serverchecks, clientchecks). Server checks come first,
// then client checks, each side in the order its package lists them.
var (
	all  = slices.Concat(serverchecks.Entries(), clientchecks.Entries())
	byID = func() map[string]catalogue.Entry {
		m := make(map[string]catalogue.Entry, len(all))
		for _, e := range all {
			if _, dup := m[e.ID]; dup {
				panic("catalogue: duplicate ID " + e.ID)
			}
			m[e.ID] = e
		}
		return m
	}()
)

// All returns the catalogue in catalogue order.
func All() []catalogue.Entry { return slices.Clone(all) }

// Lookup finds an entry by ID.
func Lookup(id string) (catalogue.Entry, bool) {
	e, ok := byID[id]
	return e, ok
}

// MustLookup is Lookup for IDs fixed in code; an unknown ID is a
// programming error.
func MustLookup(id string) catalogue.Entry {
	e, ok := byID[id]
	if !ok {
		panic(fmt.Sprintf("catalogue: unknown behaviour ID %q", id))
	}
	return e
}

// Of returns the entries of one side, in catalogue order.
func Of(side catalogue.Side) []catalogue.Entry {
	var out []catalogue.Entry
	for _, e := range all {
		if e.Side == side {
			out = append(out, e)
		}
	}
	return out
}

// IDs returns every ID of the given side, sorted.
func IDs(side catalogue.Side) []string {
	var out []string
	for _, e := range Of(side) {
		out = append(out, e.ID)
	}
	sort.Strings(out)
	return out
}
