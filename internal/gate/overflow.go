package gate

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/interlink/interlink/internal/counters"
)

// overflowCollector exports the kernel's TcpExt ListenOverflows and
// ListenDrops of the gate's network namespace: with the gate accepting
// eagerly they stay flat while a storm is queued.
type overflowCollector struct{ descs [2]*prometheus.Desc }

var overflowFields = [2]string{"ListenOverflows", "ListenDrops"}

func listenOverflows() prometheus.Collector {
	return &overflowCollector{descs: [2]*prometheus.Desc{
		prometheus.NewDesc("interlink_gate_kernel_listen_overflows_total", "TcpExt ListenOverflows (/proc/net/netstat): accept queues that overflowed.", nil, nil),
		prometheus.NewDesc("interlink_gate_kernel_listen_drops_total", "TcpExt ListenDrops (/proc/net/netstat).", nil, nil),
	}}
}

func (c *overflowCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d
	}
}

func (c *overflowCollector) Collect(ch chan<- prometheus.Metric) {
	s, err := counters.Take()
	if err != nil {
		return // not Linux, or /proc unreadable: no series
	}
	for i, f := range overflowFields {
		if v, ok := s.SNMP.Get("TcpExt", f); ok {
			ch <- prometheus.MustNewConstMetric(c.descs[i], prometheus.CounterValue, float64(v))
		}
	}
}
