package suites

import (
	. "github.com/onsi/ginkgo/v2"
)

// One top-level container keeps the checks in a fixed order, file by file
// (Ginkgo shuffles top-level containers, never the specs inside one); the
// reports list them in catalogue order.
var _ = Describe("server", func() {
	sessionChecks()
	streamChecks()
	graceChecks()
	recreateChecks()
	streamResilienceChecks()
	replayChecks()
	envelopeChecks()
	restartChecks()
})
