package harness

import (
	"sort"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/internal/report"
)

func countNotSelected(cs []report.Check) int {
	n := 0
	for _, c := range cs {
		if c.Verdict == report.Skip && c.Message == report.NotSelected() {
			n++
		}
	}
	return n
}

// unknownIDs lists the IDs that name no check of the side, sorted.
func unknownIDs(side catalogue.Side, ids map[string]bool) []string {
	var out []string
	for id := range ids {
		if e, ok := catalogue.Lookup(id); !ok || e.Side != side {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}
