package db

import (
	"strconv"
	"time"
)

// galeraDelta is one member's wsrep counters over the run, from its
// status at the start and at the end.
func galeraDelta(before, after map[string]string) GaleraCounters {
	d := func(name string) int64 {
		a, _ := strconv.ParseInt(before[name], 10, 64)
		b, _ := strconv.ParseInt(after[name], 10, 64)
		return b - a
	}
	size := func(m map[string]string) int { n, _ := strconv.Atoi(m["wsrep_cluster_size"]); return n }
	return GaleraCounters{
		StateStart: before["wsrep_local_state_comment"], StateEnd: after["wsrep_local_state_comment"],
		ClusterSizeStart: size(before), ClusterSizeEnd: size(after), ClusterStatus: after["wsrep_cluster_status"],
		Replicated: d("wsrep_replicated"), ReplicatedBytes: d("wsrep_replicated_bytes"),
		Received: d("wsrep_received"), ReceivedBytes: d("wsrep_received_bytes"),
		CertFailures: d("wsrep_local_cert_failures"), BFAborts: d("wsrep_local_bf_aborts"),
		FlowControlPaused: d("wsrep_flow_control_paused_ns"),
		FlowControlSent:   d("wsrep_flow_control_sent"), FlowControlRecv: d("wsrep_flow_control_recv"),
	}
}

// sumGalera adds up the members whose counters were read at both ends.
func sumGalera(members []Member, tx int64, dur time.Duration) *Galera {
	g := &Galera{}
	for _, m := range members {
		c := m.Galera
		if c == nil || m.Error != "" {
			continue
		}
		g.Members++
		g.ClusterSize = max(g.ClusterSize, c.ClusterSizeEnd)
		g.WriteSets += c.Replicated
		g.ReplicatedBytes += c.ReplicatedBytes
		g.ReceivedBytes += c.ReceivedBytes
		g.CertFailures += c.CertFailures
		g.BFAborts += c.BFAborts
		g.FlowControlPaused = max(g.FlowControlPaused, c.FlowControlPaused)
		g.FlowControlSent += c.FlowControlSent
	}
	if tx > 0 {
		g.ReplicatedBytesPerTx = float64(g.ReplicatedBytes) / float64(tx)
		g.ReceivedBytesPerTx = float64(g.ReceivedBytes) / float64(tx)
	}
	if dur > 0 {
		g.CertFailuresPerSec = float64(g.CertFailures) / dur.Seconds()
		g.FlowControlPausedPercent = 100 * float64(g.FlowControlPaused) / float64(dur)
	}
	return g
}
