package awr

import (
	"math"
	"regexp"
	"strconv"
	"strings"
)

// header reads the first lines of an awrrpt report, as text lines or as
// HTML table rows joined into lines:
//
//	DB Name         DB Id    Instance     Inst Num Startup Time    Release     RAC     (11.2)
//	DB Name         DB Id    Unique Name DB Role          Edition Release    RAC CDB  (12c and later)
//	Instance     Inst Num Startup Time                                              (12c and later)
//	Host Name        Platform                         CPUs Cores Sockets Memory(GB)
//	Begin Snap:      1234 01-Jan-12 10:00:32        60       1.5
//	   Elapsed:               60.22 (mins)
//
// Values are found by their shape (a release looks like 19.0.0.0.0, a
// snapshot time like 20-Jan-25 08:00:22), not by column, so a header
// re-wrapped by a mail client reads the same.
type header struct {
	expect   string // the table whose data line comes next: db, inst, host
	ruled    bool   // the expected table's rule of dashes has been read
	layout12 bool   // the DB Name table has Unique Name (12c and later)
	data     []string
	dbName   string
	dbID     string
	release  string
	rac      *bool
	instName string
	instNum  int
	host     string
	begin    *Snap
	end      *Snap
	elapsed  *float64
	dbTime   *float64
	done     bool
}

var (
	releaseRE = regexp.MustCompile(`^\d{1,2}\.\d{1,2}\.\d+\.\d+(\.\d+)?$`)
	snapRE    = regexp.MustCompile(`^\s*(Begin|End) Snap:\s+(\d+)\s+(\d{1,2}-[A-Za-z]{3}-\d{2} \d{1,2}:\d{2}:\d{2})`)
	minsRE    = regexp.MustCompile(`^\s*(Elapsed|DB Time):\s+([0-9.,]+)\s*\(mins\)`)
	dashRE    = regexp.MustCompile(`^[\s-]*---[\s-]*$`)
)

// line takes one header line. Lines that are not part of the header are
// ignored, so callers may pass anything that precedes the first section.
func (h *header) line(b *builder, s string) {
	s = strings.TrimRight(strings.TrimLeft(s, "\f"), " \t")
	t := strings.TrimSpace(s)
	switch {
	case h.done:
		return
	case strings.HasPrefix(t, "DB Name"):
		h.flush()
		h.expect, h.layout12 = "db", strings.Contains(t, "Unique Name")
		return
	case strings.HasPrefix(t, "Instance") && strings.Contains(t, "Inst Num") || strings.HasPrefix(t, "Instance") && strings.Contains(t, "Inst num"):
		h.flush()
		h.expect = "inst"
		return
	case strings.HasPrefix(t, "Host Name"):
		h.flush()
		h.expect = "host"
		return
	case dashRE.MatchString(s):
		h.ruled = h.expect != ""
		return
	}
	if m := snapRE.FindStringSubmatch(s); m != nil {
		h.flush()
		id, _ := strconv.ParseInt(m[2], 10, 64)
		sn := &Snap{ID: id, Time: m[3]}
		if m[1] == "Begin" {
			h.begin = sn
		} else {
			h.end = sn
		}
		return
	}
	if m := minsRE.FindStringSubmatch(s); m != nil {
		h.flush()
		if m[1] == "Elapsed" {
			// Elapsed is printed with two decimals: the report's
			// decimal separator.
			if i := strings.LastIndexAny(m[2], ".,"); i >= 0 && len(m[2])-i == 3 {
				b.decComma = m[2][i] == ','
				b.rep.DecimalComma = b.decComma
			}
		}
		if v, ok := num(m[2], b.decComma); ok {
			v = math.Round(v*60*1000) / 1000
			if m[1] == "Elapsed" {
				h.elapsed = &v
			} else {
				h.dbTime = &v
			}
		}
		return
	}
	if t == "" {
		h.flush()
		return
	}
	if h.expect != "" && h.ruled {
		// The data line, and its continuation when a mail client
		// wrapped it, until a blank line or the next table. Before the
		// rule of dashes, a line is the column headings' continuation.
		h.data = append(h.data, strings.Fields(t)...)
	}
}

// flush reads the data line of the table it expected.
func (h *header) flush() {
	d := h.data
	h.data = nil
	exp := h.expect
	h.expect, h.ruled = "", false
	if len(d) == 0 {
		return
	}
	switch exp {
	case "db":
		h.dbName = d[0]
		if len(d) > 1 {
			h.dbID = d[1]
		}
		for i, w := range d {
			if releaseRE.MatchString(w) {
				h.release = w
				if i+1 < len(d) && (d[i+1] == "YES" || d[i+1] == "NO") {
					v := d[i+1] == "YES"
					h.rac = &v
				}
				break
			}
		}
		if !h.layout12 && len(d) > 3 {
			// 11.2: DB Name, DB Id, Instance, Inst Num, ...
			h.instName = d[2]
			h.instNum, _ = strconv.Atoi(d[3])
		}
	case "inst":
		h.instName = d[0]
		if len(d) > 1 {
			h.instNum, _ = strconv.Atoi(d[1])
		}
	case "host":
		h.host = d[0]
	}
}

// apply copies the header into the report and its instance.
func (h *header) apply(b *builder) {
	h.flush()
	r := b.rep
	if r.DBName == "" {
		r.DBName, r.DBID = h.dbName, h.dbID
	}
	if r.Release == "" {
		r.Release = h.release
	}
	if r.RAC == nil {
		r.RAC = h.rac
	}
	if r.BeginSnap == nil {
		r.BeginSnap, r.EndSnap = h.begin, h.end
	}
	if r.Kind != KindInstance {
		return
	}
	in := b.only()
	if in == nil {
		return
	}
	in.Number = h.instNum
	in.Name, in.Host = h.instName, h.host
	in.ElapsedSeconds, in.DBTimeSeconds = h.elapsed, h.dbTime
}
