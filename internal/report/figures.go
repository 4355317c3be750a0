package report

import (
	_ "embed"
	"html/template"
	"io"
	"math"
	"os"
)

//go:embed figures.tmpl
var figuresTemplate string

//go:embed style.tmpl
var styleTemplate string

var figuresPage = template.Must(template.Must(template.New("figures").Parse(figuresTemplate)).Parse(styleTemplate))

// FigurePage is a one-page report of measurements (a refresh storm): what
// was run, tables of figures, and bar charts of how counts split.
type FigurePage struct {
	Title    string
	Passed   bool
	Meta     [][2]string // name, value
	Failures []string
	Tables   []FigureTable
	Charts   []BarChart
	Examples []string
}

// FigureTable is a table of figures under a heading.
type FigureTable struct {
	Name string
	Head []string
	Rows [][]string
}

// BarChart is counts by label, drawn as horizontal bars.
type BarChart struct {
	Name string
	Bars []Bar
}

// Bar is one count; a Fail bar (lost, duplicated) is drawn red.
type Bar struct {
	Label string
	N     int
	Fail  bool
}

// The bar charts' geometry, in SVG pixels.
const (
	barLabelW = 180
	barPlotW  = 480
	barH      = 20
)

type chartView struct {
	Name          string
	Width, Height int
	Bars          []barView
}

type barView struct {
	Bar
	Y, W float64
}

// WriteFigures writes p as one self-contained HTML page (inline styles
// and SVG, nothing fetched).
func WriteFigures(w io.Writer, p FigurePage) error {
	v := struct {
		FigurePage
		Views []chartView
	}{FigurePage: p}
	for _, c := range p.Charts {
		top := 1
		for _, b := range c.Bars {
			top = max(top, b.N)
		}
		cv := chartView{Name: c.Name, Width: barLabelW + barPlotW + 80, Height: len(c.Bars)*barH + 4}
		for i, b := range c.Bars {
			cv.Bars = append(cv.Bars, barView{Bar: b, Y: float64(i * barH),
				W: math.Round(float64(b.N)/float64(top)*barPlotW*10) / 10})
		}
		v.Views = append(v.Views, cv)
	}
	return figuresPage.Execute(w, v)
}

// WriteFile creates path and fills it with write.
func WriteFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
