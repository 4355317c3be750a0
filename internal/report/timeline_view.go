package report

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// The timeline's geometry, in SVG pixels.
const (
	svgLabelW = 230 // the lane labels on the left
	svgPlotW  = 760 // time runs over this width
	svgLaneH  = 20
	svgTop    = 26 // room for the time axis and fault labels
)

// palette colours the groups (requests) of one check, in order of first
// appearance; messages of no request are grey.
var palette = []string{"#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22"}

const noGroup = "#888"

// timelineView is one check's timeline laid out for the HTML report.
type timelineView struct {
	Width, Height int
	Ticks         []tickView
	Lanes         []laneView
	Faults        []markView // vertical lines across every lane
	Silences      []spanView // shaded windows across every lane
	PlotX, PlotR  float64
}

type tickView struct {
	X     float64
	Label string
}

type laneView struct {
	Name, Label string
	Y           float64
	From, To    float64 // the span of the lane's events
	Marks       []markView
}

type markView struct {
	X     float64
	Kind  Kind
	Color string
	// Short is drawn beside the mark (a status code); Text is the raw lines.
	Short, Text string
	// ID is an SSE event's id, drawn beside it where it stays readable;
	// Retry marks an SSE event with data that also has a retry field.
	ID, Retry string
	id        string // the whole id, before the room is known
}

type spanView struct {
	X, W float64
	Text string
}

// checkLane is the lane of events that belong to no exchange.
const checkLane = "check"

var (
	methodRE = regexp.MustCompile(`"method":"([^"]+)"`)
	statusRE = regexp.MustCompile(`← (\d{3})`)
	idRE     = regexp.MustCompile(`(?m)\| id: ?(.+)$`)
	retryRE  = regexp.MustCompile(`(?m)\| retry: ?(.+)$`)
)

// The SSE id labels: small text right of the mark.
const (
	idCharW = 5.0 // pixels per character at font-size 8
	idChars = 10  // longer ids show their end, which tells them apart
	markR   = 5.0 // half a mark's width
)

// layout lays out a timeline over a check that took seconds.
func layout(evs []Event, seconds float64) *timelineView {
	if len(evs) == 0 {
		return nil
	}
	total := seconds
	for _, e := range evs {
		total = max(total, e.At+e.Seconds)
	}
	total = max(total, 0.001)
	x := func(t float64) float64 { return math.Round((svgLabelW+t/total*svgPlotW)*10) / 10 }
	v := &timelineView{PlotX: svgLabelW, PlotR: svgLabelW + svgPlotW}
	colors := map[string]string{}
	color := func(g string) string {
		if g == "" {
			return noGroup
		}
		if c, ok := colors[g]; ok {
			return c
		}
		c := palette[len(colors)%len(palette)]
		colors[g] = c
		return c
	}
	index := map[string]int{}
	lane := func(name string) *laneView {
		i, ok := index[name]
		if !ok {
			i = len(v.Lanes)
			index[name] = i
			v.Lanes = append(v.Lanes, laneView{Name: name, Label: name, Y: float64(svgTop + i*svgLaneH)})
		}
		return &v.Lanes[i]
	}
	lane(checkLane).Label = "check: notes, silences, faults"
	for _, e := range evs {
		switch e.Kind {
		case KindFault:
			name, _, _ := strings.Cut(strings.TrimPrefix(e.Text, "!! "), ":")
			v.Faults = append(v.Faults, markView{X: x(e.At), Kind: e.Kind, Text: fmtAt(e), Short: Clip(name, 24)})
			continue
		case KindSilence:
			v.Silences = append(v.Silences, spanView{X: x(e.At), W: x(e.At+e.Seconds) - x(e.At), Text: fmtAt(e)})
			continue
		}
		name := e.Lane
		if name == "" {
			name = checkLane
		}
		l := lane(name)
		if e.Kind == KindRequest || e.Kind == KindRunStart {
			l.Label = laneLabel(e)
		}
		m := markView{X: x(e.At), Kind: e.Kind, Color: color(e.Group), Text: fmtAt(e)}
		switch e.Kind {
		case KindStatus:
			if s := statusRE.FindStringSubmatch(e.Text); s != nil {
				m.Short = s[1]
			}
		case KindSSE, KindRetry:
			if s := idRE.FindStringSubmatch(e.Text); s != nil {
				m.id = strings.TrimSpace(s[1])
			}
			if s := retryRE.FindStringSubmatch(e.Text); s != nil && e.Kind == KindSSE {
				m.Retry = strings.TrimSpace(s[1])
			}
		}
		if len(l.Marks) == 0 || m.X < l.From {
			l.From = m.X
		}
		l.To = max(l.To, m.X)
		l.Marks = append(l.Marks, m)
	}
	for i := range v.Lanes {
		labelIDs(v.Lanes[i].Marks)
		// Marks of no request first, so that a coloured mark at the
		// same time is drawn over a grey one.
		slices.SortStableFunc(v.Lanes[i].Marks, func(a, b markView) int {
			return cmpBool(a.Color != noGroup, b.Color != noGroup)
		})
	}
	v.Width = svgLabelW + svgPlotW + 20
	v.Height = svgTop + len(v.Lanes)*svgLaneH + 6
	step := tickStep(total)
	for t := 0.0; t <= total+step/1000; t += step {
		v.Ticks = append(v.Ticks, tickView{X: x(t), Label: strconv.FormatFloat(math.Round(t*1e6)/1e6, 'f', -1, 64) + "s"})
	}
	return v
}

// laneLabel names a lane by its first request: "#4 POST tools/call".
func laneLabel(e Event) string {
	first, _, _ := strings.Cut(e.Text, "\n")
	if e.Kind == KindRunStart {
		return Clip(strings.TrimPrefix(first, "== "), 36)
	}
	words := strings.Fields(first)
	label := first
	if len(words) >= 3 {
		label = words[0] + " " + words[2]
		if words[2] == "run" && len(words) >= 5 { // client mode: "#1 → run 1 POST"
			label = words[0] + " " + words[4] + " (run " + words[3] + ")"
		}
	}
	if m := methodRE.FindStringSubmatch(e.Text); m != nil {
		label += " " + m[1]
	}
	if strings.Contains(first, "Last-Event-ID=") {
		label += " (resume)"
	}
	return Clip(label, 36)
}

// labelIDs shows the ids of a lane's SSE events (in time order) where the
// label fits before the next mark and after the previous label.
func labelIDs(marks []markView) {
	free := 0.0 // where the last label ends
	for i := range marks {
		m := &marks[i]
		if m.Short != "" {
			free = max(free, m.X+2+float64(len(m.Short))*idCharW)
		}
		if m.id == "" {
			continue
		}
		label := m.id
		if r := []rune(label); len(r) > idChars {
			label = "…" + string(r[len(r)-idChars+1:])
		}
		end := m.X + markR + float64(len([]rune(label)))*idCharW
		next := math.Inf(1)
		if i+1 < len(marks) {
			next = marks[i+1].X - markR
		}
		if m.X+markR >= free && end <= next {
			m.ID, free = label, end
		}
	}
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

func fmtAt(e Event) string { return fmt.Sprintf("%.3fs  %s", e.At, e.Text) }

// tickStep is a round step that puts at most ten ticks on the axis.
func tickStep(total float64) float64 {
	for _, s := range []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300} {
		if total/s <= 10 {
			return s
		}
	}
	return 600
}

// Clip shortens s to n bytes, marking the cut.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
