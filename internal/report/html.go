package report

import (
	"fmt"
	"html/template"
	"io"
	"time"

	"github.com/interlink/interlink/internal/ab"
	"github.com/interlink/interlink/internal/awr"
	"github.com/interlink/interlink/internal/cluster"
	"github.com/interlink/interlink/internal/demo"
	"github.com/interlink/interlink/internal/gc"
	"github.com/interlink/interlink/internal/mesh"
	"github.com/interlink/interlink/internal/pmtu"
	"github.com/interlink/interlink/internal/rules"
	"github.com/interlink/interlink/internal/traffic"
)

// Page is one HTML report: a title, when it was written, and the results
// it shows, each a section (a lab demo is several).
type Page struct {
	Title     string
	Generated time.Time
	// Sources names where the results came from (files, commands), shown
	// under the title.
	Sources []string
	// Results are the typed results to render, in order: *mesh.Result,
	// *pmtu.Report, *traffic.Report, *ab.Result, *rules.Result,
	// *demo.Result, *cluster.Result, *awr.Result, *awr.Diff, *gc.Report.
	Results []any
}

// section is the rendered form of a result: a title, a status badge and
// blocks in order. Every string in it is result text that html/template
// escapes; only Chart holds markup, built by svg from escaped parts.
type section struct {
	ID     string
	Kind   string // mesh, pmtu, bench, ab, check, demo, cluster, awr, gc
	Title  string
	Status string // ok, warning, critical, unknown or "" (no verdict)
	Badge  string
	Blocks []block
}

// block is one piece of a section; exactly one field is set.
type block struct {
	Heading string
	Para    string
	Note    string
	List    []string
	Chart   *chart
	Table   *table
	Finding *rules.Finding
}

type chart struct {
	Caption string
	SVG     template.HTML
}

type table struct {
	Class string
	Head  []string
	Rows  [][]cell
}

type cell struct {
	Text  string
	Class string
}

func (s *section) heading(t string) { s.Blocks = append(s.Blocks, block{Heading: t}) }
func (s *section) para(f string, a ...any) {
	s.Blocks = append(s.Blocks, block{Para: fmt.Sprintf(f, a...)})
}
func (s *section) note(f string, a ...any) {
	s.Blocks = append(s.Blocks, block{Note: fmt.Sprintf(f, a...)})
}
func (s *section) list(items []string) {
	if len(items) > 0 {
		s.Blocks = append(s.Blocks, block{List: items})
	}
}
func (s *section) chart(caption string, svg template.HTML) {
	s.Blocks = append(s.Blocks, block{Chart: &chart{Caption: caption, SVG: svg}})
}
func (s *section) table(t *table) { s.Blocks = append(s.Blocks, block{Table: t}) }

// row builds a table row of plain cells.
func row(texts ...string) []cell {
	r := make([]cell, len(texts))
	for i, t := range texts {
		r[i] = cell{Text: t}
	}
	return r
}

// HTML writes p as one self-contained HTML document: the stylesheet is
// inline, the charts are inline SVG, and a Content-Security-Policy forbids
// every fetch, so the file shows the same offline, mailed or archived.
func HTML(w io.Writer, p Page) error {
	var secs []section
	for _, r := range p.Results {
		ss, err := sections(r)
		if err != nil {
			return err
		}
		secs = append(secs, ss...)
	}
	for i := range secs {
		secs[i].ID = fmt.Sprintf("s%d-%s", i+1, secs[i].Kind)
	}
	gen := ""
	if !p.Generated.IsZero() {
		gen = p.Generated.Format(time.RFC3339)
	}
	return pageTmpl.Execute(w, struct {
		Title, Generated string
		Sources          []string
		Sections         []section
	}{p.Title, gen, p.Sources, secs})
}

// sections renders one typed result.
func sections(r any) ([]section, error) {
	switch v := r.(type) {
	case *mesh.Result:
		return []section{meshSection(v, "")}, nil
	case *pmtu.Report:
		return []section{pmtuSection(v)}, nil
	case *traffic.Report:
		return []section{benchSection(v)}, nil
	case *ab.Result:
		return []section{abSection(v)}, nil
	case *rules.Result:
		return []section{checkSection(v, "")}, nil
	case *demo.Result:
		return demoSections(v), nil
	case *cluster.Result:
		return clusterSections(v), nil
	case *awr.Result:
		return awrSections(v), nil
	case *awr.Diff:
		return []section{awrDiffSection(v)}, nil
	case *gc.Report:
		return []section{gcSection(v)}, nil
	default:
		return nil, fmt.Errorf("report: cannot render a %T", r)
	}
}

var pageTmpl = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="interlink">
<title>{{.Title}}</title>
<style>` + css + `</style>
</head>
<body>
<header>
<h1>{{.Title}}</h1>
<p class="meta">{{if .Generated}}written {{.Generated}}{{end}}{{range .Sources}} &middot; {{.}}{{end}}</p>
<nav><ol>{{range .Sections}}<li><a href="#{{.ID}}">{{.Title}}</a>{{if .Badge}} <span class="badge {{.Status}}">{{.Badge}}</span>{{end}}</li>{{end}}</ol></nav>
</header>
<main>
{{range .Sections}}<section id="{{.ID}}" class="result {{.Kind}}">
<h2>{{.Title}}{{if .Badge}} <span class="badge {{.Status}}">{{.Badge}}</span>{{end}}</h2>
{{range .Blocks}}{{if .Heading}}<h3>{{.Heading}}</h3>
{{else if .Para}}<p>{{.Para}}</p>
{{else if .Note}}<p class="note">{{.Note}}</p>
{{else if .List}}<ul>{{range .List}}<li>{{.}}</li>{{end}}</ul>
{{else if .Chart}}<figure>{{.Chart.SVG}}<figcaption>{{.Chart.Caption}}</figcaption></figure>
{{else if .Table}}<table class="{{.Table.Class}}"><thead><tr>{{range .Table.Head}}<th>{{.}}</th>{{end}}</tr></thead>
<tbody>{{range .Table.Rows}}<tr>{{range .}}<td{{if .Class}} class="{{.Class}}"{{end}}>{{.Text}}</td>{{end}}</tr>
{{end}}</tbody></table>
{{else if .Finding}}{{with .Finding}}<div class="finding {{.Severity}}"><p><span class="badge {{.Severity}}">{{.Severity}}</span> <code>{{.Rule}}</code> <b>{{.Object}}</b>: {{.Message}}</p>
<dl>{{range .Evidence}}<dt>evidence</dt><dd><code>{{.What}} = {{.Value}}</code>{{if .File}} <span class="file">({{.File}})</span>{{end}}</dd>{{end}}
<dt>fix</dt><dd>{{.Fix}}</dd>{{if .Source}}<dt>source</dt><dd>{{.Source}}</dd>{{end}}</dl></div>{{end}}
{{end}}{{end}}</section>
{{end}}</main>
<footer>interlink report: self-contained (no scripts, no external resources); charts are SVG.</footer>
</body>
</html>
`))

// css is the whole stylesheet: small, print-friendly (no backgrounds lost
// on paper: verdict colours are printed exactly and every coloured cell
// carries its value as text too).
const css = `
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1a1a1a;max-width:980px;margin:0 auto;padding:16px 24px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;border-bottom:2px solid #ccc;padding-bottom:3px;margin-top:28px}h3{font-size:15px;margin:18px 0 6px}
.meta,.note,figcaption,.file{color:#555}.note{font-size:13px}
nav ol{columns:2;font-size:13px;padding-left:20px}
table{border-collapse:collapse;margin:8px 0;font-size:13px}th,td{border:1px solid #ccc;padding:3px 7px;text-align:left;vertical-align:top}th{background:#f3f3f3}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.badge{display:inline-block;padding:0 7px;border-radius:9px;font-size:12px;font-weight:600;background:#e0e0e0;vertical-align:middle}
.badge.ok{background:#c8e6c9}.badge.warning{background:#ffe082}.badge.critical{background:#ef9a9a}.badge.unknown{background:#cfd8dc}.badge.info{background:#bbdefb}
td.ok{background:#e8f5e9}td.warning{background:#fff8e1}td.critical{background:#ffebee}
.finding{border-left:5px solid #bbb;padding:2px 10px;margin:10px 0;break-inside:avoid}.finding.critical{border-color:#c62828}.finding.warning{border-color:#f9a825}.finding.info{border-color:#1565c0}
.finding p{margin:4px 0}dl{margin:4px 0 6px;display:grid;grid-template-columns:max-content 1fr;gap:2px 10px}dt{color:#555}dd{margin:0}
figure{margin:10px 0;break-inside:avoid}svg.chart{max-width:100%;height:auto;display:block}
svg text{font-family:system-ui,sans-serif;fill:#222}svg .tick{font-size:11px}svg .axis{font-size:12px;fill:#444}svg .legend{font-size:12px}
svg .cell{font-size:12px;font-weight:600}svg .cellsub{font-size:9px}svg .value{font-size:12px}svg .mark{font-size:10px;fill:#555}
footer{margin-top:30px;color:#777;font-size:12px}
@media print{body{max-width:none;padding:0;font-size:11pt}nav{display:none}section{break-before:auto}h2{break-after:avoid}
*{-webkit-print-color-adjust:exact;print-color-adjust:exact}}
`
