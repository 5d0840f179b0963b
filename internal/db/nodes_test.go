package db

import (
	"testing"
	"time"
)

func TestSumNodes(t *testing.T) {
	nodes := []NodeCost{
		{Node: "db1", Interfaces: []IfaceCost{{Name: "eth0", RxPackets: 10, TxPackets: 20, RxBytes: 1000, TxBytes: 2000}, {Name: "eth1", RxPackets: 5, TxPackets: 5, RxBytes: 500, TxBytes: 700}},
			FragCreates: 2, TCPOutSegs: 40, TCPRetransSegs: 1, ProcessCPU: 3e6},
		{Node: "db2", Interfaces: []IfaceCost{{Name: "eth1", RxPackets: 6, TxPackets: 4, RxBytes: 700, TxBytes: 500}}, TCPOutSegs: 20, ProcessCPU: 1e6},
		{Node: "gone", Error: "namespace gone"},
	}
	l := sumNodes(nodes, 10)
	e1 := l.Interfaces["eth1"]
	if len(l.Interfaces) != 2 || e1.RxPackets != 11 || e1.TxPackets != 9 || e1.PacketsPerTx != 2 || e1.BytesPerTx != 240 {
		t.Errorf("interfaces %+v", l.Interfaces)
	}
	if l.FragCreates != 2 || l.TCPOutSegs != 60 || l.TCPOutSegsPerTx != 6 || l.TCPRetransSegs != 1 || l.ProcessCPU != 4e6 || l.ProcessCPUPerTx != 4e5 {
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
