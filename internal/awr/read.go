package awr

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Parse reads one AWR report, text or HTML (told apart by its first
// bytes), from r as a stream. name is recorded as Report.File. A report
// cut short or re-wrapped by a mail client gives what it holds; input
// without an AWR title gives an error wrapping ErrNotAWR.
//
// At most titleBytes are read before the title: a file of another kind
// (or an endless one) is refused after that many bytes, however its lines
// run. A read error, such as the context error of a reader that
// readfile.WithContext wraps, ends the parse with that error.
func Parse(r io.Reader, name string) (*Report, error) {
	rep := &Report{File: name, Format: "text"}
	br := bufio.NewReaderSize(&budgetReader{r: r, left: titleBytes, kind: &rep.Kind}, 64<<10)
	head, _ := br.Peek(4096)
	b := newBuilder(rep)
	var err error
	if looksHTML(head) {
		rep.Format = "html"
		err = readHTML(br, b)
	} else {
		err = readText(br, b)
	}
	if errors.Is(err, errBudget) {
		err = ErrNotAWR
	}
	if err != nil {
		return nil, err
	}
	b.finish()
	return rep, nil
}

func looksHTML(head []byte) bool {
	h := bytes.ToLower(bytes.TrimLeft(bytes.TrimPrefix(head, []byte("\xef\xbb\xbf")), " \t\r\n"))
	return bytes.HasPrefix(h, []byte("<!doctype html")) || bytes.HasPrefix(h, []byte("<html")) ||
		bytes.Contains(h, []byte("<html")) || bytes.HasPrefix(h, []byte("<head")) || bytes.HasPrefix(h, []byte("<table"))
}

// kindOf returns the report kind a title line announces, or "".
func kindOf(s string) string {
	switch {
	case strings.Contains(s, "WORKLOAD REPOSITORY REPORT (RAC)"), strings.Contains(s, "AWR RAC Report for DB"):
		return KindGlobal
	case strings.Contains(s, "WORKLOAD REPOSITORY report for"), strings.Contains(s, "WORKLOAD REPOSITORY PDB report"),
		strings.Contains(s, "AWR Report for DB"):
		return KindInstance
	}
	return ""
}

// Limits of the readers: a longer text line is cut (AWR lines are at most
// a few hundred characters); the title must come within titleBytes of the
// start (an AWR report's comes within its first kilobytes).
const (
	maxLine    = 8 << 10
	titleBytes = 4 << 20
)

// errBudget ends a read that found no title within titleBytes.
var errBudget = errors.New("no AWR title within the first bytes")

// budgetReader reads at most left bytes until the report's kind is known
// (its title was read); from then on it reads without bound.
type budgetReader struct {
	r    io.Reader
	left int64
	kind *string
}

func (b *budgetReader) Read(p []byte) (int, error) {
	if *b.kind != "" {
		return b.r.Read(p)
	}
	if b.left <= 0 {
		return 0, errBudget
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	return n, err
}

// readLine returns the next line without its end of line, at most
// maxLine bytes of it (the rest is skipped), and io.EOF after the last.
func readLine(br *bufio.Reader, buf []byte) ([]byte, error) {
	buf = buf[:0]
	for {
		chunk, err := br.ReadSlice('\n')
		if len(buf)+len(chunk) <= maxLine {
			buf = append(buf, chunk...)
		} else if len(buf) < maxLine {
			buf = append(buf, chunk[:maxLine-len(buf)]...)
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err != nil && len(buf) == 0:
			return nil, err
		}
		return bytes.TrimRight(buf, "\r\n"), nil
	}
}

// textReader turns the lines of a text report into section titles and
// rows for the builder.
type textReader struct {
	b         *builder
	inRows    bool     // a table's column rule has been read
	afterHead bool     // the previous line was the current section's title
	pending   []string // the row being read, until its continuation is known
	indent    int      // the blanks before the pending row's first word
	started   bool     // the first section has begun (the header is over)
}

func readText(br *bufio.Reader, b *builder) error {
	t := &textReader{b: b}
	var buf []byte
	for {
		line, err := readLine(br, buf)
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("read: %w", err)
		}
		buf = line
		s := string(line)
		if endOfReport(s) {
			b.ended = true
		}
		if b.rep.Kind == "" {
			b.title(s)
			continue
		}
		t.line(s)
	}
	if b.rep.Kind == "" {
		return ErrNotAWR
	}
	t.flush()
	return nil
}

// endRE-like tests, kept as functions: a section's end marker is one long
// run of dashes indented by eight blanks or more.
func endMarker(s string) bool {
	t := strings.TrimLeft(s, " ")
	return len(s)-len(t) >= 8 && len(t) >= 20 && strings.Trim(t, "- ") == "" && !strings.Contains(strings.TrimSpace(t), " ")
}

func (t *textReader) line(s string) {
	b := t.b
	page := strings.HasPrefix(s, "\f")
	s = strings.TrimLeft(s, "\f")
	if d := match(s, b.rep.Kind); d != nil {
		t.flush()
		if b.cur == d && page || b.cur == d && strings.Contains(s, "DB/Inst") {
			// The same table continued on a new page: its header again.
			t.inRows, t.afterHead = false, true
			return
		}
		b.start(d)
		t.started, t.inRows, t.afterHead = true, false, true
		return
	}
	head := t.afterHead
	if b.cur == nil {
		if !t.started {
			b.hdr.line(b, s)
		}
		return
	}
	trim := strings.TrimSpace(s)
	switch {
	case page, strings.Contains(s, "DB/Inst:"), endMarker(s):
		// Another section, a page break or the end marker.
		t.end()
		return
	case strings.HasPrefix(trim, "~~~"):
		t.afterHead = false
		if !head {
			// The underline of another section's title.
			t.end()
		}
		return
	case dashRE.MatchString(s):
		t.flush()
		t.inRows, t.afterHead = true, false
		return
	case trim == "":
		t.flush()
		return
	case !b.cur.kv && !t.inRows:
		// Column headings and notes: they may give the unit.
		b.heading(s)
		return
	}
	words := strings.Fields(s)
	if head && !hasValue(words, b.decComma) {
		// The title's line, wrapped: still the heading.
		return
	}
	t.afterHead = false
	if t.pending != nil && t.continues(s, words) {
		t.pending = append(t.pending, words...)
		return
	}
	t.flush()
	t.pending = words
	t.indent = len(s) - len(strings.TrimLeft(s, " \t"))
}

// continues reports whether a line is the continuation of the pending
// row, which a mail client wrapped. In a table whose rows start with a
// number (right-aligned by AWR, so indented), a line that starts at
// column 0 is one (a mail client does not indent what it wraps), while
// the row is short of its columns. Elsewhere a line of values only is:
// rows start with a name.
func (t *textReader) continues(s string, words []string) bool {
	d := t.b.cur
	if d.want > 0 && len(t.pending) >= d.want {
		return false
	}
	if d.numericFirst {
		return s[0] != ' ' && s[0] != '\t'
	}
	for _, w := range words {
		if !numeric(w, t.b.decComma) && !isUnit(w) {
			return false
		}
	}
	return true
}

func hasValue(words []string, decComma bool) bool {
	for _, w := range words {
		if numeric(w, decComma) {
			return true
		}
	}
	return false
}

// flush hands the pending row to the builder.
func (t *textReader) flush() {
	if t.pending != nil {
		t.b.row(row{cells: t.pending, indent: t.indent})
		t.pending = nil
	}
}

func (t *textReader) end() {
	t.flush()
	t.b.end()
	t.inRows = false
}
