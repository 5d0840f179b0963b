package counters

import (
	"os"
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
	if d.Interval != 2*time.Second || d.SNMP["Ip"]["ReasmFails"] != 4 || d.SNMP["Ip"]["New"] != 0 ||
		d.Dev["eth0"].RxPackets != 0 || d.CPU.SoftIRQ != 3 {
		t.Errorf("Sub = %+v", d)
	}
}

func TestTakeLive(t *testing.T) {
	if _, err := os.Stat("/proc/thread-self/net/snmp"); err != nil {
		t.Skip("no procfs: not a Linux host")
	}
	if _, err := Take(); err != nil {
		t.Fatal(err)
	}
}

func FuzzParseSNMP(f *testing.F) {
	f.Add("Ip: A B\nIp: 1 2\nUdp: X\nUdp: 3\n")
	f.Fuzz(func(t *testing.T, s string) {
		ParseSNMP(strings.NewReader(s), nil)
		ParseNetDev(strings.NewReader(s))
		ParseStat(strings.NewReader(s))
	})
}
