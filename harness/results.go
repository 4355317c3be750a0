package harness

import (
	"sort"
	"strings"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/mcp-conform/mcp-conform/catalogue"
	"github.com/mcp-conform/mcp-conform/internal/report"
	"github.com/mcp-conform/mcp-conform/suites"
)

// checks turns the Ginkgo report into checks in catalogue order.
func checks(rep *types.Report, strict bool, expected map[string]bool) []report.Check {
	var out []report.Check
	for _, s := range rep.SpecReports {
		if s.LeafNodeType != types.NodeTypeIt {
			continue
		}
		out = append(out, check(s, strict, expected))
	}
	order := map[string]int{}
	for i, e := range catalogue.All() {
		order[e.ID] = i
	}
	sort.SliceStable(out, func(i, j int) bool { return order[out[i].ID] < order[out[j].ID] })
	return out
}

// check gives one spec its verdict: its level decides what a failure means.
func check(s types.SpecReport, strict bool, expected map[string]bool) report.Check {
	id, _, _ := strings.Cut(s.LeafNodeText, ":")
	e, _ := catalogue.Lookup(id)
	c := report.Check{
		ID: id, Level: string(e.Level), Section: e.Section, Profile: string(e.Profile()),
		Summary: e.Summary, SpecRef: e.SpecRef, Seconds: s.RunTime.Seconds(),
	}
	switch {
	case s.State == types.SpecStatePassed:
		c.Verdict = report.Pass
		if expected[id] {
			c.Verdict = report.Stale
			c.Message = "listed in --expected-failures but passed: remove it from the baseline"
		}
	case s.State == types.SpecStateSkipped || s.State == types.SpecStatePending:
		c.Verdict = report.Skip
		c.Message = s.Failure.Message
		if c.Message == "" {
			c.Message = report.NotSelected()
		}
	default: // failed, panicked, timed out, interrupted, aborted
		c.Message = s.Failure.Message
		if s.State != types.SpecStateFailed {
			c.Message = s.State.String() + ": " + c.Message
		}
		c.Location = s.Failure.Location.String()
		for _, re := range s.ReportEntries {
			if re.Name == suites.ExchangeEntry {
				c.Exchange = re.StringRepresentation()
			}
		}
		switch {
		case expected[id]:
			c.Verdict = report.ExpectedFailure
		case e.Required(strict):
			c.Verdict = report.Fail
		case e.Level == catalogue.Should:
			c.Verdict = report.Warn
		default:
			c.Verdict = report.Info
		}
	}
	return c
}

func countNotSelected(cs []report.Check) int {
	n := 0
	for _, c := range cs {
		if c.Verdict == report.Skip && c.Message == report.NotSelected() {
			n++
		}
	}
	return n
}

// unknownExpected lists --expected-failures IDs that name no server check.
func unknownExpected(expected map[string]bool) []string {
	var out []string
	for id := range expected {
		if e, ok := catalogue.Lookup(id); !ok || e.Side != catalogue.Server {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}
