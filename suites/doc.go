// Package suites holds the conformance checks, one per behaviour ID of the
// catalogue: kit (what every check is built from), serverchecks (a server
// under test) and clientchecks (a client under test). The checks live in
// ordinary (non-test) files so that they link into the mcp-conform binary,
// in the manner of Kubernetes' e2e.test and cri-tools' critest; the harness
// asks each side for its checks and runs them, several at a time.
//
// Beside each section's checks are the broken implementations that prove
// they can fail (<section>_fixtures.go), built on the kits of
// fixtures/servers and fixtures/clients and registered there at init, so
// a check's entry, body and fixture are in one folder.
//
// Checks speak raw HTTP through internal/wire where headers and timing
// matter, and reach the target through an embedded Toxiproxy (package
// toxics) so they can cut, freeze or reset its connections.
package suites
