// Package watch re-proves a mesh on a schedule and exposes what it finds as
// Prometheus metrics (as blackbox_exporter does for probes): path MTU and
// verdict per path, probe loss, the node-to-node round trips of the probes,
// agents up, and the time of an authenticated handshake from the watching
// host to each agent. The agents run on the nodes
// already (contrib/systemd/interlink-agent.service); watch only talks to
// their control ports, like `interlink mesh`.
package watch

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/interlink/interlink/internal/agent"
	"github.com/interlink/interlink/internal/mesh"
)

// Options tune Run.
type Options struct {
	Mesh     mesh.Options
	Interval time.Duration // time between the starts of two rounds
	// Handshakes is how many authenticated handshakes to each agent are
	// timed per round (default 3).
	Handshakes int
	// Round, when set, is told each finished round. Calls are serialised.
	Round func(Round)
	// WakeProbe is how long each node's wake-up probe runs per round
	// (wake.go); 0 turns the probe off.
	WakeProbe time.Duration
}

// Round is the summary of one round.
type Round struct {
	N                 int
	Paths, Problems   int
	Unreachable       int
	Elapsed           time.Duration
	Stopped           string
	LowestPathMTU     int
	LowestPathMTUFrom string
	At                time.Time    // when the round ended
	Result            *mesh.Result // the round's mesh; nil if it could not start
}

// Watcher holds the metrics of a watch; register it with a registry.
type Watcher struct {
	m *metrics
}

// New returns a Watcher whose metrics are registered with reg.
func New(reg prometheus.Registerer) *Watcher { return &Watcher{m: newMetrics(reg)} }

// Run runs a round at once, then one every opt.Interval (a round that
// takes longer delays the next), until ctx ends. Each round's mesh is
// bounded by the interval.
func (w *Watcher) Run(ctx context.Context, nodes []mesh.Node, opt Options) error {
	if err := mesh.Check(nodes); err != nil {
		return err
	}
	if opt.Handshakes <= 0 {
		opt.Handshakes = 3
	}
	t := time.NewTicker(opt.Interval)
	defer t.Stop()
	for n := 1; ; n++ {
		r := w.round(ctx, nodes, opt)
		r.N = n
		if ctx.Err() != nil {
			return nil
		}
		if opt.Round != nil {
			opt.Round(r)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

func (w *Watcher) round(ctx context.Context, nodes []mesh.Node, opt Options) Round {
	rctx, cancel := context.WithTimeoutCause(ctx, opt.Interval, fmt.Errorf("round longer than --interval %s", opt.Interval))
	defer cancel()
	w.handshakes(rctx, nodes, opt)
	res, err := mesh.Run(rctx, nodes, opt.Mesh)
	r := Round{At: time.Now()}
	if res == nil {
		return r
	}
	r.Result, r.Elapsed, r.Stopped = res, res.Elapsed, res.Stopped
	if err != nil && ctx.Err() != nil {
		return r // stopped by the caller: keep the last complete round's series
	}
	m := w.m
	m.runs.Inc()
	m.duration.Set(res.Elapsed.Seconds())
	if res.Stopped != "" {
		m.incomplete.Inc()
	} else {
		m.lastComplete.SetToCurrentTime()
	}
	down := map[string]bool{}
	for _, u := range res.Unreachable {
		down[u.Node] = true
	}
	for _, n := range nodes {
		m.up.WithLabelValues(n.Name).Set(b2f(!down[n.Name]))
	}
	r.Unreachable = len(res.Unreachable)
	if opt.WakeProbe > 0 {
		w.wakeProbes(rctx, nodes, down, opt)
	}
	// Verdicts change: drop last round's so a path has one verdict series.
	m.verdict.Reset()
	for _, p := range res.Paths {
		net := strconv.Itoa(p.Network)
		l := []string{p.From, p.To, net}
		r.Paths++
		if p.Problem() {
			r.Problems++
		}
		if p.Skipped != "" || p.Error != "" {
			m.mtu.DeleteLabelValues(l...)
			m.loss.DeleteLabelValues(l...)
			m.problem.WithLabelValues(l...).Set(1)
			m.rtt.stale(p.From, p.To, net)
			m.verdict.WithLabelValues(p.From, p.To, net, "not-measured").Set(1)
			continue
		}
		m.mtu.WithLabelValues(l...).Set(float64(p.PathMTU))
		m.problem.WithLabelValues(l...).Set(b2f(p.Problem()))
		m.verdict.WithLabelValues(p.From, p.To, net, string(p.Verdict)).Set(1)
		m.rtt.observe(p.From, p.To, net, p.RTT)
		if p.Probes > 0 {
			m.loss.WithLabelValues(l...).Set(float64(p.Lost) / float64(p.Probes))
		}
		if r.LowestPathMTU == 0 || p.PathMTU < r.LowestPathMTU {
			r.LowestPathMTU, r.LowestPathMTUFrom = p.PathMTU, p.From+" -> "+p.To
		}
	}
	return r
}

// handshakes times opt.Handshakes authenticated handshakes to each agent
// (TCP connect, version and HMAC challenge: two round trips and a little
// CPU on the agent's control address).
func (w *Watcher) handshakes(ctx context.Context, nodes []mesh.Node, opt Options) {
	sem := make(chan struct{}, 32) // a silent agent holds its slot for the handshake timeout
	var wg sync.WaitGroup
	for _, n := range nodes {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			for i := 0; i < opt.Handshakes && ctx.Err() == nil; i++ {
				start := time.Now()
				c, err := agent.Dial(ctx, n.Agent, opt.Mesh.Token, agent.DialOptions{Software: opt.Mesh.Software, Dial: opt.Mesh.Dial})
				if err != nil {
					return
				}
				w.m.handshake.WithLabelValues(n.Name).Observe(time.Since(start).Seconds())
				c.Close()
			}
		}()
	}
	wg.Wait()
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
