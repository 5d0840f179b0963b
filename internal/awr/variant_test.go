package awr

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The variants of a report that reach operators: cut short, re-wrapped by
// a mail client, printed with decimal commas. Each is made here from a
// fixture, so what it changes is written down.

// wrap re-wraps text as a mail client does at width columns: a longer
// line breaks at its last blank before the width, the blank dropped and
// the rest starting a new line at column 0.
func wrap(s string, width int) string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		for len(line) > width {
			i := strings.LastIndexByte(line[:width+1], ' ')
			if i <= 0 {
				break
			}
			out = append(out, strings.TrimRight(line[:i], " "))
			line = strings.TrimLeft(line[i:], " ")
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

var numRE = regexp.MustCompile(`\d[\d,]*\.\d+|\d{1,3}(,\d{3})+`)

// localize swaps the decimal point and the thousands separator of every
// number, as a report printed under NLS_NUMERIC_CHARACTERS=',.' shows
// them: 1,234.56 becomes 1.234,56. Releases (19.0.0.0.0), addresses and
// times are left alone.
func localize(s string) string {
	protect := regexp.MustCompile(`\d+\.\d+\.\d+\.\d+(\.\d+)?|\d\d:\d\d:\d\d`)
	var keep []string
	s = protect.ReplaceAllStringFunc(s, func(m string) string {
		keep = append(keep, m)
		return "\x00"
	})
	s = numRE.ReplaceAllStringFunc(s, func(m string) string {
		return strings.NewReplacer(",", ".", ".", ",").Replace(m)
	})
	for _, k := range keep {
		s = strings.Replace(s, "\x00", k, 1)
	}
	return s
}

func read(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func parseString(t *testing.T, s, name string) *Report {
	t.Helper()
	r, err := Parse(strings.NewReader(s), name)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return r
}

// TestWrappedAndLocalized: a report re-wrapped at 72 columns, and one
// printed with decimal commas, read to the same values as the original.
func TestWrappedAndLocalized(t *testing.T) {
	for _, name := range []string{"11.2.0.3-awrrpt-rac-mtu1500.txt", "19c-awrrpt-rac-mtu1500.txt", "19c-awrgrpt-rac.txt",
		"12.2-awrrpt-rac.html", "19c-awrrpt-rac-mtu1500.html", "19c-awrgrpt-rac.html"} {
		orig := read(t, name)
		want := summarize(parseString(t, orig, name))
		wrapped := wrap(orig, 72)
		if wrapped == orig {
			t.Fatalf("%s: wrapping changed nothing", name)
		}
		if got := summarize(parseString(t, wrapped, name)); got != want {
			t.Errorf("%s re-wrapped at 72 columns:\n got %s\nwant %s", name, got, want)
		}
		loc := localize(orig)
		if !strings.Contains(loc, ",") || loc == orig {
			t.Fatalf("%s: localizing changed nothing", name)
		}
		r := parseString(t, loc, name)
		if !r.DecimalComma && r.Kind == KindInstance {
			t.Errorf("%s localized: decimal comma not detected", name)
		}
		if got := summarize(r); got != want {
			t.Errorf("%s localized:\n got %s\nwant %s", name, got, want)
		}
	}
}

// TestTruncated: a report cut in the middle of Foreground Wait Events
// keeps what came before; the sections after the cut are absent, not 0.
func TestTruncated(t *testing.T) {
	orig := read(t, "19c-awrrpt-rac-mtu1500.txt")
	cut := orig[:strings.Index(orig, "gc cr block busy                96,221")+20]
	r := parseString(t, cut, "cut.txt")
	in := r.Instances[0]
	if in.GCWorkload == nil || *in.GCWorkload.CRReceiveMs != 2.4 {
		t.Errorf("workload before the cut lost: %+v", in.GCWorkload)
	}
	if in.Wait("gc cr block lost") == nil || in.Wait("gc cr block 3-way") != nil {
		t.Errorf("waits: want those before the cut only, got %d", len(in.Waits))
	}
	if in.Pings != nil || in.Devices != nil || in.Remaster != nil || in.Clients != nil {
		t.Errorf("sections after the cut are not absent: pings %v devices %v remaster %v", in.Pings, in.Devices, in.Remaster)
	}
	for _, s := range in.Sections {
		if s.Name == secPing && s.Status != "absent" {
			t.Errorf("%s: %s", s.Name, s.Status)
		}
	}
	res := Analyze([]Report{*r})
	for _, f := range res.Findings {
		if f.Rule == RulePing || f.Rule == RuleDevice {
			t.Errorf("finding on an absent section: %+v", f)
		}
	}
}
