// Package suites holds the conformance checks as Ginkgo specs, one per
// behaviour ID of the catalogue. The specs live in ordinary (non-test) files
// so that they link into the mcp-conform binary, in the manner of
// Kubernetes' e2e.test and cri-tools' critest: the harness fills TestContext,
// then calls ginkgo.RunSpecs once.
//
// Specs speak raw HTTP through internal/wire where headers and timing matter,
// and reach the target through an embedded Toxiproxy (package toxics) so they
// can cut, freeze or reset its connections.
package suites
