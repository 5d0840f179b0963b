package watch

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/interlink/interlink/internal/agent"
	"github.com/interlink/interlink/internal/mesh"
	"github.com/interlink/interlink/internal/traffic"
)

// The wake-up probe: each round, a short `bench --mode blocks` run, one
// block in flight, from the watching host to each node's agent, whose
// round trip is split into its parts from kernel receive stamps at both
// ends (traffic.Split). The share of the round trip's median that is the
// two hosts waking up says whether a network change would show at all:
// above one half, the hosts hide the wire. The wake-ups are the hosts'
// (the watching host's and the node's), whatever the path between them.

// DefaultWakeProbe is how long each node's wake-up probe runs per round.
const DefaultWakeProbe = 500 * time.Millisecond

// wakeMetrics are the probe's series, one set per node; a node not
// measured in a round has none (an alert must not fire on an old figure).
type wakeMetrics struct {
	share, wake, rtt *prometheus.GaugeVec
}

func newWakeMetrics(reg prometheus.Registerer) *wakeMetrics {
	gv := func(name, help string, labels ...string) *prometheus.GaugeVec {
		g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "interlink", Name: name, Help: help}, labels)
		reg.MustRegister(g)
		return g
	}
	return &wakeMetrics{
		share: gv("wake_share_ratio", "Share of the median round trip of an 8 KiB block (one in flight, watching host to the node's agent) that is the two hosts "+
			"waking up: the requester's and the responder's wake-up medians added, over the round trip's median, in the last round. "+
			"Above 0.5 the hosts, not the network, are most of a block's round trip (see interlink check CPU-IDLE).", "node"),
		wake: gv("wake_seconds", "Median wake-up of each end in the last round's probe: from the kernel's receive stamp of a datagram to the "+
			"reading thread having it; end=\"requester\" is the watching host, end=\"responder\" the node's agent.", "node", "end"),
		rtt: gv("wake_probe_rtt_seconds", "Median round trip of the wake-up probe's 8 KiB blocks (one in flight) in the last round.", "node"),
	}
}

// forget drops a node's series (not measured this round).
func (m *wakeMetrics) forget(node string) {
	m.share.DeleteLabelValues(node)
	m.rtt.DeleteLabelValues(node)
	m.wake.DeleteLabelValues(node, "requester")
	m.wake.DeleteLabelValues(node, "responder")
}

// set exports a probe's split; a part the kernel did not give is absent.
func (m *wakeMetrics) set(node string, s *traffic.Summary) {
	m.forget(node)
	if s.RTT == nil || s.RTT.P50 <= 0 {
		return
	}
	m.rtt.WithLabelValues(node).Set(float64(s.RTT.P50) / 1e9)
	sp := s.Split
	if sp == nil {
		return
	}
	if sp.RequesterWake != nil {
		m.wake.WithLabelValues(node, "requester").Set(float64(sp.RequesterWake.P50) / 1e9)
	}
	if sp.ResponderWake != nil {
		m.wake.WithLabelValues(node, "responder").Set(float64(sp.ResponderWake.P50) / 1e9)
	}
	if sp.WakeShare != nil {
		m.share.WithLabelValues(node).Set(*sp.WakeShare)
	}
}

// wakeProbes probes each node whose agent answered this round, one after
// the other (two probes at once would wake each other's hosts), within
// the round's context.
func (w *Watcher) wakeProbes(ctx context.Context, nodes []mesh.Node, down map[string]bool, opt Options) {
	for i, n := range nodes {
		d := probeTime(ctx, opt.WakeProbe, len(nodes)-i)
		if down[n.Name] || d == 0 {
			w.m.wake.forget(n.Name)
			continue
		}
		s, err := wakeProbe(ctx, n, d, opt)
		if err != nil {
			w.m.wake.forget(n.Name)
			continue
		}
		w.m.wake.set(n.Name, s)
	}
}

// probeTime is how long the next of left probes may run: want, or less
// when the round's time left shares out shorter (a third of each share
// goes to the session and the agent's reply); 0 when that is below
// traffic.MinInterval or the round is over.
func probeTime(ctx context.Context, want time.Duration, left int) time.Duration {
	if ctx.Err() != nil {
		return 0
	}
	if dl, ok := ctx.Deadline(); ok {
		want = min(want, time.Until(dl)*2/3/time.Duration(max(left, 1)))
	}
	if want < traffic.MinInterval {
		return 0
	}
	return want
}

// wakeProbe runs one node's probe for d and returns its summary.
func wakeProbe(ctx context.Context, n mesh.Node, d time.Duration, opt Options) (*traffic.Summary, error) {
	c, err := agent.Dial(ctx, n.Agent, opt.Mesh.Token, agent.DialOptions{Software: opt.Mesh.Software, Dial: opt.Mesh.Dial})
	if err != nil {
		return nil, err
	}
	defer c.Close()
	res, err := traffic.RunRemote(ctx, c, traffic.Spec{Mode: traffic.ModeBlocks, Duration: d, Interval: d, Outstanding: 1}, nil)
	if err != nil {
		return nil, err
	}
	if len(res.Flows) == 0 {
		return nil, context.Canceled
	}
	return &res.Flows[0].Summary, nil
}
