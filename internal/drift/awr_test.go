package drift

import (
	"os"
	"strings"
	"testing"

	"github.com/interlink/interlink/internal/awr"
)

// awrResult is interlink awr's result for the fixtures named.
func awrResult(t *testing.T, names ...string) *awr.Result {
	t.Helper()
	var reps []awr.Report
	for _, n := range names {
		f, err := os.Open("../awr/testdata/" + n)
		if err != nil {
			t.Fatal(err)
		}
		r, err := awr.Parse(f, n)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		reps = append(reps, *r)
	}
	return awr.Analyze(reps)
}

// TestAWRSummary: a saved awr result and a saved awr diff say in one line
// what they hold, for the history listing.
func TestAWRSummary(t *testing.T) {
	before := awrResult(t, "11.2.0.3-awrrpt-rac-mtu1500.txt")
	if s := Summary(before); s != "1 report(s) (RACDB 4410-4411), 1 instance(s): CRITICAL: 1 critical, 5 warning, 0 info" {
		t.Errorf("awr: %q", s)
	}
	g := awrResult(t, "19c-awrgrpt-rac.html", "19c-awrrpt-rac-mtu9000.html")
	if s := Summary(g); s != "2 report(s) (RACDB 4410-4411, RACDB 4602-4603), 3 instance(s): CRITICAL: 1 critical, 5 warning, 0 info" {
		t.Errorf("awr, two reports: %q", s)
	}
	after := awrResult(t, "11.2.0.3-awrrpt-rac-mtu9000.txt")
	d := awr.Compare(before.Reports, after.Reports, Confidence)
	if s := Summary(d); s != "1 before, 1 after (one sample each): 9 better, 0 worse" {
		t.Errorf("awr diff: %q", s)
	}
}

// TestAWRCompare: interlink diff of two saved awr results gives the
// metrics awr diff gives, instance by instance: the 8 KiB ping to instance
// 2 went from 2.85 to 0.35 ms (by hand: 0.35 / 2.85 = 0.123), better; the
// verdict from CRITICAL to OK. Back again, both are worse. A result
// against itself has no change.
func TestAWRCompare(t *testing.T) {
	before := awrResult(t, "19c-awrrpt-rac-mtu1500.html")
	after := awrResult(t, "19c-awrrpt-rac-mtu9000.txt")
	d := compare(t, before, after)
	ad := awr.Compare(before.Reports, after.Reports, Confidence)
	if d.Kind != awr.Schema || d.Verdict != Changed || d.Compared != 1+len(ad.Instances[0].Metrics) {
		t.Fatalf("%s %s, %d compared", d.Kind, d.Verdict, d.Compared)
	}
	find := func(d *Diff, what string) *Change {
		for i := range d.Changes {
			if d.Changes[i].What == what {
				return &d.Changes[i]
			}
		}
		t.Fatalf("no change %q in %+v", what, d.Changes)
		return nil
	}
	c := find(d, "awr instance 1 (racdb1) ping_8k_ms to 2")
	if c.Before != "2.85 ms" || c.After != "0.35 ms" || c.Worse || !strings.Contains(c.Detail, "0.123x") || !strings.Contains(c.Detail, "one report per side") {
		t.Errorf("ping: %+v", *c)
	}
	if c := find(d, "awr verdict"); c.Before != "CRITICAL" || c.After != "OK" || c.Worse {
		t.Errorf("verdict: %+v", *c)
	}
	// Every metric awr diff judges better, worse or changed is a change.
	n := 0
	for _, m := range ad.Instances[0].Metrics {
		if m.Verdict == "better" || m.Verdict == "worse" || m.Verdict == "changed" {
			n++
		}
	}
	if len(d.Changes) != n+1 {
		t.Errorf("%d changes, awr diff judged %d metrics", len(d.Changes), n)
	}
	back := compare(t, after, before)
	if back.Verdict != Worse || !find(back, "awr verdict").Worse || !find(back, "awr instance 1 (racdb1) gc_lost_blocks").Worse {
		t.Errorf("back to 1500: %s %+v", back.Verdict, back.Changes)
	}
	if same := compare(t, before, awrResult(t, "19c-awrrpt-rac-mtu1500.txt")); same.Verdict != NoChange || same.Compared < 10 {
		t.Errorf("the same report as text: %s, %d compared, %+v", same.Verdict, same.Compared, same.Changes)
	}
	if _, err := Compare(ad, ad); err == nil || !strings.Contains(err.Error(), "awr diff result is a comparison already") {
		t.Errorf("awr diff against awr diff: %v", err)
	}
	if _, err := Compare(before, load(t, "lab-check.json")); err == nil || !strings.Contains(err.Error(), "baseline is an awr result and the result a check one") {
		t.Errorf("awr against check: %v", err)
	}
}

// TestAWRCompareSeveral: with eight reports per side, a change carries
// the interval and p-value of ab's statistics instead of the one-sample
// note. Three per side cannot reach 95 %: no change, and the metrics are
// listed as not judged and not counted as compared. Of this fixture's 19
// metrics, 3 have one value in every report (gc_remote_cache_pct and the
// two pings to instance 1): those are judged unchanged, though their
// interval is as short of 95 % as the others', so 16 are not judged and
// the compared are those 3 and the verdict.
func TestAWRCompareSeveral(t *testing.T) {
	one := func(name string, k float64) awr.Report {
		r := awrResult(t, name).Reports[0]
		w := *r.Instances[0].GCWorkload
		w.CRReceiveMs = ptr(*w.CRReceiveMs * k)
		r.Instances[0].GCWorkload = &w
		return r
	}
	side := func(name string, ks ...float64) *awr.Result {
		var reps []awr.Report
		for _, k := range ks {
			reps = append(reps, one(name, k))
		}
		return awr.Analyze(reps)
	}
	d := compare(t, side("19c-awrrpt-rac-mtu1500.txt", 0.95, 1, 1.05), side("19c-awrrpt-rac-mtu9000.txt", 1, 1.02, 1.04))
	for _, c := range d.Changes {
		if strings.HasPrefix(c.What, "awr instance") {
			t.Errorf("three reports a side: %+v", c)
		}
	}
	if len(d.NotJudged) != 1 || d.NotJudged[0] != "awr: 16 metric(s) of 3 and 3 reports (too few reports for 95 % (need 4 a side))" || d.Compared != 4 {
		t.Errorf("not judged: %q, %d compared", d.NotJudged, d.Compared)
	}
	d = compare(t, side("19c-awrrpt-rac-mtu1500.txt", 0.95, 0.96, 0.97, 0.98, 1.02, 1.03, 1.04, 1.05),
		side("19c-awrrpt-rac-mtu9000.txt", 1, 1.01, 1.02, 1.03, 1.04, 1.05, 1.06, 1.07))
	for _, c := range d.Changes {
		if c.What != "awr instance 1 (racdb1) gc_cr_receive_ms" {
			continue
		}
		if c.Worse || c.Before != "median 2.4 ms" || !strings.Contains(c.Detail, "95 % CI") || !strings.Contains(c.Detail, "p = ") || strings.Contains(c.Detail, "one report") {
			t.Errorf("%+v", c)
		}
		return
	}
	t.Errorf("no change of gc_cr_receive_ms: %+v", d.Changes)
}

func ptr(v float64) *float64 { return &v }

// TestAWRDifferentDatabases: two saved awr results of different DB ids
// are refused, not compared (their instances would never match).
func TestAWRDifferentDatabases(t *testing.T) {
	a, b := awrResult(t, "19c-public-layout-lost21.html"), awrResult(t, "19c-public-layout-idle.html")
	if _, err := Compare(a, b); err == nil || !strings.Contains(err.Error(), "2 databases: DB id 1971498938") {
		t.Errorf("two DB ids: %v", err)
	}
	if d, err := Compare(a, awrResult(t, "19c-public-layout-lost96.html")); err != nil || d.Compared == 0 {
		t.Errorf("one database: %v", err)
	}
}

// TestAWRFigureOnOneReportOfASide: two saved awr results of two reports
// each, one of the later ones from an idle instance (no receive time, no
// ping to target 2). Those metrics have no statistics and no verdict in
// awr.Compare; the diff lists them as not judged instead of dropping them
// unsaid, and makes no change of them. Of the 20 metrics, 7 more have an
// interval short of 95 % and no verdict: 10 not judged. The other 10 have
// one value in every report that has them (idle figures, zero drops),
// "unchanged" at any level although no interval reached it: they are
// judged, and with the verdict they are the 11 compared. (Counted by the
// interval, as before, 19 were not judged and all 21 compared.)
func TestAWRFigureOnOneReportOfASide(t *testing.T) {
	base := awrResult(t, "19c-public-layout-lost96.html", "19c-public-layout-lost21.html")
	cur := awrResult(t, "19c-public-layout-idle.html", "19c-public-layout-lost96.html")
	cur.Reports[0].DBID = base.Reports[0].DBID // one database, idle this time
	d := compare(t, base, cur)
	for _, c := range d.Changes {
		if strings.HasPrefix(c.What, "awr instance") {
			t.Errorf("two reports a side: %+v", c)
		}
	}
	noStats, unchanged, metrics := 0, 0, 0
	for _, in := range awr.Compare(base.Reports, cur.Reports, Confidence).Instances {
		for _, m := range in.Metrics {
			metrics++
			switch {
			case m.Shift == nil && strings.HasPrefix(m.Verdict, "no verdict"):
				noStats++
			case m.Verdict == "unchanged":
				unchanged++
			}
		}
	}
	want := "awr: 10 metric(s) of 2 and 2 reports (too few reports for 95 % (need 4 a side))"
	if metrics != 20 || noStats != 3 || unchanged != 10 || len(d.NotJudged) != 1 || d.NotJudged[0] != want || d.Compared != 1+unchanged {
		t.Errorf("%d metrics, %d without statistics, %d unchanged; not judged %q, want %q; %d compared, want %d",
			metrics, noStats, unchanged, d.NotJudged, want, d.Compared, 1+unchanged)
	}
}
