package db

import (
	"time"

	"github.com/interlink/interlink/internal/counters"
)

// localFromDelta fills l from the counter deltas of the run: the interface
// the server is reached through, this namespace's IP and TCP counters,
// and the host's CPU. tx normalises per committed transaction.
func localFromDelta(l *Local, d counters.Delta, clientCPU time.Duration, tx int64) {
	if dev, ok := d.Dev[l.Interface]; ok && l.Interface != "" {
		l.RxBytes, l.TxBytes, l.RxPackets, l.TxPackets = dev.RxBytes, dev.TxBytes, dev.RxPackets, dev.TxPackets
		l.RxDropped, l.TxDropped, l.RxErrors, l.TxErrors = dev.RxDropped, dev.TxDropped, dev.RxErrors, dev.TxErrors
	}
	g := func(group, field string) int64 { v, _ := d.SNMP.Get(group, field); return v }
	l.IPInReceives, l.IPOutRequests = g("Ip", "InReceives"), g("Ip", "OutRequests")
	l.FragCreates, l.ReasmReqds, l.ReasmOKs, l.ReasmFails = g("Ip", "FragCreates"), g("Ip", "ReasmReqds"), g("Ip", "ReasmOKs"), g("Ip", "ReasmFails")
	l.TCPInSegs, l.TCPOutSegs, l.TCPRetransSegs = g("Tcp", "InSegs"), g("Tcp", "OutSegs"), g("Tcp", "RetransSegs")
	tick := int64(time.Second / counters.TicksPerSecond)
	l.CPUUserNs = int64(d.CPU.User+d.CPU.Nice) * tick
	l.CPUSystemNs = int64(d.CPU.System) * tick
	l.CPUSoftIRQNs = int64(d.CPU.SoftIRQ) * tick
	l.CPUIdleNs = int64(d.CPU.Idle+d.CPU.IOWait) * tick
	l.NCPU = d.NCPU
	l.ClientCPUNs = clientCPU.Nanoseconds()
	if tx > 0 {
		n := float64(tx)
		l.PacketsPerTx = float64(l.RxPackets+l.TxPackets) / n
		l.BytesPerTx = float64(l.RxBytes+l.TxBytes) / n
		l.CPUNsPerTx = float64(l.CPUUserNs+l.CPUSystemNs+l.CPUSoftIRQNs) / n
		l.ClientCPUNsPerTx = float64(l.ClientCPUNs) / n
	}
}
