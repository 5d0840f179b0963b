package counters

import (
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestParseFixtures(t *testing.T) {
	s, err := TakeFrom("testdata", "testdata/stat")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range [][2]string{{"Ip", "ReasmFails"}, {"Udp", "RcvbufErrors"}, {"TcpExt", "ListenOverflows"}, {"Tcp", "MaxConn"}} {
		if _, ok := s.SNMP.Get(k[0], k[1]); !ok {
			t.Errorf("missing %s.%s", k[0], k[1])
		}
	}
	if v, _ := s.SNMP.Get("Tcp", "MaxConn"); v != -1 {
		t.Errorf("Tcp.MaxConn = %d, want -1", v)
	}
	if _, ok := s.Dev["lo"]; !ok {
		t.Errorf("no lo in dev: %v", s.Dev)
	}
	if s.CPU.Busy() == 0 || s.NCPU < 1 {
		t.Errorf("cpu = %+v ncpu = %d", s.CPU, s.NCPU)
	}
}

func TestParseErrors(t *testing.T) {
	bad := []string{"Ip: A B\n", "Ip: A B\nIp: 1\n", "Ip: A\nUdp: 1\n", "Ip: A\nIp: x\n", "Ip A\nIp 1\n"}
	for _, in := range bad {
		if _, err := ParseSNMP(strings.NewReader(in), nil); err == nil {
			t.Errorf("ParseSNMP(%q): no error", in)
		}
	}
	if _, err := ParseNetDev(strings.NewReader("h|\nh|\n  lo: 1 2 3\n")); err == nil {
		t.Error("ParseNetDev short line: no error")
	}
	if _, _, err := ParseStat(strings.NewReader("intr 1 2\n")); err == nil {
		t.Error("ParseStat without cpu line: no error")
	}
}

func TestSub(t *testing.T) {
	t0 := time.Unix(100, 0)
	a := &Snapshot{Time: t0, SNMP: Table{"Ip": {"ReasmFails": 5}}, Dev: map[string]Dev{"eth0": {RxPackets: 10}}, CPU: CPU{SoftIRQ: 7}}
	b := &Snapshot{Time: t0.Add(2 * time.Second), SNMP: Table{"Ip": {"ReasmFails": 9, "New": 3}}, Dev: map[string]Dev{"eth0": {RxPackets: 4}}, CPU: CPU{SoftIRQ: 10}}
	d := Sub(a, b)
	if _, ok := d.SNMP.Get("Ip", "New"); ok {
		t.Errorf("a counter the first snapshot lacks has a delta: %v", d.SNMP)
	}
	if d.Interval != 2*time.Second || d.SNMP["Ip"]["ReasmFails"] != 4 ||
		d.Dev["eth0"].RxPackets != 0 || d.CPU.SoftIRQ != 3 {
		t.Errorf("Sub = %+v", d)
	}
}

// FuzzParseSNMP holds the parsers to invariants: a table parsed without
// error, written back in the kernel's format and parsed again, is the same
// table; a /proc/net/dev parsed without error names every interface.
func FuzzParseSNMP(f *testing.F) {
	f.Add("Ip: A B\nIp: 1 2\nUdp: X\nUdp: 3\n")
	f.Add("TcpExt: ListenOverflows ListenDrops\nTcpExt: 18446744073709551615 7\n")
	f.Add("Inter-|   Receive\n face |bytes\n  eth0: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n")
	f.Fuzz(func(t *testing.T, s string) {
		tab, err := ParseSNMP(strings.NewReader(s), nil)
		if err == nil {
			again, err := ParseSNMP(strings.NewReader(formatSNMP(tab)), nil)
			if err != nil {
				t.Fatalf("re-parse of %q: %v", formatSNMP(tab), err)
			}
			if !reflect.DeepEqual(tab, again) {
				t.Fatalf("round trip changed the table:\n%v\n%v", tab, again)
			}
		}
		if devs, err := ParseNetDev(strings.NewReader(s)); err == nil {
			for name := range devs {
				if name == "" || strings.ContainsAny(name, " \t\n:") {
					t.Fatalf("interface name %q", name)
				}
			}
		}
		ParseStat(strings.NewReader(s))
	})
}

// formatSNMP writes t as /proc/net/snmp does: a header line and a values
// line per group.
func formatSNMP(t Table) string {
	var b strings.Builder
	groups := make([]string, 0, len(t))
	for g := range t {
		groups = append(groups, g)
	}
	sort.Strings(groups)
	for _, g := range groups {
		fields := make([]string, 0, len(t[g]))
		for f := range t[g] {
			fields = append(fields, f)
		}
		sort.Strings(fields)
		b.WriteString(g + ":")
		for _, f := range fields {
			b.WriteString(" " + f)
		}
		b.WriteString("\n" + g + ":")
		for _, f := range fields {
			b.WriteString(" " + strconv.FormatInt(t[g][f], 10))
		}
		b.WriteString("\n")
	}
	return b.String()
}

func TestParseProcStatCPU(t *testing.T) {
	// A command name with a space and a parenthesis; utime 1200, stime 34.
	line := "4242 (mari adbd) x) S 1 4242 4242 0 -1 4194624 5000 0 0 0 1200 34 0 0 20 0 40 0 100 1000 200 18446744073709551615\n"
	d, err := ParseProcStatCPU([]byte(line))
	if err != nil || d != 12340*time.Millisecond {
		t.Errorf("got %v, %v; want 12.34s", d, err)
	}
	for _, bad := range []string{"4242 mariadbd S 1", "1 (x) S 1 2 3", "1 (x) S 1 1 1 0 -1 4194624 5000 0 0 0 abc 34 0"} {
		if _, err := ParseProcStatCPU([]byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
