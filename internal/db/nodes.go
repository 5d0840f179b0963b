package db

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/interlink/interlink/internal/counters"
	"github.com/interlink/interlink/internal/units"
)

// NodeProbe reads the counters of a node the run can see besides this one
// (a lab node: Take runs inside its namespace). CPU in its snapshot is
// ignored: it is the host's, already in Result.Local.
type NodeProbe struct {
	Name string
	Take func() (*counters.Snapshot, error)
	// CPU, when not nil, returns the CPU time of each process in the node
	// by PID (lab.Node.ProcessCPU).
	CPU func() (map[int]time.Duration, error)
}

// NodeCost is the network cost on one node during the run, from the
// node's own /proc/net: each interface (loopback left out) and the node's
// IP fragment and TCP counters. On the lab's database nodes the
// interconnect's interface carries the replication stream.
type NodeCost struct {
	Node           string      `json:"node"`
	Interfaces     []IfaceCost `json:"interfaces"`
	FragCreates    int64       `json:"ip_frag_creates"`
	ReasmReqds     int64       `json:"ip_reasm_reqds"`
	ReasmFails     int64       `json:"ip_reasm_fails"`
	TCPOutSegs     int64       `json:"tcp_out_segs"`
	TCPRetransSegs int64       `json:"tcp_retrans_segs"`
	// ProcessCPU is the CPU time (user + system) the node's processes
	// spent during the run (those alive at its end), in all and per
	// committed transaction; absent without NodeProbe.CPU or when it
	// failed at the start or the end (CPUError says why), never 0.
	ProcessCPU      *int64   `json:"process_cpu_ns,omitempty"`
	ProcessCPUPerTx *float64 `json:"process_cpu_ns_per_tx,omitempty"`
	CPUError        string   `json:"process_cpu_error,omitempty"`
	// Error is why the node's counters could not be read at the start or
	// the end: the node is then left out of LabCost's sums.
	Error string `json:"error,omitempty"`
}

// LabCost adds up the lab's nodes: each interface name over every node
// (a packet between two nodes counts at both ends), IP fragments, TCP
// segments sent and retransmitted, and the nodes' processes' CPU.
//
// On veth, TCP's segmentation offload hands a link 64 KiB super-packets
// whatever the MTU, and the interface counts each as one packet; TCP
// counts the MSS-sized segments each becomes (what a real NIC puts on the
// wire), so TCPOutSegs shows what a smaller MTU costs where the
// interfaces' packet counts do not.
type LabCost struct {
	Interfaces      map[string]IfaceCost `json:"interfaces"`
	FragCreates     int64                `json:"ip_frag_creates"`
	ReasmReqds      int64                `json:"ip_reasm_reqds"`
	ReasmFails      int64                `json:"ip_reasm_fails"`
	TCPOutSegs      int64                `json:"tcp_out_segs"`
	TCPOutSegsPerTx float64              `json:"tcp_out_segs_per_tx"`
	TCPRetransSegs  int64                `json:"tcp_retrans_segs"`
	// ProcessCPU is absent when a node summed has no CPU figure: a sum
	// without it would read as a lower cost.
	ProcessCPU      *int64   `json:"process_cpu_ns,omitempty"`
	ProcessCPUPerTx *float64 `json:"process_cpu_ns_per_tx,omitempty"`
	// Nodes is how many nodes the sums hold; LeftOut names those whose
	// counters could not be read (NodeCost.Error), left out of the sums.
	Nodes   int      `json:"nodes"`
	LeftOut []string `json:"left_out,omitempty"`
}

// IfaceCost is one interface's traffic during the run.
type IfaceCost struct {
	Name      string `json:"name"`
	RxBytes   uint64 `json:"rx_bytes"`
	TxBytes   uint64 `json:"tx_bytes"`
	RxPackets uint64 `json:"rx_packets"`
	TxPackets uint64 `json:"tx_packets"`
	RxDropped uint64 `json:"rx_dropped"`
	TxDropped uint64 `json:"tx_dropped"`
	// Per committed transaction, rx + tx (0 when none committed).
	PacketsPerTx float64 `json:"packets_per_tx"`
	BytesPerTx   float64 `json:"bytes_per_tx"`
}

// nodeMeter holds each probe's snapshot from the start of the run, and
// the errors of the reads that failed then (counters, CPU apart: a node
// whose CPU cannot be read still has its packet counts).
type nodeMeter struct {
	probes  []NodeProbe
	before  []*counters.Snapshot
	cpu     []map[int]time.Duration
	errs    []error
	cpuErrs []error
}

func startNodes(probes []NodeProbe) *nodeMeter {
	n := len(probes)
	m := &nodeMeter{probes: probes, before: make([]*counters.Snapshot, n), errs: make([]error, n),
		cpu: make([]map[int]time.Duration, n), cpuErrs: make([]error, n)}
	for i, p := range probes {
		m.before[i], m.errs[i] = p.Take()
		if p.CPU != nil {
			m.cpu[i], m.cpuErrs[i] = p.CPU()
		}
	}
	return m
}

// cpuDelta is what the processes alive at the end spent since the start
// (all of it for those started since).
func cpuDelta(before, after map[int]time.Duration) time.Duration {
	var d time.Duration
	for pid, t := range after {
		if t0, ok := before[pid]; ok && t0 <= t {
			d += t - t0
		} else if !ok {
			d += t
		}
	}
	return d
}

// stop returns each node's cost since startNodes; a node whose counters
// could not be read carries the error.
func (m *nodeMeter) stop(tx int64) []NodeCost {
	out := []NodeCost{}
	for i, p := range m.probes {
		c := NodeCost{Node: p.Name, Interfaces: []IfaceCost{}}
		after, err := p.Take()
		if err == nil {
			err = m.errs[i]
		}
		if err != nil {
			c.Error = "counters not read, left out of the sums: " + cleanErr(err)
			out = append(out, c)
			continue
		}
		d := counters.Sub(m.before[i], after)
		names := make([]string, 0, len(d.Dev))
		for n := range d.Dev {
			if n != "lo" {
				names = append(names, n)
			}
		}
		sort.Strings(names)
		for _, n := range names {
			v := d.Dev[n]
			f := IfaceCost{Name: n, RxBytes: v.RxBytes, TxBytes: v.TxBytes,
				RxPackets: v.RxPackets, TxPackets: v.TxPackets, RxDropped: v.RxDropped, TxDropped: v.TxDropped}
			if tx > 0 {
				f.PacketsPerTx = float64(f.RxPackets+f.TxPackets) / float64(tx)
				f.BytesPerTx = float64(f.RxBytes+f.TxBytes) / float64(tx)
			}
			c.Interfaces = append(c.Interfaces, f)
		}
		g := func(group, field string) int64 { v, _ := d.SNMP.Get(group, field); return v }
		c.FragCreates, c.ReasmReqds, c.ReasmFails = g("Ip", "FragCreates"), g("Ip", "ReasmReqds"), g("Ip", "ReasmFails")
		c.TCPOutSegs, c.TCPRetransSegs = g("Tcp", "OutSegs"), g("Tcp", "RetransSegs")
		m.nodeCPU(i, &c, tx)
		out = append(out, c)
	}
	return out
}

// nodeCPU sets node i's process CPU since the start, or CPUError when
// it was not read at the start or cannot be now (the figure is then
// absent: a CPU time from the end alone, or 0, would be wrong).
func (m *nodeMeter) nodeCPU(i int, c *NodeCost, tx int64) {
	p := m.probes[i]
	if p.CPU == nil {
		return
	}
	if err := m.cpuErrs[i]; err != nil {
		c.CPUError = "not read at the start: " + cleanErr(err)
		return
	}
	cpu, err := p.CPU()
	if err != nil {
		c.CPUError = "not read at the end: " + cleanErr(err)
		return
	}
	ns := cpuDelta(m.cpu[i], cpu).Nanoseconds()
	c.ProcessCPU = &ns
	if tx > 0 {
		c.ProcessCPUPerTx = f64(float64(ns) / float64(tx))
	}
}

// sumNodes adds up the lab's nodes that were measured; a node whose
// counters were not read is named in LeftOut. The CPU sum is absent
// unless every node summed has its CPU figure.
func sumNodes(nodes []NodeCost, tx int64) *LabCost {
	l := &LabCost{Interfaces: map[string]IfaceCost{}}
	cpu, cpuAll := int64(0), true
	for _, n := range nodes {
		if n.Error != "" {
			l.LeftOut = append(l.LeftOut, n.Node)
			continue
		}
		l.Nodes++
		if n.ProcessCPU == nil {
			cpuAll = false
		} else {
			cpu += *n.ProcessCPU
		}
		for _, f := range n.Interfaces {
			s := l.Interfaces[f.Name]
			s.Name = f.Name
			s.RxBytes, s.TxBytes, s.RxPackets, s.TxPackets = s.RxBytes+f.RxBytes, s.TxBytes+f.TxBytes, s.RxPackets+f.RxPackets, s.TxPackets+f.TxPackets
			s.RxDropped, s.TxDropped = s.RxDropped+f.RxDropped, s.TxDropped+f.TxDropped
			l.Interfaces[f.Name] = s
		}
		l.FragCreates += n.FragCreates
		l.ReasmReqds += n.ReasmReqds
		l.ReasmFails += n.ReasmFails
		l.TCPOutSegs += n.TCPOutSegs
		l.TCPRetransSegs += n.TCPRetransSegs
	}
	if cpuAll && l.Nodes > 0 {
		l.ProcessCPU = &cpu
		if tx > 0 {
			l.ProcessCPUPerTx = f64(float64(cpu) / float64(tx))
		}
	}
	if tx > 0 {
		for name, s := range l.Interfaces {
			s.PacketsPerTx = float64(s.RxPackets+s.TxPackets) / float64(tx)
			s.BytesPerTx = float64(s.RxBytes+s.TxBytes) / float64(tx)
			l.Interfaces[name] = s
		}
		l.TCPOutSegsPerTx = float64(l.TCPOutSegs) / float64(tx)
	}
	return l
}

// writeNodes prints one line per interface of each node that moved bytes.
func writeNodes(w io.Writer, nodes []NodeCost, tx int64) {
	for _, n := range nodes {
		if n.Error != "" {
			fmt.Fprintf(w, "  node %s: not measured: %s\n", n.Node, n.Error)
			continue
		}
		for _, f := range n.Interfaces {
			if f.RxBytes+f.TxBytes == 0 {
				continue
			}
			per := ""
			if tx > 0 {
				per = fmt.Sprintf(" = %.1f packets, %s per transaction", f.PacketsPerTx, units.FormatBytes(f.BytesPerTx))
			}
			fmt.Fprintf(w, "  node %s %s: rx %s in %d packets, tx %s in %d packets%s; dropped %d\n", n.Node, f.Name,
				units.FormatBytes(float64(f.RxBytes)), f.RxPackets, units.FormatBytes(float64(f.TxBytes)), f.TxPackets, per, f.RxDropped+f.TxDropped)
		}
		fmt.Fprintf(w, "  node %s ip/tcp: %d fragments created, %d reassemblies (%d failed); %d segments out, %d retransmitted", n.Node,
			n.FragCreates, n.ReasmReqds, n.ReasmFails, n.TCPOutSegs, n.TCPRetransSegs)
		switch {
		case n.CPUError != "":
			fmt.Fprintf(w, "; processes' cpu n/a (%s)", n.CPUError)
		case n.ProcessCPU != nil:
			fmt.Fprintf(w, "; processes' cpu %s", msec(*n.ProcessCPU))
			if n.ProcessCPUPerTx != nil {
				fmt.Fprintf(w, " (%.1f us per transaction)", *n.ProcessCPUPerTx/1e3)
			}
		}
		fmt.Fprintln(w)
	}
}

// writeLab prints the lab's sums: per interface name, then fragments,
// retransmits and the nodes' processes' CPU.
func writeLab(w io.Writer, l *LabCost) {
	if l == nil {
		return
	}
	names := make([]string, 0, len(l.Interfaces))
	for n := range l.Interfaces {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		f := l.Interfaces[n]
		fmt.Fprintf(w, "  lab, every node's %s: %d packets, %s = %.1f packets, %s per transaction (each packet counted at both ends)\n",
			n, f.RxPackets+f.TxPackets, units.FormatBytes(float64(f.RxBytes+f.TxBytes)), f.PacketsPerTx, units.FormatBytes(f.BytesPerTx))
	}
	cpu := "n/a (a node's was not read)"
	if l.ProcessCPU != nil {
		cpu = msec(*l.ProcessCPU) + perTxUs(l.ProcessCPUPerTx)
	}
	fmt.Fprintf(w, "  lab: %d fragments created, %d reassemblies (%d failed); %d TCP segments sent = %.1f per transaction, %d retransmitted; the nodes' processes' cpu %s\n",
		l.FragCreates, l.ReasmReqds, l.ReasmFails, l.TCPOutSegs, l.TCPOutSegsPerTx, l.TCPRetransSegs, cpu)
	if len(l.LeftOut) > 0 {
		fmt.Fprintf(w, "  lab sums: %d node(s); left out, counters not read: %s\n", l.Nodes, strings.Join(l.LeftOut, ", "))
	}
}

// perTxUs is " = N us per transaction", or nothing without transactions.
func perTxUs(ns *float64) string {
	if ns == nil {
		return ""
	}
	return fmt.Sprintf(" = %.1f us per transaction", *ns/1e3)
}

func f64(v float64) *float64 { return &v }
