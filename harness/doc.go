// Package harness runs the conformance checks against a target: it checks
// the options, starts the embedded reference server or a --server-cmd
// process when asked, makes sure the URL is an MCP endpoint before running
// anything, and runs the checks of one side through one engine (engine.go)
// for both modes: independent checks several at a time, each bounded by a
// deadline derived from what the target declares, exclusive ones alone;
// each gets its verdict by level (MUST/RES fail the run, SHOULD warns
// unless --strict, MAY informs).
//
// Ginkgo runs specs one after another within a process, so the checks are
// not Ginkgo specs: each runs in its own goroutine with its own Gomega
// (package suites/kit). Ginkgo's label grammar is kept for --label-filter.
package harness
