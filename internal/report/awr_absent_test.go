package report

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/interlink/interlink/internal/awr"
)

func parseAWR(t *testing.T, name string) awr.Report {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "awr", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := awr.Parse(f, name)
	if err != nil {
		t.Fatal(err)
	}
	return *r
}

// TestAWRNotAvailable: a figure without samples reads "n/a" in text (the
// ping target counted 0 times, the receive times without a block), a wait
// table without gc events says so, and the lost blocks are shown with the
// lost-block waits beside them, in text and HTML.
func TestAWRNotAvailable(t *testing.T) {
	res := awr.Analyze([]awr.Report{parseAWR(t, "19c-public-layout-idle.html"), parseAWR(t, "12.2-public-layout-pdb-lost42379.html")})
	var b bytes.Buffer
	if err := AWRText(&b, res); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`\n\s+2\s+0\s+n/a\s+n/a\s+0\s+n/a\s+n/a\n`),
		regexp.MustCompile(`avg receive time: cr n/a ms, current n/a ms`),
		regexp.MustCompile(`gc wait events \(from Foreground Wait Events\): none \(the table lists no gc event\)`),
		regexp.MustCompile(`lost blocks in the interval: 42379 gc blocks lost \(Instance Activity Stats\), n/a gc blocks corrupt; 105 waits on gc cr/current block lost`),
	} {
		if !want.MatchString(out) {
			t.Errorf("text lacks %s:\n%s", want, out)
		}
	}
	page := render(t, res)
	for _, want := range []string{"gc blocks lost in the interval", "42379", "Foreground Wait Events lists no gc wait event."} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}

// TestAWRDiffDatabasesShown: a comparison of several databases (--any-db)
// heads each instance with its database, in text and HTML.
func TestAWRDiffDatabasesShown(t *testing.T) {
	d := awr.Compare([]awr.Report{parseAWR(t, "19c-public-layout-lost21.html"), parseAWR(t, "19c-public-layout-idle.html")},
		[]awr.Report{parseAWR(t, "19c-public-layout-lost96.html"), parseAWR(t, "19c-public-layout-idle.html")}, 0.95)
	var b bytes.Buffer
	if err := AWRDiffText(&b, d); err != nil {
		t.Fatal(err)
	}
	page := render(t, d)
	for _, want := range []string{"database XYDB (DB id 1971498938), instance 1 xydb1", "database XYDB (DB id 2028335103), instance 1 xydb1",
		"XYDB (DB id 2028335103, release 19.0.0.0.0): 1 report(s) before, 1 after"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, b.String())
		}
	}
	if !strings.Contains(page, "Database XYDB (DB id 2028335103), instance 1 xydb1") {
		t.Error("page lacks the database of an instance")
	}
}
