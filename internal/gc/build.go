package gc

import (
	"fmt"
	"math"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/interlink/interlink/internal/mesh"
	"github.com/interlink/interlink/internal/units"
)

// Named names a node of a measured run for Build.
type Named struct {
	Name, Agent string
}

// Build makes the report of a run from what every node measured: runs[i]
// is node i's (nil when it could not be collected), each one Validate'd.
func Build(spec Spec, start time.Time, nodes []Named, runs []*NodeRun, unreachable []mesh.Unreachable) *Report {
	r := &Report{Schema: Schema, Spec: spec, Start: start, Unreachable: unreachable, Nodes: make([]Node, len(nodes)),
		Pairs: []Pair{}, Pings: []PingRow{}}
	name := func(i int) string { return nodes[i].Name }
	sums := r.addNodes(spec, nodes, runs, name)
	r.addPairs(runs, name)
	r.addTotal(sums)
	r.idleSplits(runs)
	r.receivePaths(runs)
	r.judge()
	return r
}

// sums are what the nodes add up to for the run's total.
type sums struct {
	hist                                        [2]*hdrhistogram.Histogram
	user, sys, blockPkts, pkts, served, issueNs float64
	softByHost                                  map[string]float64 // each host's softirq time, once
	pktsUnknown                                 bool               // a node lacks a counter PacketsOut needs
	mtuUnknown                                  bool               // a node's agent named no MTU (its OtherPackets are short)
}

// addNodes fills each node's figures and adds them up.
func (r *Report) addNodes(spec Spec, nodes []Named, runs []*NodeRun, name func(int) string) *sums {
	hosts := map[string]int{}
	for _, nr := range runs {
		if nr != nil && nr.Host != "" {
			hosts[nr.Host]++
		}
	}
	groups := netnsGroups(runs)
	s := &sums{hist: [2]*hdrhistogram.Histogram{newHist(), newHist()}, softByHost: map[string]float64{}}
	t := &r.Total
	for i, nr := range runs {
		nd := &r.Nodes[i]
		nd.Name, nd.Agent = nodes[i].Name, nodes[i].Agent
		if nr == nil {
			nd.Error = "no result collected"
			continue
		}
		hists := nr.histograms()
		nodeFigures(nd, nr, hists, spec, hosts[nr.Host], name)
		g := sharedGroup(groups, nr)
		if g != nil {
			g.apply(nd)
		}
		for k, h := range hists {
			if h != nil {
				s.hist[k].Merge(h)
			}
		}
		t.LocalHits += nd.LocalHits
		t.Received += nd.Received
		t.Lost += nd.Lost
		s.user += float64(nr.CPU.UserNs)
		s.sys += float64(nr.CPU.SystemNs)
		key := nr.Host
		if key == "" {
			key = fmt.Sprint("node ", i)
		}
		s.softByHost[key] = max(s.softByHost[key], float64(nr.CPU.SoftIRQNs))
		if g == nil && nr.Counters.HasPacketsOut() {
			if nd.ForeignUDP = foreignUDP(nr.Counters.UDPOutDatagrams, nr.DatagramsOut); nd.ForeignUDP > 0 {
				nd.FragmentsPerBlock, nd.PacketsPerBlock = 0, 0 // the counters hold other traffic
			}
		}
		switch {
		case nd.ForeignUDP > 0 || g != nil && !g.known:
			s.pktsUnknown = true
		case g != nil:
			if !g.counted { // one namespace's packets, once
				g.counted = true
				s.blockPkts += float64(g.pkts - g.other)
				s.pkts += float64(g.pkts)
			}
		case nr.Counters.HasPacketsOut():
			s.blockPkts += float64(nr.Counters.PacketsOut() - nr.OtherPackets)
			s.pkts += float64(nr.Counters.PacketsOut())
		default:
			s.pktsUnknown = true
		}
		s.mtuUnknown = s.mtuUnknown || nr.MTU <= 0
		s.served += float64(nr.BlocksServed)
		s.issueNs = max(s.issueNs, float64(nr.IssueNs))
	}
	return s
}

// addPairs adds every requester and server, and the ping table's rows,
// of the nodes whose result was collected.
func (r *Report) addPairs(runs []*NodeRun, name func(int) string) {
	n := len(runs)
	for ri, rr := range runs {
		if rr == nil || len(rr.From) != n {
			continue
		}
		for s := 0; s < n; s++ {
			if s != ri {
				r.Pairs = append(r.Pairs, pair(ri, s, rr, runs, name))
			}
		}
		for tg := range rr.Pings {
			if tg < n && !r.Spec.NoPing { // --ping-interval 0: no table of zeros
				r.Pings = append(r.Pings, PingRow{Node: name(ri), Target: name(tg), Small: pingFigures(rr.Pings[tg][0]), Large: pingFigures(rr.Pings[tg][1])})
			}
		}
	}
}

// addTotal makes the run's figures from the pairs, the pings and the
// nodes' sums.
func (r *Report) addTotal(s *sums) {
	t := &r.Total
	for _, p := range r.Pairs {
		t.Requested += p.Requested
	}
	var sum, count [2]float64
	for _, p := range r.Pings {
		if p.Node != p.Target {
			for c, f := range []Pings{p.Small, p.Large} {
				sum[c] += f.AvgNs * float64(f.Count)
				count[c] += float64(f.Count)
			}
		}
	}
	if count[0] > 0 {
		t.Ping500AvgNs = sum[0] / count[0]
	}
	if count[1] > 0 {
		t.Ping8KAvgNs = sum[1] / count[1]
	}
	t.TwoWay, t.ThreeWay = summary(s.hist[0]), summary(s.hist[1])
	if t.Received > 0 {
		t.ThreeWayPercent = 100 * float64(s.hist[1].TotalCount()) / float64(t.Received)
		soft := 0.0
		for _, v := range s.softByHost {
			soft += v
		}
		rec := float64(t.Received)
		t.CPUPerBlock = PerBlock{UserNs: s.user / rec, SystemNs: s.sys / rec, SoftIRQNs: soft / rec}
		t.CPUNsPerBlock = (s.user + s.sys) / rec
		if !s.pktsUnknown {
			t.PacketsPerBlock = s.pkts / rec
		}
	}
	if s.served > 0 && !s.pktsUnknown && !s.mtuUnknown {
		t.FragmentsPerBlock = s.blockPkts / s.served
	}
	if s.issueNs > 0 {
		t.BlocksPerSec = float64(t.Received) / (s.issueNs / 1e9)
	}
}

// nodeFigures fills node nd's figures from its result nr, whose decoded
// receive-time histograms are hists.
func nodeFigures(nd *Node, nr *NodeRun, hists [2]*hdrhistogram.Histogram, spec Spec, onHost int, name func(int) string) {
	nd.Addr, nd.MTU, nd.DurationNs = nr.Addr, nr.MTU, nr.IssueNs
	nd.Requests, nd.Served, nd.LocalHits = nr.Requests, nr.BlocksServed, nr.Local[0]+nr.Local[1]
	nd.CPU, nd.Counters, nd.Dropped, nd.RateWaitedNs, nd.Error = nr.CPU, nr.Counters, nr.Dropped, nr.RateWaitedNs, nr.Error
	nd.Truncated = nr.Truncated
	if onHost > 1 {
		nd.SharedHost = onHost
	}
	for _, p := range nr.Unproven {
		nd.Unproven = append(nd.Unproven, name(p))
	}
	var lostBlock int64
	for _, f := range nr.From {
		nd.Received += f.Received
		nd.Lost += f.Lost.Total()
		lostBlock += f.Lost.Block
	}
	nd.TwoWay, nd.ThreeWay = summary(hists[0]), summary(hists[1])
	if sec := float64(nr.IssueNs) / 1e9; sec > 0 {
		nd.BlocksPerSec = float64(nd.Received) / sec
	}
	if lostBlock > 0 && nr.Counters.Has("udp_rcvbuf_errors", "ip_reasm_fails") {
		w := &LostWhere{}
		rest := lostBlock
		take := func(v int64) int64 { v = max(min(v, rest), 0); rest -= v; return v }
		w.Truncated = take(nr.Truncated)
		w.ReceiveBuffer = take(nr.Counters.UDPRcvbufErrors)
		w.Reassembly = take(nr.Counters.ReasmFails)
		w.NothingSeen = rest
		nd.LostWhere = w
	}
	for mode, m := range []string{"cr", "current"} {
		for hop := range 2 {
			ev := nr.Events[mode][hop]
			e := Event{Event: fmt.Sprintf("gc %s block %d-way", m, hop+2), Waits: ev.Count}
			if ev.Count > 0 {
				e.AvgNs = float64(ev.SumNs) / float64(ev.Count)
			}
			nd.Events = append(nd.Events, e)
		}
	}
	for mode, m := range []string{"cr", "current"} {
		e := Event{Event: fmt.Sprintf("gc %s block lost", m), Waits: nr.LostByMode[mode]}
		if e.Waits > 0 {
			e.AvgNs = float64(spec.Timeout.Nanoseconds())
		}
		nd.Events = append(nd.Events, e)
	}
	if rec := float64(nd.Received); rec > 0 {
		nd.CPUPerBlock = PerBlock{UserNs: float64(nr.CPU.UserNs) / rec, SystemNs: float64(nr.CPU.SystemNs) / rec, SoftIRQNs: float64(nr.CPU.SoftIRQNs) / rec}
		if nr.Counters.HasPacketsOut() {
			nd.PacketsPerBlock = float64(nr.Counters.PacketsOut()) / rec
		}
	}
	// OtherPackets counts the fragments of what the node sent besides
	// blocks at its MTU: without one, the blocks' share is unknown.
	if nr.BlocksServed > 0 && nr.Counters.HasPacketsOut() && nr.MTU > 0 {
		nd.FragmentsPerBlock = float64(nr.Counters.PacketsOut()-nr.OtherPackets) / float64(nr.BlocksServed)
	}
}

// pair is what requester ri received from server s. Its requested count
// comes from the masters (what they routed to s) and from ri's own
// settled losses that never reached a router (the master's loss).
func pair(ri, s int, rr *NodeRun, runs []*NodeRun, name func(int) string) Pair {
	f := rr.From[s]
	p := Pair{Requester: name(ri), Server: name(s), Received: f.Received, Lost: f.Lost.Total(), LostBy: f.Lost,
		Late: f.Late, TwoWay: f.TwoWay, ThreeWay: f.ThreeWay}
	p.Requested = f.Lost.Request + f.Lost.Unconfirmed + f.Lost.NoPath
	for _, m := range runs {
		if m != nil && ri < len(m.Routed) && s < len(m.Routed[ri]) {
			p.Requested += m.Routed[ri][s]
		}
	}
	p.Balanced = p.Requested == p.Received+p.Lost
	p.TwoWaySplit, p.ThreeWaySplit = f.TwoWaySplit.split(f.TwoWay), f.ThreeWaySplit.split(f.ThreeWay)
	if sec := float64(rr.IssueNs) / 1e9; sec > 0 {
		p.BlocksPerSec = float64(f.Received) / sec
	}
	return p
}

func pingFigures(s PingStats) Pings {
	p := Pings{Count: s.Count, Lost: s.Lost, MinNs: s.MinNs, P50Ns: s.P50Ns, MaxNs: s.MaxNs}
	if s.Count > 0 {
		c := float64(s.Count)
		p.AvgNs = float64(s.SumNs) / c
		p.StddevNs = math.Sqrt(max(s.SumSqNs/c-p.AvgNs*p.AvgNs, 0))
	}
	return p
}

// lostResults names the nodes whose result was lost during the run: the
// requests they routed as masters are missing from every pair's count.
func (r *Report) lostResults() []string {
	var names []string
	for _, u := range r.Unreachable {
		if u.During {
			names = append(names, u.Node)
		}
	}
	return names
}

// judge sets the verdict from the pairs and nodes. A run cut short
// (Interrupted) left requests in flight, and a run with a node's result
// lost misses what it routed: their pairs need not balance.
func (r *Report) judge() {
	r.Problems, r.LimitedBy = nil, nil
	add := func(name string, crit bool, format string, a ...any) {
		r.Problems = append(r.Problems, Problem{Problem: name, Critical: crit, Detail: fmt.Sprintf(format, a...)})
	}
	for _, nd := range r.Nodes {
		if nd.Error != "" {
			add(ProblemNodeError, true, "%s: %s", nd.Name, nd.Error)
		}
		if nd.Truncated > 0 {
			add(ProblemTruncated, false, "%s read %d datagrams short (larger than any of the run): counted neither as received nor as lost in the network", nd.Name, nd.Truncated)
		}
		if len(nd.Unproven) > 0 {
			add(ProblemNoPath, true, "%s never heard from %v during the setup: requests to them were not sent", nd.Name, nd.Unproven)
		}
		if nd.RateWaitedNs > 0 && nd.DurationNs > 0 && float64(nd.RateWaitedNs) > 0.01*float64(nd.DurationNs) {
			r.LimitedBy = append(r.LimitedBy, fmt.Sprintf("%s: the agent's send limit held its sends back for %s %% of the run (start the agent with a higher --max-rate)",
				nd.Name, units.FormatPercent(100*min(float64(nd.RateWaitedNs)/float64(nd.DurationNs), 1), 0)))
		}
	}
	// Whether the pairs must balance is the run's, not a pair's.
	balance := !r.Interrupted && len(r.lostResults()) == 0
	for _, p := range r.Pairs {
		if p.Lost > 0 {
			pct := 100 * float64(p.Lost) / float64(max(p.Requested, p.Lost))
			add(ProblemLoss, pct > MaxLossPercent, "%s <- %s: %d of %d blocks lost (%.2f %%)", p.Requester, p.Server, p.Lost, p.Requested, pct)
		}
		if balance && !p.Balanced {
			add(ProblemAccounting, false, "%s <- %s: %d requested, but %d received and %d lost", p.Requester, p.Server, p.Requested, p.Received, p.Lost)
		}
	}
	crit := false
	for _, p := range r.Problems {
		crit = crit || p.Critical
	}
	switch {
	case crit:
		r.Verdict = VerdictFailed
	case len(r.Problems) > 0:
		r.Verdict = VerdictWarning
	case len(r.LimitedBy) > 0:
		r.Verdict = VerdictLimited
	default:
		r.Verdict = VerdictOK
	}
}
