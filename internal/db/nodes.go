package db

import (
	"fmt"
	"io"
	"sort"

	"github.com/interlink/interlink/internal/counters"
	"github.com/interlink/interlink/internal/units"
)

// NodeProbe reads the counters of a node the run can see besides this one
// (a lab node: Take runs inside its namespace). CPU in its snapshot is
// ignored: it is the host's, already in Result.Local.
type NodeProbe struct {
	Name string
	Take func() (*counters.Snapshot, error)
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
	Error          string      `json:"error,omitempty"`
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

// nodeMeter holds each probe's snapshot from the start of the run.
type nodeMeter struct {
	probes []NodeProbe
	before []*counters.Snapshot
	errs   []error
}

func startNodes(probes []NodeProbe) *nodeMeter {
	m := &nodeMeter{probes: probes, before: make([]*counters.Snapshot, len(probes)), errs: make([]error, len(probes))}
	for i, p := range probes {
		m.before[i], m.errs[i] = p.Take()
	}
	return m
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
			c.Error = cleanErr(err)
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
		out = append(out, c)
	}
	return out
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
		fmt.Fprintf(w, "  node %s ip/tcp: %d fragments created, %d reassemblies (%d failed); %d segments out, %d retransmitted\n",
			n.Node, n.FragCreates, n.ReasmReqds, n.ReasmFails, n.TCPOutSegs, n.TCPRetransSegs)
	}
}
