package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
)

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Timestamp  string          `xml:"timestamp,attr"`
	Properties []junitProperty `xml:"properties>property"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name       string          `xml:"name,attr"`
	Classname  string          `xml:"classname,attr"`
	Time       string          `xml:"time,attr"`
	Properties []junitProperty `xml:"properties>property"`
	Failure    *junitMessage   `xml:"failure,omitempty"`
	Error      *junitMessage   `xml:"error,omitempty"`
	Skipped    *junitMessage   `xml:"skipped,omitempty"`
	SystemOut  string          `xml:"system-out,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Body    string `xml:",chardata"`
}

// WriteJUnit writes the run as JUnit XML: one testcase per check, with its
// ID, level, spec reference and verdict (and revision, in a run of
// several) as properties, root causes first; in a run of several revisions
// a testcase is named ID@revision.
// Only checks that fail the run are <failure>s; an inconclusive check (the
// harness could not observe the behaviour) is an <error>; warnings,
// informational failures, expected failures, blocked checks and skips are
// <skipped> with the reason, so CI test views agree with the exit code.
func WriteJUnit(w io.Writer, r *Run) error {
	s := junitSuite{
		Name:      "mcp-conform " + r.Mode,
		Time:      seconds(r.Seconds),
		Timestamp: r.Started.UTC().Format("2006-01-02T15:04:05"),
		Properties: []junitProperty{
			{"target", r.Target}, {"check_set", r.CheckSet},
			{"protocol_version", r.ProtocolVersion}, {"strict", fmt.Sprint(r.Strict)},
		},
	}
	for _, c := range RootsFirst(r.Checks) {
		tc := junitCase{
			Name:      c.Name() + ": " + c.Summary,
			Classname: "mcp-conform." + r.Mode + "." + c.Section,
			Time:      seconds(c.Seconds),
			Properties: []junitProperty{
				{"id", c.ID}, {"level", c.Level}, {"spec_ref", c.SpecRef}, {"verdict", string(c.Verdict)},
			},
		}
		if c.Revision != "" {
			tc.Properties = append(tc.Properties, junitProperty{"protocol_version", c.Revision})
		}
		for _, f := range c.Fixes {
			tc.Properties = append(tc.Properties, junitProperty{"fix", f.SDK + ": " + f.Ref})
		}
		switch c.Verdict {
		case Fail, Stale:
			s.Failures++
			tc.Failure = &junitMessage{Message: firstLine(c.Message), Type: c.Level, Body: details(c)}
		case Inconclusive:
			s.Errors++
			tc.Error = &junitMessage{Message: "inconclusive: " + firstLine(c.Message), Type: "inconclusive", Body: details(c)}
		case Warn, Info, ExpectedFailure, Blocked, Skip:
			s.Skipped++
			tc.Skipped = &junitMessage{Message: string(c.Verdict) + ": " + firstLine(c.Message)}
			if c.Verdict != Skip {
				tc.SystemOut = details(c)
			}
		}
		s.Cases = append(s.Cases, tc)
	}
	s.Tests = len(s.Cases)
	doc := junitSuites{Name: "mcp-conform", Tests: s.Tests, Failures: s.Failures, Errors: s.Errors, Skipped: s.Skipped, Time: s.Time, Suites: []junitSuite{s}}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

func details(c Check) string {
	var b strings.Builder
	b.WriteString(c.Message)
	if c.Location != "" {
		fmt.Fprintf(&b, "\n(at %s)", c.Location)
	}
	for _, f := range c.Fixes {
		fmt.Fprintf(&b, "\nthe fix if it is built on the %s: %s", f.SDK, f.Ref)
	}
	if c.Exchange != "" {
		b.WriteString("\n\nexchange:\n")
		b.WriteString(c.Exchange)
	}
	return b.String()
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func seconds(f float64) string { return fmt.Sprintf("%.3f", f) }
