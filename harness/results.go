package harness

import (
	"sort"
	"strings"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/internal/wire"
	"github.com/mcp-conform/mcp-conform/suites"
)

// unknownIDs lists the IDs that name no check of the side, sorted; an
// entry ID@revision names its ID's check, at a revision shaped like one.
func unknownIDs(side catalogue.Side, ids map[string]bool) []string {
	var out []string
	for key := range ids {
		id, rev, at := strings.Cut(key, "@")
		if e, ok := suites.Lookup(id); !ok || e.Side != side || (at && !wire.Revision(rev).Valid()) {
			out = append(out, key)
		}
	}
	sort.Strings(out)
	return out
}
