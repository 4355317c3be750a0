package harness

import (
	"sort"
	"strings"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/internal/report"
)

func countNotSelected(cs []report.Check) int {
	n := 0
	for _, c := range cs {
		if c.Verdict == report.Skip && c.Cause == report.NotSelected {
			n++
		}
	}
	return n
}

// unknownIDs lists the IDs that name no check of the side, sorted; an
// entry ID@revision names its ID's check, at a revision shaped like one.
func unknownIDs(side catalogue.Side, ids map[string]bool) []string {
	var out []string
	for key := range ids {
		id, rev, at := strings.Cut(key, "@")
		if e, ok := catalogue.Lookup(id); !ok || e.Side != side || (at && !revisionShape.MatchString(rev)) {
			out = append(out, key)
		}
	}
	sort.Strings(out)
	return out
}
