package watch

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/interlink/interlink/internal/latency"
)

// rttQuantiles are the quantiles of interlink_path_rtt_seconds: 0 and 1
// are the fastest and slowest answered probe, as go_gc_duration_seconds
// exports min and max.
var rttQuantiles = []float64{0, 0.5, 0.9, 0.99, 1}

// rttCollector exports the node-to-node round trips of each path's probes
// as one Summary family, interlink_path_rtt_seconds{from,to,network}.
//
// A Summary, not a gauge with a quantile label, because that is the shape
// Prometheus users query: the quantiles, plus _sum and _count, counters
// over the watch's life, so rate(_sum)/rate(_count) is the mean round trip
// over any range and _count says how many probes it rests on. The
// quantiles are the last round's (its probes, a few per path), computed
// by pmtu exactly, not client_golang's 10-minute streaming estimate of
// observations the watcher never sees one by one.
type rttCollector struct {
	desc *prometheus.Desc
	mu   sync.Mutex
	path map[[3]string]*rttSeries // from, to, network
}

type rttSeries struct {
	count uint64
	sum   float64          // seconds
	last  *latency.Summary // nil: the path was not measured last round
}

func newRTTCollector() *rttCollector {
	return &rttCollector{
		desc: prometheus.NewDesc("interlink_path_rtt_seconds",
			"Round trip of the path-MTU probes that were answered, node to node (the From node's agent probes the To node's agent, "+
				"or for the reverse direction the To node's agent probes back): quantiles of the last round, _sum and _count since the watch started.",
			[]string{"from", "to", "network"}, nil),
		path: map[[3]string]*rttSeries{},
	}
}

// observe records a measured path's round trips; a summary without
// samples (nothing came back) is stale.
func (c *rttCollector) observe(from, to, network string, s latency.Summary) {
	if s.Count == 0 {
		c.stale(from, to, network)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	k := [3]string{from, to, network}
	ser := c.path[k]
	if ser == nil {
		ser = &rttSeries{}
		c.path[k] = ser
	}
	ser.count += uint64(s.Count)
	ser.sum += s.Mean * float64(s.Count) / 1e9
	ser.last = &s
}

// stale drops the quantiles of a path not measured this round (an alert
// must not fire on last round's figures); its counters stay.
func (c *rttCollector) stale(from, to, network string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ser := c.path[[3]string{from, to, network}]; ser != nil {
		ser.last = nil
	}
}

func (c *rttCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *rttCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, ser := range c.path {
		q := map[float64]float64{}
		if s := ser.last; s != nil {
			for i, ns := range []int64{s.Min, s.P50, s.P90, s.P99, s.Max} {
				q[rttQuantiles[i]] = float64(ns) / 1e9
			}
		}
		ch <- prometheus.MustNewConstSummary(c.desc, ser.count, ser.sum, q, k[0], k[1], k[2])
	}
}
