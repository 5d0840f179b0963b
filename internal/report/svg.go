package report

import (
	"fmt"
	"html/template"
	"math"
	"strconv"
	"strings"
)

// svg builds one chart as inline SVG markup. Every string that reaches
// the markup, text or attribute, goes through esc: node names, metric
// names and details come from results (and so from peers and files) and
// must not end an element or open one. Numbers are the program's own.
type svg struct {
	b strings.Builder
}

func esc(s string) string { return template.HTMLEscapeString(s) }

// num formats a coordinate compactly (two decimals at most).
func num(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "0"
	}
	return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64)
}

// newSVG starts a chart of w x h user units; it scales to the page width.
// class names the chart kind (tests and the stylesheet find it by it),
// label is what a screen reader says.
func newSVG(w, h float64, class, label string) *svg {
	s := &svg{}
	fmt.Fprintf(&s.b, `<svg xmlns="http://www.w3.org/2000/svg" class="chart %s" viewBox="0 0 %s %s" width="%s" role="img" aria-label="%s">`,
		esc(class), num(w), num(h), num(w), esc(label))
	return s
}

func (s *svg) rect(x, y, w, h float64, fill, stroke, title string) {
	fmt.Fprintf(&s.b, `<rect x="%s" y="%s" width="%s" height="%s" fill="%s"`, num(x), num(y), num(max(w, 0)), num(max(h, 0)), esc(fill))
	if stroke != "" {
		fmt.Fprintf(&s.b, ` stroke="%s" stroke-width="2"`, esc(stroke))
	}
	s.closeTitled("rect", title)
}

func (s *svg) closeTitled(el, title string) {
	if title == "" {
		s.b.WriteString("/>")
		return
	}
	fmt.Fprintf(&s.b, `><title>%s</title></%s>`, esc(title), el)
}

func (s *svg) line(x1, y1, x2, y2 float64, stroke string, width float64, dash bool) {
	fmt.Fprintf(&s.b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="%s"`, num(x1), num(y1), num(x2), num(y2), esc(stroke), num(width))
	if dash {
		s.b.WriteString(` stroke-dasharray="4 3"`)
	}
	s.b.WriteString("/>")
}

// text writes a label; anchor is start, middle or end; class picks a size
// and weight from the stylesheet.
func (s *svg) text(x, y float64, anchor, class, text string) {
	fmt.Fprintf(&s.b, `<text x="%s" y="%s" text-anchor="%s" class="%s">%s</text>`, num(x), num(y), esc(anchor), esc(class), esc(text))
}

func (s *svg) polyline(xs, ys []float64, stroke string, dash bool) {
	var pts []string
	for i := range xs {
		pts = append(pts, num(xs[i])+","+num(ys[i]))
	}
	fmt.Fprintf(&s.b, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"`, esc(stroke), strings.Join(pts, " "))
	if dash {
		s.b.WriteString(` stroke-dasharray="5 3"`)
	}
	s.b.WriteString("/>")
}

func (s *svg) circle(x, y, r float64, fill, stroke, title string) {
	fmt.Fprintf(&s.b, `<circle cx="%s" cy="%s" r="%s" fill="%s"`, num(x), num(y), num(r), esc(fill))
	if stroke != "" {
		fmt.Fprintf(&s.b, ` stroke="%s" stroke-width="1.5"`, esc(stroke))
	}
	s.closeTitled("circle", title)
}

// html ends the chart and returns it as markup for the page template: safe
// because every string inside went through esc.
func (s *svg) html() template.HTML {
	s.b.WriteString("</svg>")
	return template.HTML(s.b.String()) // #nosec: built from escaped parts only
}

// axis maps a domain [lo, hi] onto pixels [p0, p1].
type axis struct{ lo, hi, p0, p1 float64 }

func (a axis) at(v float64) float64 {
	if a.hi == a.lo {
		return (a.p0 + a.p1) / 2
	}
	return a.p0 + (v-a.lo)/(a.hi-a.lo)*(a.p1-a.p0)
}

// niceAxis widens [lo, hi] to round ticks, about n of them, and returns
// the ticks. A zero-width domain is widened around its value.
func niceAxis(lo, hi float64, n int) (float64, float64, []float64) {
	if math.IsNaN(lo) || math.IsNaN(hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		lo, hi = 0, 1
	}
	if hi < lo {
		lo, hi = hi, lo
	}
	if hi == lo {
		d := math.Abs(hi) * 0.1
		if d == 0 {
			d = 1
		}
		lo, hi = lo-d, hi+d
	}
	raw := (hi - lo) / float64(max(n, 1))
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	lo = math.Floor(lo/step) * step
	hi = math.Ceil(hi/step) * step
	var ticks []float64
	for v := lo; v <= hi+step/2; v += step {
		ticks = append(ticks, math.Round(v/step)*step)
	}
	return lo, hi, ticks
}

// frame is the plot area of an x-y chart.
type frame struct {
	s    *svg
	x, y axis
}

// Margins of x-y charts: room for the y tick labels, the legend and the
// x tick labels with the axis title.
const (
	marginLeft   = 86
	marginRight  = 16
	marginTop    = 30
	marginBottom = 42
)

// newFrame draws the grid, ticks and axis titles of a w x h chart whose
// domains are [xlo, xhi] and [ylo, yhi] (widened to round ticks).
func newFrame(s *svg, w, h, xlo, xhi, ylo, yhi float64, xfmt, yfmt func(float64) string, xtitle, ytitle string) frame {
	xlo, xhi, xt := niceAxis(xlo, xhi, 8)
	ylo, yhi, yt := niceAxis(ylo, yhi, 5)
	f := frame{s: s, x: axis{xlo, xhi, marginLeft, w - marginRight}, y: axis{ylo, yhi, h - marginBottom, marginTop}}
	for _, v := range yt {
		py := f.y.at(v)
		s.line(marginLeft, py, w-marginRight, py, "#dddddd", 1, false)
		s.text(marginLeft-6, py+4, "end", "tick", yfmt(v))
	}
	for _, v := range xt {
		px := f.x.at(v)
		s.line(px, h-marginBottom, px, h-marginBottom+4, "#888888", 1, false)
		s.text(px, h-marginBottom+16, "middle", "tick", xfmt(v))
	}
	s.line(marginLeft, h-marginBottom, w-marginRight, h-marginBottom, "#888888", 1, false)
	s.line(marginLeft, marginTop, marginLeft, h-marginBottom, "#888888", 1, false)
	s.text((marginLeft+w-marginRight)/2, h-6, "middle", "axis", xtitle)
	s.text(4, marginTop-12, "start", "axis", ytitle)
	return f
}

// series is one line of a line chart.
type series struct {
	Name  string
	Color string
	X, Y  []float64
	Dash  bool
	Marks []string // optional label per point (e.g. "p99")
}

// palette is a colour-blind-safe sequence (Okabe-Ito) for series.
var palette = []string{"#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00", "#000000", "#f0e442"}

// lineChart draws series over a shared x axis, with a legend on top.
func lineChart(class, label string, ss []series, xtitle, ytitle string, xfmt, yfmt func(float64) string) template.HTML {
	const w, h = 720.0, 260.0
	xlo, xhi, ylo, yhi := math.Inf(1), math.Inf(-1), 0.0, math.Inf(-1)
	for _, sr := range ss {
		for i := range sr.X {
			xlo, xhi = math.Min(xlo, sr.X[i]), math.Max(xhi, sr.X[i])
			ylo, yhi = math.Min(ylo, sr.Y[i]), math.Max(yhi, sr.Y[i])
		}
	}
	s := newSVG(w, h, class, label)
	f := newFrame(s, w, h, xlo, xhi, ylo, yhi, xfmt, yfmt, xtitle, ytitle)
	lx := w - marginRight
	for i := len(ss) - 1; i >= 0; i-- {
		sr := ss[i]
		lx -= 14 + 6.5*float64(len(sr.Name))
		s.line(lx, 12, lx+10, 12, sr.Color, 3, sr.Dash)
		s.text(lx+13, 16, "start", "legend", sr.Name)
		lx -= 8
	}
	for _, sr := range ss {
		xs, ys := make([]float64, len(sr.X)), make([]float64, len(sr.Y))
		for i := range sr.X {
			xs[i], ys[i] = f.x.at(sr.X[i]), f.y.at(sr.Y[i])
		}
		s.polyline(xs, ys, sr.Color, sr.Dash)
		for i := range xs {
			title := sr.Name + ": " + yfmt(sr.Y[i]) + " at " + xfmt(sr.X[i])
			if i < len(sr.Marks) && sr.Marks[i] != "" {
				title = sr.Name + " " + sr.Marks[i] + ": " + xfmt(sr.X[i])
				s.text(xs[i]+4, ys[i]-4, "start", "mark", sr.Marks[i])
			}
			s.circle(xs[i], ys[i], 2.5, sr.Color, "", title)
		}
	}
	return s.html()
}

// bar is one bar of a bar chart.
type bar struct {
	Label string
	Value float64
	Text  string // the value as printed beside the bar
	Color string
}

// barChart draws horizontal bars from zero, one per row, labelled on the
// left and with their value on the right.
func barChart(class, label string, bars []bar) template.HTML {
	const w, row, labelW = 720.0, 26.0, 220.0
	h := row*float64(len(bars)) + 12
	top := 0.0
	for _, b := range bars {
		top = math.Max(top, b.Value)
	}
	if top <= 0 {
		top = 1
	}
	s := newSVG(w, h, class, label)
	x := axis{0, top, labelW, w - 130}
	for i, b := range bars {
		y := 6 + row*float64(i)
		s.text(labelW-8, y+16, "end", "tick", b.Label)
		s.rect(labelW, y+3, x.at(math.Max(b.Value, 0))-labelW, row-8, b.Color, "", b.Label+": "+b.Text)
		s.text(x.at(math.Max(b.Value, 0))+6, y+16, "start", "value", b.Text)
	}
	s.line(labelW, 4, labelW, h-4, "#888888", 1, false)
	return s.html()
}
