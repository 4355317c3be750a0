package suites

import (
	. "github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
)

// OnCheck, when set, is called as each check finishes (for progress lines).
var OnCheck func(types.SpecReport)

var _ = ReportBeforeSuite(func(r Report) {
	TestContext.Total = r.PreRunStats.SpecsThatWillRun
})

var _ = ReportAfterEach(func(s SpecReport) {
	if OnCheck != nil {
		OnCheck(s)
	}
})

var _ = ReportAfterSuite("mcp-conform results", func(r Report) {
	reportMu.Lock()
	defer reportMu.Unlock()
	lastReport = &r
})
