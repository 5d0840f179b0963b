// Package report renders result types as text, JSON and HTML. Renderers
// never compute: they format what the collectors and engines produced.
//
// HTML reports (HTML) are one self-contained file: the stylesheet is
// inline, nothing is fetched (a Content-Security-Policy forbids it), and
// the charts are SVG generated here in Go rather than drawn by a
// JavaScript library. That keeps a report small (tens of kilobytes, where
// a chart library alone weighs hundreds), makes it work offline, mailed or
// archived, and print as it shows; and it makes the charts testable
// without a browser, as plain markup (a test can count the cells of a
// heatmap), with a headless browser only proving that the page renders.
// Every string taken from a result is escaped (html/template for the page,
// the same escaping inside the SVG), since node names, details and
// commands come from peers, files and users.
package report

import (
	"encoding/json"
	"io"
)

// JSON writes v as one indented JSON document followed by a newline.
func JSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
