package report

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// MarkdownLimit bounds a Markdown report: half of GitHub's 1 MiB limit on
// a step's job summary, so the reports of two runs fit in one step.
const MarkdownLimit = 512 << 10

// maxMessage is how many characters of a check's first line a Markdown
// report keeps; the JSON and HTML reports have the whole message.
const maxMessage = 300

var emoji = map[Verdict]string{
	Pass: "✅", Fail: "❌", Warn: "⚠️", Info: "ℹ️", Skip: "⏭️",
	ExpectedFailure: "☑️", Stale: "❌", Inconclusive: "❔", Blocked: "⛔",
}

// WriteMarkdown writes the run as Markdown for a GitHub job summary or a
// pull-request comment: a line of totals, the failures (root causes, each
// with the checks it blocked beneath it), warnings and inconclusive
// checks, each with its level, the first line of its message and a link to
// its reference; then the expected failures, the passes and the skips,
// collapsed. docsBase is prepended to the project's own references
// (docs/resilience.md#…); empty leaves them relative. The report stays
// under MarkdownLimit: what does not fit is counted, not listed.
func WriteMarkdown(w io.Writer, r *Run, docsBase string) error {
	m := &mdWriter{limit: MarkdownLimit, docsBase: docsBase}
	m.header(r)
	blocked, orphans := blockedUnder(r)
	var fails, warns, inconc, xfails, passes, skips []Check
	unselected := 0
	for _, c := range RootsFirst(r.Checks) {
		switch c.Verdict {
		case Fail, Stale:
			fails = append(fails, c)
		case Warn, Info:
			warns = append(warns, c)
		case Inconclusive:
			inconc = append(inconc, c)
		case ExpectedFailure:
			xfails = append(xfails, c)
		case Pass:
			passes = append(passes, c)
		case Skip:
			if c.Cause == NotSelected {
				unselected++
				continue
			}
			skips = append(skips, c)
		}
	}
	m.section("Failures", fails, blocked)
	m.section("Warnings", warns, blocked)
	m.section("Blocked", orphans, nil)
	m.section("Inconclusive", inconc, nil)
	if len(xfails) > 0 {
		m.collapsed(fmt.Sprintf("Expected failures (%d), from --expected-failures", len(xfails)), xfails, blocked)
	}
	if len(passes)+len(skips) > 0 {
		var title []string
		if len(passes) > 0 {
			title = append(title, fmt.Sprintf("Passed (%d)", len(passes)))
		}
		if len(skips) > 0 {
			title = append(title, fmt.Sprintf("skipped (%d)", len(skips)))
		}
		m.collapsed(strings.Join(title, " and "), append(passes, skips...), nil)
	}
	if unselected > 0 {
		m.line(fmt.Sprintf("\n%d checks not selected (--checks, --label-filter, --focus or --scenario).\n", unselected))
	}
	if m.dropped > 0 {
		fmt.Fprintf(&m.b, "\n%d checks are not listed here, to keep this summary under %d KiB: the JSON and HTML reports list every check.\n", m.dropped, MarkdownLimit>>10)
	}
	_, err := io.WriteString(w, m.b.String())
	return err
}

// blockedUnder files every blocked check under the first of its root
// causes that the report lists as a finding; the rest are orphans.
func blockedUnder(r *Run) (map[string][]Check, []Check) {
	listed := map[string]bool{}
	for _, c := range r.Checks {
		if c.Verdict.Defect() || c.Verdict == Stale {
			listed[c.Name()] = true
		}
	}
	under := map[string][]Check{}
	var orphans []Check
	for _, c := range r.Checks {
		if c.Verdict != Blocked {
			continue
		}
		filed := false
		for _, root := range c.BlockedBy {
			if listed[root] {
				under[root] = append(under[root], c)
				filed = true
				break
			}
		}
		if !filed {
			orphans = append(orphans, c)
		}
	}
	return under, orphans
}

// mdWriter accumulates the report; once a line does not fit under the
// limit, it and every line after it are dropped, and their items counted.
type mdWriter struct {
	b        strings.Builder
	limit    int
	docsBase string
	full     bool
	dropped  int
}

// reserve is room kept for the closing tags and the dropped-items note.
const reserve = 1 << 10

func (m *mdWriter) header(r *Run) {
	result := r.Result()
	mark := map[string]string{"PASSED": "✅", "FAILED": "❌", "NOTHING GRADED": "⚠️"}[result]
	fmt.Fprintf(&m.b, "### %s mcp-conform %s: %s\n\n", mark, r.Mode, result)
	if result == "NOTHING GRADED" {
		fmt.Fprintf(&m.b, "No check judged the target: %s\n\n", escapeMD(truncate(r.NothingGradedWhy(), maxMessage)))
	}
	counts, unselected := verdictCounts(r)
	defects := fmt.Sprintf("%d distinct defects", r.Defects)
	if r.Defects == 1 {
		defects = "1 distinct defect"
	}
	fmt.Fprintf(&m.b, "**%d checks run: %s; %s** (%.1f s)\n\n", len(r.Checks)-unselected, orNothing(strings.Join(counts, ", ")), defects, r.Seconds)
	strict := ""
	if r.Strict {
		strict = ", strict"
	}
	fmt.Fprintf(&m.b, "Target %s, check set %s, protocol %s%s.\n", codeSpan(truncate(r.Target, maxMessage)), escapeMD(r.CheckSet), escapeMD(r.ProtocolVersion), strict)
}

func orNothing(s string) string {
	if s == "" {
		return "nothing"
	}
	return s
}

func (m *mdWriter) section(title string, cs []Check, blocked map[string][]Check) {
	if len(cs) == 0 {
		return
	}
	m.line(fmt.Sprintf("\n#### %s (%d)\n\n", title, len(cs)))
	m.items(cs, blocked)
}

// collapsed lists cs in a <details> element, closed when its opening fit.
func (m *mdWriter) collapsed(summary string, cs []Check, blocked map[string][]Check) {
	opened := m.line(fmt.Sprintf("\n<details><summary>%s</summary>\n\n", summary))
	m.items(cs, blocked)
	if opened {
		m.b.WriteString("\n</details>\n")
	}
}

// items lists cs, each followed by the checks it blocked, indented.
func (m *mdWriter) items(cs []Check, blocked map[string][]Check) {
	for _, c := range cs {
		m.line("- " + m.item(c) + "\n")
		for _, b := range blocked[c.Name()] {
			m.line("  - " + m.item(b) + "\n")
		}
	}
}

// line appends s and reports whether it fit.
func (m *mdWriter) line(s string) bool {
	if m.full || m.b.Len()+len(s)+reserve > m.limit {
		m.full = true
		if strings.HasPrefix(strings.TrimSpace(s), "- ") {
			m.dropped++
		}
		return false
	}
	m.b.WriteString(s)
	return true
}

// item is one check: its mark, ID, level, verdict where the section does
// not say it, the first line of its message (or its summary when it
// passed) and its reference.
func (m *mdWriter) item(c Check) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s **%s** (%s", emoji[c.Verdict], c.Name(), escapeMD(c.Level))
	switch c.Verdict {
	case Stale, Info, Blocked:
		fmt.Fprintf(&b, ", %s", c.Verdict)
	}
	b.WriteString(")")
	text := c.Message
	if c.Verdict == Pass || text == "" {
		text = c.Summary
	}
	if text = truncate(firstLine(text), maxMessage); text != "" {
		b.WriteString(": " + escapeMD(text))
	}
	if link := m.link(c.SpecRef); link != "" {
		b.WriteString(" · " + link)
	}
	for _, f := range c.Fixes {
		b.WriteString(" · " + m.linkText("fix if built on the "+f.SDK, f.Ref))
	}
	return b.String()
}

// link is a Markdown link to a check's reference: the specification, or a
// section of the project's own documents, under docsBase.
func (m *mdWriter) link(ref string) string {
	if ref == "" {
		return ""
	}
	text := "spec"
	if !strings.Contains(ref, "://") {
		path, _, _ := strings.Cut(ref, "#")
		text = strings.TrimSuffix(path[strings.LastIndexByte(path, '/')+1:], ".md")
		if path == "docs/resilience.md" {
			text = "resilience profile"
		}
	}
	return m.linkText(text, ref)
}

// linkText is a Markdown link with text to ref, a URL or one of the
// project's documents under docsBase.
func (m *mdWriter) linkText(text, ref string) string {
	if !strings.Contains(ref, "://") && m.docsBase != "" {
		ref = strings.TrimSuffix(m.docsBase, "/") + "/" + ref
	}
	return "[" + escapeMD(text) + "](" + strings.NewReplacer(" ", "%20", "(", "%28", ")", "%29").Replace(ref) + ")"
}

// truncate keeps at most n characters of s, marking a cut with "…".
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	runes := []rune(s)
	return strings.TrimRight(string(runes[:n-1]), " ") + "…"
}

// escapeMD makes text render as itself: the characters Markdown or HTML
// would read are backslash-escaped, and tabs become spaces.
func escapeMD(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '\\', '`', '*', '_', '[', ']', '<', '>', '|', '~', '&', '#', '!':
			b.WriteByte('\\')
		case '\t', '\r', '\n':
			r = ' '
		}
		b.WriteRune(r)
	}
	return b.String()
}

// codeSpan renders s as inline code, fenced with more backticks than it
// holds in a row.
func codeSpan(s string) string {
	s = strings.NewReplacer("\n", " ", "\r", " ").Replace(s)
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") || fence != "`" {
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}
