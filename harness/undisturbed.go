package harness

import (
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/suites"
	"github.com/mcp-conform/mcp-conform/suites/serverchecks"
)

// observeUndisturbed makes one call of the profile's notifying tool that
// no fault disturbs, before the checks, when a selected check calls the
// tool, and gives what it showed to the checks (tc.Baseline). It says
// what the call showed; when the tool did not do what the profile
// declares, it says so once, as what it is.
func (o *Options) observeUndisturbed(ctx context.Context, tc *serverchecks.Target, stdout io.Writer) {
	selected := o.selector()
	if !slices.ContainsFunc(suites.Of(catalogue.Server), func(e catalogue.Entry) bool {
		return selected(e) && slices.Contains(e.Needs, catalogue.KeyNotifying)
	}) {
		return
	}
	b := serverchecks.ObserveBaseline(ctx, tc)
	if b == nil {
		return
	}
	tc.Baseline = b
	if b.Shortfall() == "" {
		fmt.Fprintf(stdout, "baseline: %s\n", b)
		return
	}
	fmt.Fprintf(stdout, "note: %s; the checks that count its notifications judge them against this call, not the declaration (TOOL-AS-DECLARED grades it)\n", b)
}
