package awr

import (
	"math"
	"strings"
	"testing"
)

// The layouts of 12.2 and later: times in microseconds, awrgrpt's 19c
// tables, and the same report in its two formats.

// TestFormatsAgree: each report written as HTML and as text (the
// fixtures hold the same figures) reads to the same values.
func TestFormatsAgree(t *testing.T) {
	for _, name := range []string{"19c-awrrpt-rac-mtu1500", "19c-awrrpt-rac-mtu9000", "19c-awrgrpt-rac"} {
		h := parseString(t, read(t, name+".html"), name)
		x := parseString(t, read(t, name+".txt"), name)
		if h.Format != "html" || x.Format != "text" {
			t.Fatalf("%s: formats %s and %s", name, h.Format, x.Format)
		}
		if a, b := summarize(h), summarize(x); a != b {
			t.Errorf("%s: HTML and text differ:\nhtml %s\ntext %s", name, a, b)
		}
	}
}

// TestGlobalAgreesWithInstance: the global report and instance 1's own
// report of the same interval give instance 1 the same figures. awrgrpt
// prints no Estd Interconnect traffic; computed from its per-second
// blocks and messages by Oracle's formula it equals the figure awrrpt
// prints (40,509.86 KB/s).
func TestGlobalAgreesWithInstance(t *testing.T) {
	g := parseString(t, read(t, "19c-awrgrpt-rac.html"), "grpt").Instances[0]
	r := parseString(t, read(t, "19c-awrrpt-rac-mtu1500.html"), "rpt").Instances[0]
	for _, c := range []struct {
		what string
		a, b *float64
	}{
		{"transactions/s", g.Load.TransactionsPerSec, r.Load.TransactionsPerSec},
		{"executes/s", g.Load.ExecutesPerSec, r.Load.ExecutesPerSec},
		{"user calls/s", g.Load.UserCallsPerSec, r.Load.UserCallsPerSec},
		{"logical reads/s", g.Load.LogicalReadsPerSec, r.Load.LogicalReadsPerSec},
		{"gc blocks received/s", g.GCLoad.BlocksReceivedPerSec, r.GCLoad.BlocksReceivedPerSec},
		{"gc blocks served/s", g.GCLoad.BlocksServedPerSec, r.GCLoad.BlocksServedPerSec},
		{"GCS/GES messages received/s", g.GCLoad.MessagesReceivedPerSec, r.GCLoad.MessagesReceivedPerSec},
		{"GCS/GES messages sent/s", g.GCLoad.MessagesSentPerSec, r.GCLoad.MessagesSentPerSec},
		{"Estd Interconnect traffic", g.GCLoad.TrafficKBPerSec, r.GCLoad.TrafficKBPerSec},
		{"remote cache %", g.GCEfficiency.RemotePct, r.GCEfficiency.RemotePct},
		{"cr receive ms", g.GCWorkload.CRReceiveMs, r.GCWorkload.CRReceiveMs},
		{"current receive ms", g.GCWorkload.CurrentReceiveMs, r.GCWorkload.CurrentReceiveMs},
		{"8K ping to 2", g.Pings[1].Avg8KMs, r.Pings[1].Avg8KMs},
		{"500B ping to 2", g.Pings[1].Avg500BMs, r.Pings[1].Avg500BMs},
		{"device receive dropped", g.Devices[0].ReceiveDropped, r.Devices[0].ReceiveDropped},
		{"device send MB/s", g.Devices[0].SendMBPerSec, r.Devices[0].SendMBPerSec},
		{"gc cr block lost waits", g.Wait("gc cr block lost").Waits, r.Wait("gc cr block lost").Waits},
	} {
		if c.a == nil || c.b == nil || *c.a != *c.b {
			t.Errorf("%s: global %v, instance %v", c.what, deref(c.a), deref(c.b))
		}
	}
	if !g.GCLoad.TrafficComputed || r.GCLoad.TrafficComputed {
		t.Errorf("traffic computed: global %v, instance %v", g.GCLoad.TrafficComputed, r.GCLoad.TrafficComputed)
	}
	// DB time per second: awrgrpt's average active sessions (3.09), awrrpt
	// prints one decimal (3.1).
	if math.Abs(*g.Load.DBTimePerSec-*r.Load.DBTimePerSec) > 0.05 {
		t.Errorf("DB time/s: global %v, instance %v", *g.Load.DBTimePerSec, *r.Load.DBTimePerSec)
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestGlobalLoad: awrgrpt's per-instance load. Instance 2 by hand:
// 398.91 transactions/s; redo 1,199.47 KB/s = 1,228,257 bytes/s; DB CPU
// 4,104.62 s over 3,601.2 s = 1.140 s/s; blocks received 1,080.22 +
// 1,259.61 = 2,339.83/s; messages sent 3,950.12 + 975.33 = 4,925.45/s;
// traffic ((2,339.83 + 2,351.27) x 8192 + (4,958.65 + 4,925.45) x 200) /
// 1024 = 39,459.29 KB/s. Instance 1 lost 1,514 blocks and 37 cr
// requests failed in the interval.
func TestGlobalLoad(t *testing.T) {
	for _, name := range []string{"19c-awrgrpt-rac.html", "19c-awrgrpt-rac.txt"} {
		r := parseString(t, read(t, name), name)
		if r.BeginSnap == nil || r.BeginSnap.ID != 4410 || r.EndSnap.ID != 4411 || r.BeginSnap.Time != "14-Mar-24 10:00" || r.EndSnap.Time != "14-Mar-24 11:00" {
			t.Errorf("%s: snapshots %+v %+v", name, r.BeginSnap, r.EndSnap)
		}
		i1, i2 := r.Instances[0], r.Instances[1]
		for _, c := range []struct {
			what      string
			got, want float64
		}{
			{"transactions/s", v(i2.Load.TransactionsPerSec), 398.91},
			{"redo bytes/s", v(i2.Load.RedoBytesPerSec), 1228257},
			{"DB CPU/s", v(i2.Load.DBCPUPerSec), 1.14},
			{"DB time/s", v(i2.Load.DBTimePerSec), 2.86},
			{"blocks received/s", v(i2.GCLoad.BlocksReceivedPerSec), 2339.83},
			{"messages sent/s", v(i2.GCLoad.MessagesSentPerSec), 4925.45},
			{"traffic KB/s", v(i2.GCLoad.TrafficKBPerSec), 39459.29},
			{"lost blocks 1", v(i1.GCLoad.BlocksLost), 1514},
			{"cr failures 1", v(i1.GCLoad.CRFailures), 37},
			{"lost blocks 2", v(i2.GCLoad.BlocksLost), 0},
			{"remote cache % 2", v(i2.GCEfficiency.RemotePct), 1.1},
			{"cr flush ms 2", v(i2.GCWorkload.CRFlushMs), 1.8},
			{"cr log flushes % 2", v(i2.GCWorkload.CRFlushesPct), 1.7},
			{"ping 8K 2 to 1", v(i2.Pings[0].Avg8KMs), 0.35},
		} {
			if c.got != c.want {
				t.Errorf("%s: %s = %v, want %v", name, c.what, c.got, c.want)
			}
		}
		if len(i1.Clients) != 5 || i1.Clients[0].Client != "Global Cache" || v(i1.Clients[0].SendMBPerSec) != 37.71 || v(i1.Clients[2].ReceiveMBPerSec) != 1.92 {
			t.Errorf("%s: clients %+v", name, i1.Clients)
		}
		for _, s := range i2.Sections {
			if s.Status != "present" {
				t.Errorf("%s: instance 2: %s %s", name, s.Name, s.Status)
			}
		}
	}
}

// TestGlobalInterconnectOnly: awrgrpt's Interconnect Device Statistics
// lists every interface of a host; the public eth0 (212 drops) and lo are
// not the interconnect, which Cluster Interconnect names. Without that
// table every interface is kept, and the report says so.
func TestGlobalInterconnectOnly(t *testing.T) {
	s := read(t, "19c-awrgrpt-rac.txt")
	r := parseString(t, s, "grpt")
	for _, in := range r.Instances {
		if len(in.Devices) != 1 || in.Devices[0].Name != "eth1" || in.Devices[0].Public != "NO" || in.Devices[0].Source != "cluster_interconnects parameter" {
			t.Errorf("instance %d: devices %+v", in.Number, in.Devices)
		}
	}
	for _, f := range Analyze([]Report{*r}).Findings {
		if f.Rule == RuleDevice && !strings.Contains(f.Message, "eth1") {
			t.Errorf("finding on an interface that is not the interconnect: %s", f.Message)
		}
	}
	a := strings.Index(s, "Cluster Interconnect\n")
	e := strings.Index(s, "Ping Statistics\n")
	r = parseString(t, s[:a]+s[e:], "no-ic")
	if n := len(r.Instances[0].Devices); n != 3 {
		t.Errorf("without Cluster Interconnect: %d devices, want 3", n)
	}
	if len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "every interface") {
		t.Errorf("notes %q", r.Notes)
	}
}

// TestMicroseconds: 12.2 and later print the workload times with "(us)"
// and the ping table's notes say its averages are "given in
// microseconds"; both are read into milliseconds. The same ping table
// without that note is read as printed (as 11.2's milliseconds).
func TestMicroseconds(t *testing.T) {
	s := read(t, "12.2-awrrpt-rac.html")
	in := parseString(t, s, "12.2").Instances[0]
	if v(in.GCWorkload.CRReceiveMs) != 1.2104 || v(in.GCWorkload.EnqueueGetMs) != 0.2202 || v(in.GCWorkload.MessageKSXPQueueMs) != 0.5142 {
		t.Errorf("workload %+v", *in.GCWorkload)
	}
	p := in.Pings[0]
	if p.Target != 1 || v(p.Avg500BMs) != 0.29 || v(p.Avg8KMs) != 0.56 || v(p.Stddev8KMs) != 0.11 {
		t.Errorf("ping %+v", p)
	}
	noNote := strings.Replace(s, "is given in microseconds", "is given in this table", 1)
	if p := parseString(t, noNote, "12.2").Instances[0].Pings[0]; v(p.Avg8KMs) != 560 {
		t.Errorf("without the note: 8K ping %v, want 560 as printed", v(p.Avg8KMs))
	}
}

// TestGlobalBefore12_2: the columns of awrgrpt before 12.2 as reconstructed
// (testdata/README.md): Ping Statistics with a wait time per size and
// averages in milliseconds, workload characteristics in milliseconds
// with send times.
func TestGlobalBefore12_2(t *testing.T) {
	s := `WORKLOAD REPOSITORY REPORT (RAC)

Global Cache and Enqueue Workload Characteristics
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
  I#  GE Get    Receive      Build       Send      Flush        Receive        Pin       Send      Flush
---- ------- ---------- ---------- ---------- ---------- ---------- ---------- ---------- ----------
   1     0.4        2.4        0.0        0.1        1.9            2.9        0.1        0.2        2.2

Ping Statistics
~~~~~~~~~~~~~~~
  I# Target     Count  Wait(s)  Avg(ms)  Std Dev(ms)       Count  Wait(s)  Avg(ms)  Std Dev(ms)
---- ------ --------- -------- -------- ------------   --------- -------- -------- ------------
   1      1       720     0.09     0.12         0.03         720     0.11     0.15         0.04
          2       720     0.22     0.31         0.10         720     2.05     2.85         1.90
`
	r := parseString(t, s, "11.2")
	in := r.Instances[0]
	w := in.GCWorkload
	if v(w.CRReceiveMs) != 2.4 || v(w.CRSendMs) != 0.1 || v(w.CurrentSendMs) != 0.2 || v(w.CurrentFlushMs) != 2.2 || w.CRFlushesPct != nil {
		t.Errorf("workload %+v", *w)
	}
	if len(in.Pings) != 2 || v(in.Pings[1].Avg8KMs) != 2.85 || v(in.Pings[1].Stddev8KMs) != 1.9 || v(in.Pings[1].Count500B) != 720 {
		t.Errorf("pings %+v", in.Pings)
	}
	if len(r.Notes) != 0 {
		t.Errorf("notes %q", r.Notes)
	}
}

// TestLostFromSysStat: a global report whose top events leave out the
// lost-block waits still shows the lost blocks its SysStat counts.
func TestLostFromSysStat(t *testing.T) {
	s := read(t, "19c-awrgrpt-rac.txt")
	var keep []string
	for _, l := range strings.Split(s, "\n") {
		if !strings.Contains(l, "block lost") {
			keep = append(keep, l)
		}
	}
	r := parseString(t, strings.Join(keep, "\n"), "grpt")
	if r.Instances[0].Wait("gc cr block lost") != nil {
		t.Fatal("lost waits still there")
	}
	for _, f := range Analyze([]Report{*r}).Findings {
		if f.Rule == RuleLost {
			if !strings.Contains(f.Message, "1514 blocks lost") || f.Severity.String() != "warning" {
				t.Errorf("finding %s %s", f.Severity, f.Message)
			}
			return
		}
	}
	t.Error("no lost-block finding")
}
