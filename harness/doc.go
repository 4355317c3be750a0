// Package harness runs the conformance suites against a target: it checks
// the options, starts the embedded reference server or a --server-cmd
// process when asked, makes sure the URL is an MCP endpoint before running
// anything, runs the Ginkgo specs once, and turns their report into verdicts
// by level (MUST/RES fail the run, SHOULD warns unless --strict, MAY informs).
package harness
