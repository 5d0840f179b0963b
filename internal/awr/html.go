package awr

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"golang.org/x/net/html"
)

// HTML reports are tables, each after its title: an <h2> or <h3> heading
// (12c and later), bare text before the table (the 11.2 summary), or the
// table's summary attribute. The tokenizer reads them as a stream; the
// reader keeps the last heading and the row being read, nothing else.

// Bounds of the HTML reader: a token longer than maxToken stops the read
// (what was read is kept); text and cells are cut.
const (
	maxToken = 1 << 20
	maxText  = 512
	maxCells = 64
)

type htmlReader struct {
	b       *builder
	z       *html.Tokenizer
	heading strings.Builder // the text since the last block element
	title   string          // the last heading before the current table
	depth   int             // table nesting
	cells   []string
	allTH   bool
	cell    *strings.Builder
	textTag string // what holds the text being gathered: "h" (heading), "li", or "" (bare)
	skip    int    // inside <script>, <style>: text is not content
	header  bool
	pending bool   // the current table has a section
	notes   string // the list items since the last heading (bounded)
}

func readHTML(r io.Reader, b *builder) error {
	z := html.NewTokenizer(r)
	z.SetMaxBuf(maxToken)
	h := &htmlReader{b: b, z: z}
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			err := z.Err()
			if errors.Is(err, io.EOF) {
				break
			}
			if errors.Is(err, errBudget) || b.rep.Kind == "" && errors.Is(err, html.ErrBufferExceeded) {
				return ErrNotAWR
			}
			if errors.Is(err, html.ErrBufferExceeded) {
				b.note("stopped reading at a token longer than %d KiB; the rest of the report was not read", maxToken>>10)
				break
			}
			return fmt.Errorf("read: %w", err)
		}
		h.token(tt)
	}
	if b.rep.Kind == "" {
		return ErrNotAWR
	}
	h.endRow()
	h.blockBreak()
	return nil
}

func (h *htmlReader) token(tt html.TokenType) {
	switch tt {
	case html.TextToken:
		if h.skip > 0 {
			return
		}
		text := string(h.z.Text())
		if len(h.b.titled) == 0 {
			// Before the first section: the page's title, then the
			// report's (which says a PDB report).
			h.b.title(text)
		}
		if h.cell != nil {
			appendText(h.cell, text)
		} else if h.depth == 0 {
			appendText(&h.heading, text)
		}
	case html.StartTagToken, html.SelfClosingTagToken:
		name, hasAttr := h.z.TagName()
		h.start(string(name), hasAttr)
		if tt == html.SelfClosingTagToken {
			h.stop(string(name))
		}
	case html.EndTagToken:
		name, _ := h.z.TagName()
		h.stop(string(name))
	}
}

// appendText adds text to sb, one blank between words, at most maxText.
func appendText(sb *strings.Builder, text string) {
	for _, w := range strings.Fields(html.UnescapeString(text)) {
		if sb.Len()+len(w)+1 > maxText {
			return
		}
		if sb.Len() > 0 {
			sb.WriteByte(' ')
		}
		sb.WriteString(w)
	}
}

func (h *htmlReader) start(name string, hasAttr bool) {
	switch name {
	case "script", "style":
		h.skip++
	case "title":
		// The page title names the kind ("AWR RAC Report for DB").
	case "table":
		h.depth++
		if h.depth > 1 {
			return
		}
		summary := ""
		for hasAttr {
			k, v, more := h.z.TagAttr()
			if string(k) == "summary" {
				summary = string(v)
			}
			hasAttr = more
		}
		h.openTable(summary)
	case "tr":
		h.endRow()
		h.cells, h.allTH = h.cells[:0], true
	case "td", "th":
		h.endCell()
		if name == "td" {
			h.allTH = false
		}
		h.cell = &strings.Builder{}
	case "h1", "h2", "h3", "h4", "p", "br", "li", "ul", "hr", "div":
		if h.depth == 0 {
			h.blockBreak()
			switch name {
			case "h1", "h2", "h3", "h4":
				h.textTag = "h"
			case "li", "ul":
				h.textTag = "li"
			}
		}
	}
}

func (h *htmlReader) stop(name string) {
	switch name {
	case "script", "style":
		if h.skip > 0 {
			h.skip--
		}
	case "td", "th":
		h.endCell()
	case "tr":
		h.endRow()
	case "table":
		if h.depth == 0 {
			return
		}
		h.depth--
		if h.depth == 0 {
			h.endRow()
			h.closeTable()
		}
	case "h1", "h2", "h3", "h4", "p", "li":
		if h.depth == 0 {
			h.blockBreak()
		}
	}
}

// blockBreak ends a piece of text outside tables. A heading or bare text
// that names a section is kept as the next table's title; a heading that
// names none clears it (list items, the notes under a title and the
// table of contents, neither set nor clear it).
func (h *htmlReader) blockBreak() {
	t, tag := h.heading.String(), h.textTag
	h.heading.Reset()
	h.textTag = ""
	if t == "" {
		return
	}
	if k := kindOf(t); k != "" && h.b.rep.Kind == "" {
		h.b.title(t)
	}
	if tag == "li" {
		// Notes under a title, which may give the unit of its table.
		if len(h.notes) < 4*maxText {
			h.notes += t + "\n"
		}
		return
	}
	if h.b.rep.Kind == "" {
		return
	}
	switch {
	case endOfReport(t):
		h.b.ended = true
	case noData(t) && h.title != "":
		// The section is there, with nothing for the interval.
		if d := match(h.title, h.b.rep.Kind); d != nil {
			h.b.start(d)
			h.b.end()
		}
		h.title, h.notes = "", ""
		return
	}
	if match(t, h.b.rep.Kind) != nil {
		h.title, h.notes = t, ""
	} else if tag == "h" {
		h.title, h.notes = "", ""
	}
}

// summaries maps words of a table's summary attribute to a title, for
// tables without a heading the reader recognises.
var summaries = []struct{ words, title string }{
	{"global cache load", "Global Cache Load Profile"},
	{"global cache efficiency", "Global Cache Efficiency Percentages"},
	{"workload characteristics for global", "Global Cache and Enqueue Services - Workload Characteristics"},
	{"interconnect ping latency", "Interconnect Ping Latency Stats"},
	{"ic ping latency", "Interconnect Ping Latency Stats"},
	{"interconnect device", "Interconnect Device Statistics"},
	{"interconnect throughput", "Interconnect Throughput by Client"},
	{"load profile", "Load Profile"},
}

func (h *htmlReader) openTable(summary string) {
	h.blockBreak()
	b := h.b
	h.pending, h.header = false, false
	if b.rep.Kind == "" {
		return
	}
	title := h.title
	h.title = ""
	if title == "" {
		s := strings.ToLower(summary)
		for _, m := range summaries {
			if strings.Contains(s, m.words) {
				title = m.title
				break
			}
		}
	}
	notes := h.notes
	h.notes = ""
	if d := match(title, b.rep.Kind); d != nil {
		b.start(d)
		b.heading(notes)
		h.pending = true
		return
	}
	// Untitled tables before the first section are the header's.
	h.header = len(b.titled) == 0
}

func (h *htmlReader) closeTable() {
	if h.pending {
		h.b.end()
	}
	if h.header {
		h.b.hdr.line(h.b, "")
	}
	h.pending, h.header = false, false
}

func (h *htmlReader) endCell() {
	if h.cell == nil {
		return
	}
	if len(h.cells) < maxCells {
		h.cells = append(h.cells, h.cell.String())
	}
	h.cell = nil
}

func (h *htmlReader) endRow() {
	h.endCell()
	if len(h.cells) == 0 {
		return
	}
	cells := h.cells
	h.cells = h.cells[:0]
	switch {
	case h.header:
		// A header table's rows are lines of the header; a blank line
		// after each row ends the data of its table.
		h.b.hdr.line(h.b, strings.Join(cells, "  "))
		if h.allTH {
			// Column headings: what follows is data, as after a text
			// report's rule of dashes.
			h.b.hdr.line(h.b, "---")
		} else {
			h.b.hdr.line(h.b, "")
		}
	case h.pending && h.allTH:
		h.b.heading(strings.Join(cells, " "))
	case h.pending:
		h.b.row(row{cells: append([]string(nil), cells...), exact: true})
	}
}
