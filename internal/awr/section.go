package awr

import (
	"fmt"
	"strings"
)

// Section keys: every section this package reads.
const (
	secLoad      = "Load Profile"
	secGCLoad    = "Global Cache Load Profile"
	secGCEff     = "Global Cache Efficiency Percentages"
	secGCWork    = "Global Cache and Enqueue Services - Workload Characteristics"
	secGCMsg     = "Global Cache and Enqueue Services - Messaging Statistics"
	secTop       = "Top Foreground Events"
	secFGWaits   = "Foreground Wait Events"
	secPing      = "Interconnect Ping Latency Stats"
	secClients   = "Interconnect Throughput by Client"
	secDevices   = "Interconnect Device Statistics"
	secRemaster  = "Dynamic Remastering Stats"
	secActivity  = "Instance Activity Stats"
	secGSummary  = "Database Summary"
	secGInst     = "Database Instances Included In Report"
	secGTime     = "Time Model"
	secGTop      = "Top Timed Events"
	secGSys      = "System Statistics - Per Second"
	secGMsgTotal = "SysStat and Global Messaging - RAC"
	secGMsg      = "SysStat and Global Messaging (per Sec) - RAC"
	secGEff      = "Global Cache Efficiency Percentages (global)"
	secGWork     = "Global Cache and Enqueue Workload Characteristics"
	secGIC       = "Cluster Interconnect"
	secGPing     = "Ping Statistics"
	secGClients  = "Interconnect Client Statistics (per Second)"
	secGDevices  = "Interconnect Device Statistics (global)"
	secGDevRate  = "Interconnect Device Statistics (per Second)"
)

// sectionDef says how a section is recognised and read. Titles are
// matched at the start of a text line (after a form feed) and against
// the heading before an HTML table.
type sectionDef struct {
	key    string
	titles []string
	// exclude: a title followed by one of these is another section's
	// ("Time Model - % of DB time", "Interconnect Device Statistics (per
	// Second)").
	exclude []string
	kind    string // KindInstance, KindGlobal
	// kv: "label: value value" lines with no column rule (text); tables
	// start their rows after a rule of dashes.
	kv bool
	// numericFirst: a row starts with a number (instance or target), so
	// a wrapped row's continuation is told apart by starting at column 0.
	numericFirst bool
	// want is the number of tokens of a whole row, when fixed: a shorter
	// row takes the next line as its continuation (mail clients wrap).
	want  int
	parse func(b *builder, r row)
	// cluster marks the sections whose presence makes a report a cluster
	// report.
	cluster bool
}

// sections lists the definitions, longer titles before their prefixes.
// The titles of 12.2 and later are listed beside the older ones; a
// section's key stays its older title.
var sections = []sectionDef{
	{key: secLoad, titles: []string{"Load Profile"}, kind: KindInstance, kv: true, parse: parseLoad},
	{key: secGCLoad, titles: []string{"Global Cache Load Profile"}, kind: KindInstance, kv: true, parse: parseGCLoad, cluster: true},
	{key: secGCEff, titles: []string{"Global Cache Efficiency Percentages"}, kind: KindInstance, kv: true, parse: parseGCEff, cluster: true},
	{key: secGCWork, titles: []string{"Global Cache and Enqueue Services - Workload Characteristics"}, kind: KindInstance, kv: true, parse: parseGCWork, cluster: true},
	{key: secGCMsg, titles: []string{"Global Cache and Enqueue Services - Messaging Statistics"}, kind: KindInstance, kv: true, parse: parseGCWork, cluster: true},
	{key: secTop, titles: []string{"Top 10 Foreground Events by Total Wait Time", "Top 5 Timed Foreground Events", "Top 5 Timed Events"}, kind: KindInstance, parse: parseTop},
	{key: secFGWaits, titles: []string{"Foreground Wait Events"}, kind: KindInstance, parse: parseFGWaits},
	{key: secPing, titles: []string{"Interconnect Ping Latency Statistics", "Interconnect Ping Latency Stats"}, kind: KindInstance, numericFirst: true, want: 7, parse: parsePing, cluster: true},
	{key: secClients, titles: []string{"Interconnect Throughput by Client"}, kind: KindInstance, parse: parseClient, cluster: true},
	{key: secDevices, titles: []string{"Interconnect Device Statistics"}, kind: KindInstance, parse: parseDevice, cluster: true},
	{key: secRemaster, titles: []string{"Dynamic Remastering Stats", "Dynamic Remastering Statistics"}, kind: KindInstance, parse: parseRemaster, cluster: true},
	{key: secActivity, titles: []string{"Other Instance Activity Stats", "Instance Activity Stats"}, exclude: []string{"-"}, kind: KindInstance, parse: parseActivity},
	{key: secGSummary, titles: []string{"Database Summary"}, kind: KindGlobal, parse: parseGSummary},
	{key: secGInst, titles: []string{"Database Instances Included In Report"}, kind: KindGlobal, numericFirst: true, parse: parseGInstance},
	{key: secGTime, titles: []string{"Time Model"}, exclude: []string{"-"}, kind: KindGlobal, numericFirst: true, want: 10, parse: parseGTime},
	{key: secGTop, titles: []string{"Top Timed Events"}, kind: KindGlobal, numericFirst: true, parse: parseGTop},
	{key: secGSys, titles: []string{"System Statistics - Per Second"}, kind: KindGlobal, numericFirst: true, want: 11, parse: parseGSys},
	{key: secGMsgTotal, titles: []string{"SysStat and Global Messaging - RAC"}, kind: KindGlobal, numericFirst: true, parse: parseGMsgTotal, cluster: true},
	{key: secGMsg, titles: []string{"SysStat and Global Messaging (per Sec)- RAC", "SysStat and Global Messaging (per Sec) - RAC"}, kind: KindGlobal, numericFirst: true, parse: parseGMsg, cluster: true},
	{key: secGEff, titles: []string{"Global Cache Efficiency Percentages"}, kind: KindGlobal, numericFirst: true, parse: parseGEff, cluster: true},
	{key: secGWork, titles: []string{"Global Latency Characteristics", "Global Cache and Enqueue Workload Characteristics"}, kind: KindGlobal, numericFirst: true, want: 10, parse: parseGWork, cluster: true},
	{key: secGIC, titles: []string{"Cluster Interconnect"}, kind: KindGlobal, numericFirst: true, parse: parseGIC, cluster: true},
	{key: secGPing, titles: []string{"Ping Statistics"}, kind: KindGlobal, numericFirst: true, parse: parseGPing, cluster: true},
	{key: secGClients, titles: []string{"Interconnect Client Statistics (per Second)"}, kind: KindGlobal, numericFirst: true, want: 13, parse: parseGClients, cluster: true},
	{key: secGDevRate, titles: []string{"Interconnect Device Statistics (per Second)"}, kind: KindGlobal, numericFirst: true, parse: parseGDeviceRate, cluster: true},
	{key: secGDevices, titles: []string{"Interconnect Device Statistics"}, exclude: []string{"("}, kind: KindGlobal, numericFirst: true, parse: parseGDevice, cluster: true},
}

// sectionOrder is the order of Instance.Sections for each kind of report.
var sectionOrder = map[string][]string{
	KindInstance: {secLoad, secGCLoad, secGCEff, secGCWork, secFGWaits, secTop, secActivity, secPing, secClients, secDevices, secRemaster},
	KindGlobal: {secGInst, secGTime, secGSys, secGMsg, secGMsgTotal, secGEff, secGWork, secGTop, secGIC, secGPing, secGClients,
		secGDevices, secGDevRate},
}

// match returns the definition whose title starts s, for a report of
// kind, or nil. A title must end there or be followed by a blank, a
// parenthesis or "DB/Inst" (text reports run the title into it). Runs of
// blanks count as one ("SysStat and Global Messaging  - RAC").
func match(s, kind string) *sectionDef {
	s = strings.TrimLeft(s, "\f")
	if s == "" || s[0] == ' ' || s[0] == '\t' {
		return nil
	}
	for i := range sections {
		d := &sections[i]
		if d.kind != kind {
			continue
		}
		for _, t := range d.titles {
			rest, ok := cutTitle(s, t)
			if !ok || !(rest == "" || rest[0] == ' ' || rest[0] == '(' || rest[0] == '\t' || strings.HasPrefix(rest, "DB/Inst")) {
				continue
			}
			if excluded(strings.TrimSpace(rest), d.exclude) {
				continue
			}
			return d
		}
	}
	return nil
}

func excluded(rest string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(rest, p) {
			return true
		}
	}
	return false
}

// cutTitle is strings.CutPrefix(s, title) where a run of blanks in s
// matches one blank of title.
func cutTitle(s, title string) (string, bool) {
	i := 0
	for j := 0; j < len(title); j++ {
		if i >= len(s) {
			return "", false
		}
		if title[j] == ' ' {
			if s[i] != ' ' {
				return "", false
			}
			for i < len(s) && s[i] == ' ' {
				i++
			}
			continue
		}
		if s[i] != title[j] {
			return "", false
		}
		i++
	}
	return s[i:], true
}

// row is one row of a section: cells as read. exact: each cell is a
// column (HTML; blank cells kept); otherwise the cells are a text line's
// blank-separated words, blank columns lost, and parsers tell columns
// apart by count.
type row struct {
	cells []string
	exact bool
	// indent is the blanks before a text row's first word: a global
	// report leaves I# blank on the rows after an instance's first
	// (SQL*Plus breaks), so such a row starts further right.
	indent int
}

// split returns the row's label (the leading cells that are not values,
// joined) and its values.
func (r row) split(decComma bool) (string, []string) {
	if r.exact {
		if len(r.cells) == 0 {
			return "", nil
		}
		return r.cells[0], r.cells[1:]
	}
	i := 0
	for i < len(r.cells) && !numeric(r.cells[i], decComma) {
		i++
	}
	return strings.Join(r.cells[:i], " "), r.cells[i:]
}

// key normalises a label: lower case, one blank between words, no
// trailing colon.
func key(label string) string {
	return strings.TrimSuffix(strings.ToLower(strings.Join(strings.Fields(label), " ")), ":")
}

// maxInstances bounds the instances of a global report (Oracle RAC
// supports 100 instances; a corrupt row must not create millions).
const maxInstances = 128

// maxNotes bounds Report.Notes.
const maxNotes = 20

// builder receives the titles and rows of a report, from either format,
// and fills the Report.
type builder struct {
	rep      *Report
	decComma bool
	cur      *sectionDef
	titled   map[string]bool         // section titles seen
	filled   map[string]map[int]bool // rows read: section -> instance number
	byNum    map[int]*Instance
	order    []int
	hdr      header
	bad      map[string]int // rows of a section that could not be read
	// usec: the current section's headings or notes give its times in
	// microseconds (12.2 and later).
	usec bool
	// last is the first cell of the current section's previous row, for
	// the rows of a global report that leave I# blank.
	last string
	glob global
	// ended: the report's last line, "End of Report", was read: the
	// report was not cut.
	ended bool
	// pdb: the title says a PDB report, which has no cluster sections.
	pdb bool
}

func newBuilder(rep *Report) *builder {
	return &builder{rep: rep, titled: map[string]bool{}, filled: map[string]map[int]bool{},
		byNum: map[int]*Instance{}, bad: map[string]int{}}
}

// heading takes text of the current section that is not a row: column
// headings and notes. Only the unit is read from it: "(us)" in a heading,
// or a note that times are "given in microseconds" (the plural: the
// legend of units, "us - microsecond", names no section's unit; a mail
// client may have wrapped "given in" and "microseconds" apart).
func (b *builder) heading(s string) {
	if b.cur != nil && (strings.Contains(s, "(us)") || strings.Contains(s, "microseconds")) {
		b.usec = true
	}
}

// instance returns the instance with key n (its number in a global
// report), creating it; nil past maxInstances.
func (b *builder) instance(n int) *Instance {
	if in, ok := b.byNum[n]; ok {
		return in
	}
	if len(b.order) >= maxInstances {
		return nil
	}
	in := &Instance{Number: n}
	b.byNum[n] = in
	b.order = append(b.order, n)
	return in
}

// onlyKey is the key of the one instance of an awrrpt report; the
// header gives it its number when the report has been read.
const onlyKey = -1

// only is the instance of an awrrpt report.
func (b *builder) only() *Instance { return b.instance(onlyKey) }

func (b *builder) start(d *sectionDef) {
	b.cur = d
	b.titled[d.key] = true
	b.usec, b.last = false, ""
}

func (b *builder) end() { b.cur = nil }

// row hands a row to the current section's parser.
func (b *builder) row(r row) {
	if b.cur == nil || len(r.cells) == 0 {
		return
	}
	for _, c := range r.cells {
		if numeric(c, b.decComma) {
			b.cur.parse(b, r)
			return
		}
	}
	// No value at all: a line of column headings.
}

// mark records that section key had a row for the instance with key n.
func (b *builder) mark(key string, n int) {
	m := b.filled[key]
	if m == nil {
		m = map[int]bool{}
		b.filled[key] = m
	}
	m[n] = true
}

// reject counts a row of the current section that could not be read.
func (b *builder) reject() {
	if b.cur != nil {
		b.bad[b.cur.key]++
	}
}

func (b *builder) note(format string, a ...any) {
	if len(b.rep.Notes) < maxNotes {
		b.rep.Notes = append(b.rep.Notes, fmt.Sprintf(format, a...))
	}
}
