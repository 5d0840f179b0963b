package db

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/counters"
)

func i64(v int64) *int64 { return &v }

func TestSumNodes(t *testing.T) {
	nodes := []NodeCost{
		{Node: "db1", Interfaces: []IfaceCost{{Name: "eth0", RxPackets: 10, TxPackets: 20, RxBytes: 1000, TxBytes: 2000}, {Name: "eth1", RxPackets: 5, TxPackets: 5, RxBytes: 500, TxBytes: 700}},
			FragCreates: 2, TCPOutSegs: 40, TCPRetransSegs: 1, ProcessCPU: i64(3e6)},
		{Node: "db2", Interfaces: []IfaceCost{{Name: "eth1", RxPackets: 6, TxPackets: 4, RxBytes: 700, TxBytes: 500}}, TCPOutSegs: 20, ProcessCPU: i64(1e6)},
		{Node: "gone", Error: "namespace gone"},
	}
	l := sumNodes(nodes, 10)
	e1 := l.Interfaces["eth1"]
	if len(l.Interfaces) != 2 || e1.RxPackets != 11 || e1.TxPackets != 9 || e1.PacketsPerTx != 2 || e1.BytesPerTx != 240 {
		t.Errorf("interfaces %+v", l.Interfaces)
	}
	if l.FragCreates != 2 || l.TCPOutSegs != 60 || l.TCPOutSegsPerTx != 6 || l.TCPRetransSegs != 1 || *l.ProcessCPU != 4e6 || *l.ProcessCPUPerTx != 4e5 ||
		l.Nodes != 2 || !reflect.DeepEqual(l.LeftOut, []string{"gone"}) {
		t.Errorf("sums %+v", l)
	}
	if z := sumNodes(nodes, 0); z.TCPOutSegsPerTx != 0 || z.Interfaces["eth0"].PacketsPerTx != 0 {
		t.Errorf("no transactions: %+v", z)
	}
}

// TestCPUDelta: a process alive at both ends counts its difference, one
// started during the run all of its time, one that ended nothing.
func TestCPUDelta(t *testing.T) {
	before := map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 3: time.Second}
	after := map[int]time.Duration{1: 3 * time.Second, 3: 1500 * time.Millisecond, 4: 200 * time.Millisecond}
	if d := cpuDelta(before, after); d != 2700*time.Millisecond {
		t.Errorf("cpuDelta = %v, want 2.7s", d)
	}
}

// TestNodeReadFailures: a lab node whose counters fail at the start or
// the end is named and left out of the sums (not counted from the end's
// read alone), and one whose process CPU fails has its packet counts but
// no CPU figure (not 0), which makes the lab's CPU sum absent: a sum
// without it would read as a lower cost per transaction.
func TestNodeReadFailures(t *testing.T) {
	snap := func() (*counters.Snapshot, error) { return &counters.Snapshot{}, nil }
	cpuCalls := map[string]int{}
	cpuFailsAt := func(name string, call int) func() (map[int]time.Duration, error) {
		return func() (map[int]time.Duration, error) {
			cpuCalls[name]++
			if cpuCalls[name] == call {
				return nil, errors.New("no such namespace")
			}
			return map[int]time.Duration{1: time.Duration(cpuCalls[name]) * time.Second}, nil
		}
	}
	takes := 0
	failsAtEnd := func() (*counters.Snapshot, error) {
		if takes++; takes == 2 {
			return nil, errors.New("setns: bad file descriptor")
		}
		return &counters.Snapshot{}, nil
	}
	m := startNodes([]NodeProbe{
		{Name: "ok", Take: snap, CPU: cpuFailsAt("ok", 0)},
		{Name: "cpu-start", Take: snap, CPU: cpuFailsAt("cpu-start", 1)},
		{Name: "cpu-end", Take: snap, CPU: cpuFailsAt("cpu-end", 2)},
		{Name: "counters-end", Take: failsAtEnd, CPU: cpuFailsAt("counters-end", 0)},
	})
	nodes := m.stop(10)
	byName := map[string]NodeCost{}
	for _, n := range nodes {
		byName[n.Node] = n
	}
	if c := byName["ok"]; c.ProcessCPU == nil || *c.ProcessCPU != int64(time.Second) || c.CPUError != "" || c.Error != "" {
		t.Errorf("ok: %+v", c)
	}
	for name, want := range map[string]string{"cpu-start": "not read at the start", "cpu-end": "not read at the end"} {
		c := byName[name]
		if c.ProcessCPU != nil || c.ProcessCPUPerTx != nil || !strings.Contains(c.CPUError, want) || c.Error != "" {
			t.Errorf("%s: cpu %v, cpu error %q, error %q; want no CPU figure, %q, counters kept", name, c.ProcessCPU, c.CPUError, c.Error, want)
		}
	}
	if c := byName["counters-end"]; !strings.Contains(c.Error, "left out of the sums") {
		t.Errorf("counters-end: error %q", c.Error)
	}
	l := sumNodes(nodes, 10)
	if l.Nodes != 3 || !reflect.DeepEqual(l.LeftOut, []string{"counters-end"}) || l.ProcessCPU != nil || l.ProcessCPUPerTx != nil {
		t.Errorf("sums: %d nodes, left out %v, cpu %v; want 3, [counters-end], no CPU sum", l.Nodes, l.LeftOut, l.ProcessCPU)
	}
	var b bytes.Buffer
	writeNodes(&b, nodes, 10)
	writeLab(&b, l)
	for _, want := range []string{"node cpu-end ip/tcp:", "processes' cpu n/a (not read at the end: no such namespace)",
		"the nodes' processes' cpu n/a (a node's was not read)", "left out, counters not read: counters-end"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, b.String())
		}
	}
}
