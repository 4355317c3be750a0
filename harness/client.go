package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/formatter"
	"github.com/onsi/ginkgo/v2/types"
	"github.com/onsi/gomega"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/internal/report"
	"github.com/mcp-conform/mcp-conform/suites"
)

// ClientOptions are the settings of a client-mode run.
type ClientOptions struct {
	// Command starts the client under test (run by /bin/sh -c with the
	// scripted server's URL appended).
	Command string
	// Scenarios are the client check IDs to run; empty runs them all.
	Scenarios []string
	// JUnit and JSON are report paths; empty for none.
	JUnit, JSON string
	// ExpectedFailures are check IDs allowed to fail (a baseline).
	ExpectedFailures map[string]bool
	// Verbose prints Ginkgo's own output.
	Verbose bool
	// Timeout bounds the whole run.
	Timeout time.Duration
}

// clientProtocolVersion is the revision the scripted server is expected
// to negotiate with a client (the newest with sessions).
const clientProtocolVersion = "2025-11-25"

// RunClient runs the client checks once against the client that
// o.Command starts, each check with a scripted, fault-injecting reference
// server of its own, and returns the result. Like Run, it can happen once
// per process.
func RunClient(ctx context.Context, o ClientOptions, stdout, stderr io.Writer) (*report.Run, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	root, err := os.MkdirTemp("", "mcp-conform-client-")
	if err != nil {
		return nil, &SetupError{fmt.Errorf("state directories: %w", err)}
	}
	defer os.RemoveAll(root)
	suites.ClientTestContext = suites.ClientContext{Command: o.Command, StateRoot: root}
	suites.RegisterClientChecks()
	fmt.Fprintf(stdout, "mcp-conform client: checking %s\n", o.Command)

	started := time.Now()
	rep, err := runClientSpecs(o, stdout, stderr)
	if err != nil {
		return nil, err
	}
	run := &report.Run{
		Tool: "mcp-conform", Mode: "client", Target: o.Command, Profile: string(catalogue.ProfileResilience),
		ProtocolVersion: clientProtocolVersion, Started: started,
		Seconds: time.Since(started).Seconds(),
		Checks:  clientChecks(rep, o.ExpectedFailures),
	}
	run.Finish()
	report.WriteSummary(stdout, run, true)
	if err := writeReports(Options{JUnit: o.JUnit, JSON: o.JSON}, run); err != nil {
		return run, err
	}
	return run, nil
}

func runClientSpecs(o ClientOptions, stdout, stderr io.Writer) (*types.Report, error) {
	gomega.RegisterFailHandler(ginkgo.Fail)
	sc, rc := ginkgo.GinkgoConfiguration()
	sc.LabelFilter = string(catalogue.Client)
	if len(o.Scenarios) > 0 {
		quoted := make([]string, len(o.Scenarios))
		for i, id := range o.Scenarios {
			quoted[i] = regexp.QuoteMeta(id)
		}
		// A spec's text starts with its containers' ("client sessions CLI-PERSIST: ...").
		sc.FocusStrings = []string{"(^| )(" + strings.Join(quoted, "|") + "): "}
	}
	sc.Timeout = o.Timeout
	sc.RandomSeed = 1
	rc.NoColor = true
	formatter.ColorableStdOut = io.Discard
	if o.Verbose {
		formatter.ColorableStdOut = stderr
		rc.Verbose = true
	}
	n := 0
	suites.OnCheck = func(s types.SpecReport) {
		c := check(s, false, o.ExpectedFailures)
		if c.Verdict == report.Skip && c.Message == report.NotSelected() {
			return
		}
		if e, ok := catalogue.Lookup(c.ID); !ok || e.Side != catalogue.Client {
			return
		}
		n++
		fmt.Fprintln(stdout, report.ProgressLine(n, suites.TestContext.Total, c))
	}
	ginkgo.RunSpecs(&ginkgoT{}, "mcp-conform client", sc, rc)
	rep := suites.LastReport()
	if rep == nil {
		return nil, errors.New("the suite produced no report")
	}
	return rep, nil
}

// clientChecks turns the report into client checks in catalogue order.
func clientChecks(rep *types.Report, expected map[string]bool) []report.Check {
	var out []report.Check
	for _, c := range checks(rep, false, expected) {
		if e, ok := catalogue.Lookup(c.ID); ok && e.Side == catalogue.Client {
			out = append(out, c)
		}
	}
	return out
}

func (o *ClientOptions) validate() error {
	if strings.TrimSpace(o.Command) == "" {
		return setupErr("--command is empty")
	}
	var unknown []string
	for _, id := range o.Scenarios {
		if e, ok := catalogue.Lookup(id); !ok || e.Side != catalogue.Client {
			unknown = append(unknown, id)
		}
	}
	if len(unknown) > 0 {
		return setupErr("--scenario: not client checks: %s (see 'mcp-conform list')", strings.Join(unknown, ", "))
	}
	unknown = unknown[:0]
	for id := range o.ExpectedFailures {
		if e, ok := catalogue.Lookup(id); !ok || e.Side != catalogue.Client {
			unknown = append(unknown, id)
		}
	}
	sort.Strings(unknown)
	if len(unknown) > 0 {
		return setupErr("--expected-failures names IDs that are not client checks: %s", strings.Join(unknown, ", "))
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	return checkReportDirs(o.JUnit, o.JSON)
}
