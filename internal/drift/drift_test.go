package drift

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/interlink/interlink/internal/ab"
	"github.com/interlink/interlink/internal/mesh"
	"github.com/interlink/interlink/internal/pmtu"
	"github.com/interlink/interlink/internal/report"
	"github.com/interlink/interlink/internal/rules"
	"github.com/interlink/interlink/internal/traffic"
)

// load decodes a fixture captured from the demo lab (internal/report's
// testdata); each call returns a fresh copy to modify.
func load(t *testing.T, name string) any {
	t.Helper()
	b, err := os.ReadFile("../report/testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	v, _, err := report.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func compare(t *testing.T, base, cur any) *Diff {
	t.Helper()
	d, err := Compare(base, cur)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestSameResultNoChange(t *testing.T) {
	for _, f := range []string{"lab-mesh.json", "lab-pmtu.json", "lab-check.json", "lab-bench-blocks.json", "lab-bench-udp.json", "lab-bench-tcp.json", "lab-ab.json", "lab-demo.json", "lab-gc.json"} {
		d := compare(t, load(t, f), load(t, f))
		if d.Verdict != NoChange || len(d.Changes) != 0 || d.Compared == 0 {
			t.Errorf("%s against itself: %s, %d compared, changes %+v", f, d.Verdict, d.Compared, d.Changes)
		}
	}
}

func TestMeshPathChanges(t *testing.T) {
	base := load(t, "lab-mesh.json").(*mesh.Result)
	fixed := load(t, "lab-mesh.json").(*mesh.Result)
	for i := range fixed.Paths { // the switch port was fixed: node3's paths pass 9000
		p := &fixed.Paths[i]
		if p.Verdict == pmtu.Blackhole {
			p.Verdict, p.PathMTU = pmtu.OK, 9000
			ok := true
			p.MeetsExpect = &ok
		}
	}
	d := compare(t, base, fixed)
	if d.Verdict != Changed || len(d.Changes) != 8 || d.Changes[0].Worse {
		t.Fatalf("fixed port: %s, %+v", d.Verdict, d.Changes)
	}
	d = compare(t, fixed, base) // and broken again: worse
	if d.Verdict != Worse || len(d.Changes) != 8 || !d.Changes[0].Worse ||
		!strings.Contains(d.Changes[0].What, "mesh path node1 -> node3, network 1") || d.Changes[0].Before != "ok 9000" || d.Changes[0].After != "blackhole 1500" {
		t.Errorf("broken port: %s, %+v", d.Verdict, d.Changes)
	}
}

func TestNewFindings(t *testing.T) {
	base := load(t, "lab-check.json").(*rules.Result)
	cur := load(t, "lab-check.json").(*rules.Result)
	gone := cur.Findings[0]
	cur.Findings = append(cur.Findings[1:], rules.Finding{Rule: "NET-MTU-MISMATCH", Severity: rules.Critical, Object: "interface eth1",
		Message: "MTU 1500", Evidence: []rules.Evidence{{What: "mtu", Value: "1500"}}})
	d := compare(t, base, cur)
	var whats []string
	for _, c := range d.Changes {
		whats = append(whats, c.What)
	}
	if d.Verdict != Worse || len(d.Changes) != 2 || !slices.Contains(whats, "new finding NET-MTU-MISMATCH interface eth1") ||
		!slices.Contains(whats, "finding gone "+gone.Rule+" "+gone.Object) {
		t.Errorf("%s: %q", d.Verdict, whats)
	}
}

// TestBenchNoise: intervals in another order are the same system (no
// change); intervals at 70 % of the rate are a change for the worse.
func TestBenchNoise(t *testing.T) {
	base := load(t, "lab-bench-blocks.json").(*traffic.Report)
	shuffled := load(t, "lab-bench-blocks.json").(*traffic.Report)
	slices.Reverse(shuffled.Flows[0].Client.Intervals)
	if d := compare(t, base, shuffled); d.Verdict != NoChange {
		t.Errorf("the same intervals reordered: %s %+v", d.Verdict, d.Changes)
	}
	slower := load(t, "lab-bench-blocks.json").(*traffic.Report)
	for i := range slower.Flows[0].Client.Intervals {
		slower.Flows[0].Client.Intervals[i].BitsPerSec *= 0.7
	}
	d := compare(t, base, slower)
	if d.Verdict != Worse || len(d.Changes) != 1 || !strings.Contains(d.Changes[0].What, "bench blocks forward rate per interval") ||
		!strings.Contains(d.Changes[0].Detail, "0.7x") {
		t.Errorf("30 %% slower: %s %+v", d.Verdict, d.Changes)
	}
	frag := load(t, "lab-bench-blocks.json").(*traffic.Report)
	frag.Flows[0].Summary.FragmentsPerMessage, frag.Flows[0].Summary.MTU = 6, 1500
	if d := compare(t, base, frag); d.Verdict != Worse || len(d.Changes) != 2 {
		t.Errorf("fragmented at 1500: %s %+v", d.Verdict, d.Changes)
	}
	few := load(t, "lab-bench-blocks.json").(*traffic.Report)
	few.Flows[0].Client.Intervals = few.Flows[0].Client.Intervals[:1]
	if d := compare(t, base, few); d.Verdict != NoChange || len(d.NotJudged) == 0 {
		t.Errorf("one interval: %s, not judged %v", d.Verdict, d.NotJudged)
	}
}

func TestABMoved(t *testing.T) {
	base := load(t, "lab-ab.json").(*ab.Result)
	cur := load(t, "lab-ab.json").(*ab.Result)
	for i := range cur.Runs {
		if cur.Runs[i].Arm == "B" {
			cur.Runs[i].Metrics["rtt_p50"] *= 2
		}
	}
	d := compare(t, base, cur)
	if d.Verdict != Worse || len(d.Changes) != 1 || d.Changes[0].What != "ab rtt_p50 arm B" {
		t.Errorf("B's round trip doubled: %s %+v", d.Verdict, d.Changes)
	}
}

func TestMismatch(t *testing.T) {
	if _, err := Compare(load(t, "lab-mesh.json"), load(t, "lab-pmtu.json")); err == nil || !strings.Contains(err.Error(), "mesh result and the result a pmtu one") {
		t.Errorf("mesh against pmtu: %v", err)
	}
}
