package inert

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// RunnerLines splits text into lines as the GitHub runner reads a step's
// output (StreamReader.ReadLine: "\n", "\r" and "\r\n" end a line).
func RunnerLines(s string) []string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' })
}

// WorkflowCommand reports whether the runner takes line for a workflow
// command, by its parsers' rules (actions/runner,
// src/Runner.Common/ActionCommand.cs) with every command name taken as
// registered: TryParseV2 trims leading white space and wants "::", then a
// second "::" after the name; TryParse wants "##[" anywhere, then "]".
func WorkflowCommand(line string) bool {
	if v2 := strings.TrimLeftFunc(line, unicode.IsSpace); strings.HasPrefix(v2, "::") && strings.Contains(v2[2:], "::") {
		return true
	}
	i := strings.Index(line, "##[")
	return i >= 0 && strings.Contains(line[i:], "]")
}

// Problems lists what in out could act on a terminal or a CI step log:
// invalid UTF-8, control and invisible format characters (tab and newline
// aside), and lines the runner takes for workflow commands. What Escape
// returns has none; the tests hold the harness's whole output to it.
func Problems(out string) []string {
	var bad []string
	if !utf8.ValidString(out) {
		bad = append(bad, "invalid UTF-8")
	}
	for _, r := range out {
		if (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || (r >= 0x80 && r < 0xa0) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029' {
			bad = append(bad, fmt.Sprintf("control character %U", r))
			if len(bad) > 20 {
				return bad
			}
		}
	}
	for _, line := range RunnerLines(out) {
		if WorkflowCommand(line) {
			bad = append(bad, fmt.Sprintf("workflow command %q", line))
			if len(bad) > 20 {
				return bad
			}
		}
	}
	return bad
}
