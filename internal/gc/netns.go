package gc

import "github.com/interlink/interlink/internal/traffic"

// netnsGroup is the nodes of a run whose agents share one network
// namespace (agents on one host's loopback): the namespace's kernel
// counters hold all of their packets, and each node's delta is the
// namespace's, so per-node packet figures exist only for the group.
type netnsGroup struct {
	nodes    int
	known    bool  // every member has the counters and an MTU
	pkts     int64 // UDP packets the namespace sent (the largest delta: the longest span)
	out      int64 // UDP datagrams it sent, likewise
	other    int64 // the members' packets that were not blocks
	served   int64 // blocks the members shipped
	received int64 // blocks the members received
	own      int64 // datagrams the members sent themselves
	ownGap   bool  // a member did not say its own (an older agent)
	foreign  int64 // datagrams beyond own in the namespace's counters
	counted  bool  // its packets are in the total (Build counts them once)
}

// netnsGroups groups the collected runs by the namespace their agent named
// (nodes that named none stand alone).
func netnsGroups(runs []*NodeRun) map[string]*netnsGroup {
	g := map[string]*netnsGroup{}
	for _, nr := range runs {
		if nr == nil || nr.Netns == "" {
			continue
		}
		e := g[nr.Netns]
		if e == nil {
			e = &netnsGroup{known: true}
			g[nr.Netns] = e
		}
		e.nodes++
		e.known = e.known && nr.Counters.HasPacketsOut() && nr.MTU > 0
		if e.known {
			e.pkts = max(e.pkts, nr.Counters.PacketsOut())
			e.out = max(e.out, nr.Counters.UDPOutDatagrams)
		}
		e.other += nr.OtherPackets
		e.served += nr.BlocksServed
		e.own += nr.DatagramsOut
		e.ownGap = e.ownGap || nr.DatagramsOut == 0
		for _, f := range nr.From {
			e.received += f.Received
		}
	}
	for _, e := range g {
		if e.known && !e.ownGap {
			e.foreign = foreignUDP(e.out, e.own)
		}
	}
	return g
}

// foreignUDP is traffic's rule (ForeignDatagrams) for the datagrams beyond
// own, what the run's nodes sent themselves, that a namespace's counters
// counted (out); 0 when own is not known (an agent that does not say).
func foreignUDP(out, own int64) int64 {
	if own <= 0 {
		return 0
	}
	return traffic.ForeignDatagrams(out, own)
}

// sharedGroup returns nr's group when it has more than one node, else nil.
func sharedGroup(groups map[string]*netnsGroup, nr *NodeRun) *netnsGroup {
	if g := groups[nr.Netns]; g != nil && g.nodes > 1 {
		return g
	}
	return nil
}

// apply gives node nd its group's packet figures: fragments per block
// shipped and packets per block received, over the namespace; none when
// the namespace carried other traffic.
func (g *netnsGroup) apply(nd *Node) {
	nd.SharedNetns, nd.ForeignUDP = g.nodes, g.foreign
	nd.FragmentsPerBlock, nd.PacketsPerBlock = 0, 0
	if !g.known || g.foreign > 0 {
		return
	}
	if g.served > 0 {
		nd.FragmentsPerBlock = float64(g.pkts-g.other) / float64(g.served)
	}
	if g.received > 0 {
		nd.PacketsPerBlock = float64(g.pkts) / float64(g.received)
	}
}
