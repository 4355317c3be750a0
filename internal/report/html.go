package report

import (
	_ "embed"
	"html/template"
	"io"
	"strings"
)

//go:embed html.tmpl
var htmlTemplate string

var htmlPage = template.Must(template.Must(template.New("report").Funcs(template.FuncMap{
	"mark":      Mark,
	"firstLine": firstLine,
	"join":      strings.Join,
}).Parse(htmlTemplate)).Parse(styleTemplate))

// htmlView is what the HTML template renders.
type htmlView struct {
	*Run
	Counts   []countView
	Sections []sectionView
	// Roots are the findings, root causes first, each with the checks it
	// blocked; shown before the sections.
	Roots []rootView
	// NotSelected counts the checks the filters left out.
	NotSelected int
}

type rootView struct {
	Check
	Blocked []string
}

type countView struct {
	Verdict Verdict
	N       int
}

type sectionView struct {
	Name   string
	Checks []checkView
}

type checkView struct {
	Check
	Timeline *timelineView
}

// WriteHTML writes the run as one self-contained HTML page: a summary
// with a table of checks by section, and every check's timeline drawn
// from its events (inline SVG, no external resources).
func WriteHTML(w io.Writer, r *Run) error {
	v := htmlView{Run: r}
	counts := map[Verdict]int{}
	index := map[string]int{}
	blocked := map[string][]string{}
	for _, c := range r.Checks {
		for _, root := range c.BlockedBy {
			blocked[root] = append(blocked[root], c.Name())
		}
	}
	for _, c := range RootsFirst(r.Checks) {
		if c.Verdict.Defect() || c.Verdict == Stale {
			v.Roots = append(v.Roots, rootView{Check: c, Blocked: blocked[c.Name()]})
		}
	}
	for _, c := range r.Checks {
		if c.Unselected() {
			v.NotSelected++
			continue
		}
		counts[c.Verdict]++
		i, ok := index[c.Section]
		if !ok {
			i = len(v.Sections)
			index[c.Section] = i
			v.Sections = append(v.Sections, sectionView{Name: c.Section})
		}
		v.Sections[i].Checks = append(v.Sections[i].Checks, checkView{Check: c, Timeline: layout(c.Timeline, c.Seconds)})
	}
	for _, verdict := range Verdicts {
		if n := counts[verdict]; n > 0 {
			v.Counts = append(v.Counts, countView{verdict, n})
		}
	}
	return htmlPage.Execute(w, v)
}
