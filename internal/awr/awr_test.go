package awr

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// summarize is every value read from a report but its file name and
// number format, for comparing variants of one report.
func summarize(r *Report) string {
	b, _ := json.Marshal(struct {
		DB, ID, Release, Kind string
		RAC                   *bool
		Begin, End            *Snap
		Instances             []Instance
		Cluster               bool
	}{r.DBName, r.DBID, r.Release, r.Kind, r.RAC, r.BeginSnap, r.EndSnap, r.Instances, r.Cluster})
	return string(b)
}

func v(p *float64) float64 {
	if p == nil {
		return -1
	}
	return *p
}

// TestSections reads each release's fixture and checks every section
// against the values printed in it.
func TestSections(t *testing.T) {
	for _, c := range []struct {
		file, kind, release, db string
		instances               int
		inst                    int // the instance checked, by index
		elapsed, dbTime         float64
		txnPerSec, trafficKB    float64
		crRecv, curRecv         float64
		localPct                float64
		waits                   int
		lost, busyAcqAvg        float64
		pings                   int
		ping8K                  float64 // to the first target that is not the instance
		devDropped              float64
		clients                 int
		remasterOps             float64
		absent                  []string
	}{
		{"11.2.0.3-awrrpt-rac-mtu1500.txt", KindInstance, "11.2.0.3.0", "RACDB", 1, 0, 3601.2, 11124, 412.6, 40509.86, 2.4, 2.9, 97.71,
			13, 1204, 4, 2, 2.85, 1275, 5, 4, nil},
		{"11.2.0.3-awrrpt-rac-mtu9000.txt", KindInstance, "11.2.0.3.0", "RACDB", 1, 0, 3601.2, 7897.2, 417.2, 41021.33, 0.6, 0.7, 97.73,
			11, -1, 2, 2, 0.35, 0, 5, 3, nil},
		{"11.2.0.4-awrrpt-rac.html", KindInstance, "11.2.0.4.0", "RACDB", 1, 0, 10836.6, 42640.2, 44.5, 1541.43, 0.8, 1.1, 99.93,
			8, -1, 2, 2, 1.91, 0, 5, 2, nil},
		{"19c-awrrpt-rac-mtu1500.txt", KindInstance, "19.0.0.0.0", "RACDB", 1, 0, 3601.2, 11124, 412.6, 40509.86, 2.4, 2.9, 97.71,
			13, 1204, 4.4, 2, 2.85, 1275, 5, 4, nil},
		{"12.2-awrrpt-rac.html", KindInstance, "12.2.0.1.0", "RACDB", 1, 0, 3603, 5764.8, 300.3, 20172.5, 1.2104, 1.1872, 98.41,
			6, -1, 0.93536, 2, 0.56, 0, 4, 2, nil},
		{"19c-awrrpt-rac-mtu1500.html", KindInstance, "19.0.0.0.0", "RACDB", 1, 0, 3601.2, 11124, 412.6, 40509.86, 2.4, 2.9, 97.71,
			13, 1204, 4.4, 2, 2.85, 1275, 5, 4, nil},
		{"19c-awrrpt-rac-mtu9000.html", KindInstance, "19.0.0.0.0", "RACDB", 1, 0, 3601.2, 7897.2, 417.2, 41021.33, 0.6, 0.7, 97.73,
			11, -1, 1.69, 2, 0.35, 0, 5, 3, nil},
		{"19c-awrgrpt-rac.txt", KindGlobal, "19.0.0.0.0", "RACDB", 2, 0, 3601.2, 11124, 412.6, 40509.86, 2.4, 2.9, 97.71,
			7, 1204, 4.4, 2, 2.85, 1275, 5, -1, nil},
		{"19c-awrgrpt-rac.html", KindGlobal, "19.0.0.0.0", "RACDB", 2, 0, 3601.2, 11124, 412.6, 40509.86, 2.4, 2.9, 97.71,
			7, 1204, 4.4, 2, 2.85, 1275, 5, -1, nil},
		{"19c-awrgrpt-rac.html", KindGlobal, "19.0.0.0.0", "RACDB", 2, 1, 3601.2, 10315.8, 398.91, 39459.29, 0.9, 1, 97.8,
			6, -1, 2.38, 2, 0.35, 0, 5, -1, nil},
	} {
		t.Run(fmt.Sprintf("%s/%d", c.file, c.inst), func(t *testing.T) {
			r := parseString(t, read(t, c.file), c.file)
			if r.Kind != c.kind || r.Release != c.release || r.DBName != c.db || r.RAC == nil || !*r.RAC || !r.Cluster {
				t.Fatalf("header: kind %s release %s db %s rac %v cluster %v", r.Kind, r.Release, r.DBName, r.RAC, r.Cluster)
			}
			if len(r.Instances) != c.instances {
				t.Fatalf("%d instances, want %d", len(r.Instances), c.instances)
			}
			if r.BeginSnap == nil || r.BeginSnap.ID == 0 || r.EndSnap.ID <= r.BeginSnap.ID {
				t.Errorf("snapshots %+v %+v", r.BeginSnap, r.EndSnap)
			}
			in := r.Instances[c.inst]
			if in.Number == 0 || in.Name == "" {
				t.Errorf("instance %d %q", in.Number, in.Name)
			}
			check := func(what string, got, want float64) {
				t.Helper()
				if got != want {
					t.Errorf("%s = %v, want %v", what, got, want)
				}
			}
			check("elapsed", v(in.ElapsedSeconds), c.elapsed)
			check("DB time", v(in.DBTimeSeconds), c.dbTime)
			var txn, traffic float64 = -1, -1
			if in.Load != nil {
				txn = v(in.Load.TransactionsPerSec)
			}
			if in.GCLoad != nil {
				traffic = v(in.GCLoad.TrafficKBPerSec)
			}
			check("transactions/s", txn, c.txnPerSec)
			check("Estd Interconnect traffic", traffic, c.trafficKB)
			check("cr receive", v(in.GCWorkload.CRReceiveMs), c.crRecv)
			check("current receive", v(in.GCWorkload.CurrentReceiveMs), c.curRecv)
			check("local %", v(in.GCEfficiency.LocalPct), c.localPct)
			check("gc events", float64(len(in.Waits)), float64(c.waits))
			lost := -1.0
			if w := in.Wait("gc cr block lost"); w != nil {
				lost = v(w.Waits)
			}
			check("gc cr block lost", lost, c.lost)
			busy := -1.0
			if w := in.Wait("gc buffer busy acquire"); w != nil {
				busy = v(w.AvgMs)
			}
			check("gc buffer busy acquire avg ms", busy, c.busyAcqAvg)
			check("pings", float64(len(in.Pings)), float64(c.pings))
			for _, p := range in.Pings {
				if p.Target != in.Number {
					check("8K ping", v(p.Avg8KMs), c.ping8K)
					break
				}
			}
			check("device receive dropped", v(in.Devices[0].ReceiveDropped), c.devDropped)
			check("clients", float64(len(in.Clients)), float64(c.clients))
			ops := -1.0
			if in.Remaster != nil {
				ops = v(in.Remaster.Ops)
			}
			check("remaster ops", ops, c.remasterOps)
			if len(r.Notes) != 0 {
				t.Errorf("notes: %q", r.Notes)
			}
		})
	}
}

// TestNoCluster: a single-instance report is read, says it has no
// cluster sections, and shows them absent (nil), never as zero.
func TestNoCluster(t *testing.T) {
	s := read(t, "19c-awrrpt-rac-mtu1500.txt")
	s = strings.Replace(s, "RACDB         1231980070 racdb       PRIMARY          EE      19.0.0.0.0 YES NO",
		"ORCL          1231980070 orcl        PRIMARY          EE      19.0.0.0.0 NO  NO", 1)
	// Keep the header and the Load Profile; a database without RAC
	// has no gc events either.
	s = s[:strings.Index(s, "Top 10 Foreground Events")]
	r := parseString(t, s, "single.txt")
	if r.Cluster || r.RAC == nil || *r.RAC {
		t.Fatalf("cluster %v rac %v", r.Cluster, r.RAC)
	}
	in := r.Instances[0]
	if in.Load == nil || v(in.Load.TransactionsPerSec) != 412.6 {
		t.Errorf("load profile not read: %+v", in.Load)
	}
	if in.GCLoad != nil || in.GCWorkload != nil || in.Pings != nil || in.Devices != nil {
		t.Errorf("cluster sections not absent: %+v", in)
	}
	if len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "no cluster sections") {
		t.Errorf("notes %q", r.Notes)
	}
	b, _ := json.Marshal(in)
	if !strings.Contains(string(b), `"gc_load_profile":null`) || !strings.Contains(string(b), `"interconnect_pings":null`) {
		t.Errorf("absent sections are not null in JSON: %s", b)
	}
	if res := Analyze([]Report{*r}); res.Summary.Status != "OK" {
		t.Errorf("findings on a report without cluster sections: %+v", res.Findings)
	}
	// With its wait table kept, RAC NO still has no lost-block waits to
	// count: absent, not 0.
	whole := parseString(t, strings.Replace(read(t, "19c-awrrpt-rac-mtu1500.txt"), "RACDB         1231980070 racdb       PRIMARY          EE      19.0.0.0.0 YES NO",
		"ORCL          1231980070 orcl        PRIMARY          EE      19.0.0.0.0 NO  NO", 1), "single-waits.txt")
	if in := whole.Instances[0]; in.Waits == nil || in.GCLostBlockWaits != nil {
		t.Errorf("RAC NO: waits %v, lost-block waits %v; want the table and no lost-block figure", in.Waits != nil, in.GCLostBlockWaits)
	}
}

func TestNotAWR(t *testing.T) {
	for name, in := range map[string]string{
		"empty":   "",
		"passwd":  "root:x:0:0:root:/root:/bin/bash\n",
		"html":    "<html><body><h1>Quarterly report</h1><table><tr><td>1</td></tr></table></body></html>",
		"binary":  "\x7fELF\x02\x01\x01\x00\x00\x00",
		"statspk": "STATSPACK report for\n\nDatabase    DB Id    Instance     Inst Num Startup Time    Release     RAC\n",
	} {
		if _, err := Parse(strings.NewReader(in), name); !errors.Is(err, ErrNotAWR) {
			t.Errorf("%s: err %v, want ErrNotAWR", name, err)
		}
	}
}
