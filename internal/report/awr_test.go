package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/interlink/interlink/internal/awr"
)

// lab-awr.json and lab-awr-diff.json are the --json output of 'interlink
// awr' and 'interlink awr diff' on internal/awr/testdata's 11.2.0.3 pair
// (before and after jumbo frames), not of the demo lab.

// TestAWRBesideAB: an A/B experiment from the lab and an AWR comparison
// from production on one page, each with its own section.
func TestAWRBesideAB(t *testing.T) {
	page := render(t, fixture(t, "lab-ab.json"), fixture(t, "lab-awr-diff.json"), fixture(t, "lab-awr.json"))
	for _, want := range []string{`class="result ab"`, `class="result awr"`, "AWR before and after", "gc_cr_receive_ms",
		"one report per side", "AWR-GC-LOST", "Interconnect"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if n := strings.Count(page, `<section id=`); n != 4 {
		t.Errorf("%d sections, want 4 (ab, awr diff, the report, its findings)", n)
	}
}

// hostile is an AWR report whose names carry markup and terminal escapes.
const hostile = "WORKLOAD REPOSITORY report for\n\n" +
	"DB Name         DB Id    Instance     Inst Num Startup Time    Release     RAC\n" +
	"------------ ----------- ------------ -------- --------------- ----------- ---\n" +
	"<script>x     2318045712 \x1b]0;pwn\x07        1 03-Mar-14 21:08 11.2.0.3.0  YES\n\n" +
	"Host Name        Platform                         CPUs Cores Sockets Memory(GB)\n" +
	"---------------- -------------------------------- ---- ----- ------- ----------\n" +
	"<img/src=x>      Linux x86 64-bit                   16     8       2      94.41\n\n" +
	"Interconnect Device Statistics  DB/Inst: X/x  Snaps: 1-2\n" +
	"Device Name     IP Address      Public Source\n" +
	"--------------- --------------- ------ -------------------------------\n" +
	"<b>eth1\x1b[2J    192.168.10.1    YES    <script>alert(1)</script>\n" +
	"     39.66        1        0        0        0\n" +
	"     39.33        0    1,275        0        0\n"

func TestAWREscapes(t *testing.T) {
	rep, err := awr.Parse(strings.NewReader(hostile), "<i>evil.txt")
	if err != nil {
		t.Fatal(err)
	}
	res := awr.Analyze([]awr.Report{*rep})
	if len(res.Findings) == 0 || len(rep.Instances) == 0 || len(rep.Instances[0].Devices) != 1 {
		t.Fatalf("the hostile report was not read: %+v", rep)
	}
	page := render(t, res)
	for _, bad := range []string{"<script>", "<img", "<b>eth1", "<i>", "\x1b"} {
		if i := strings.Index(page, bad); i >= 0 {
			t.Errorf("markup from a report reached the page raw: %q", page[max(0, i-60):i+20])
		}
	}
	if !strings.Contains(page, "&lt;b&gt;eth1") || !strings.Contains(page, "&lt;script&gt;x") {
		t.Error("the escaped names are not shown")
	}
	var b bytes.Buffer
	if err := AWRText(&b, res); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(b.String(), "\x1b\x07") {
		t.Errorf("an escape sequence reached the terminal text: %q", b.String())
	}
	if !strings.Contains(b.String(), `\e]0;pwn`) {
		t.Error("the escape is not shown as text")
	}
}

func TestAWRDiffText(t *testing.T) {
	d := fixture(t, "lab-awr-diff.json").(*awr.Diff)
	var b bytes.Buffer
	if err := AWRDiffText(&b, d); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"one report per side", "gc_cr_receive_ms", "0.250", "-75.0 %", "better (lower is better)"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("diff text lacks %q:\n%s", want, b.String())
		}
	}
}
