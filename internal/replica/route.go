package replica

import (
	"fmt"
	"net/netip"
	"sort"
	"strings"

	"github.com/interlink/interlink/internal/lab/topology"
)

// routes copies each node's routes whose gateway is on a link the replica
// builds: IPv4 only, since a bundle holds /proc/net/route and no IPv6
// table. Of two routes to one destination the one with the lower metric
// is kept (a lab route is one per destination).
func (b *builder) routes() {
	for _, n := range b.nodes {
		type cand struct {
			r      topology.RouteSpec
			metric int
		}
		best := map[netip.Prefix]cand{}
		var order []netip.Prefix
		for _, r := range n.src.Inv.Routes {
			if !r.Gateway.IsValid() || r.Gateway.IsUnspecified() {
				continue
			}
			on := false
			for _, p := range addrsOf(n) {
				on = on || p.Masked().Contains(r.Gateway) && p.Addr() != r.Gateway
			}
			to := r.Destination.Masked()
			if !on {
				b.note("%s: route %s via %s (%s) left out: the gateway is on no link of the replica", n.cluster, to, r.Gateway, r.Interface)
				continue
			}
			if c, ok := best[to]; ok {
				if r.Metric >= c.metric {
					b.note("%s: route %s via %s (metric %d) left out: the route via %s (metric %d) wins", n.cluster, to, r.Gateway, r.Metric, c.r.Via, c.metric)
					continue
				}
				b.note("%s: route %s via %s (metric %d) left out: the route via %s (metric %d) wins", n.cluster, to, c.r.Via, c.metric, r.Gateway, r.Metric)
			} else {
				order = append(order, to)
			}
			best[to] = cand{topology.RouteSpec{To: to, Via: r.Gateway}, r.Metric}
		}
		for _, to := range order {
			n.routes = append(n.routes, best[to].r)
		}
	}
}

// lookup returns the route node n takes to a (longest prefix), and false
// when a is on one of n's links or n has no route to it.
func (n *bnode) lookup(a netip.Addr) (topology.RouteSpec, bool) {
	for _, p := range addrsOf(n) {
		if p.Masked().Contains(a) {
			return topology.RouteSpec{}, false
		}
	}
	var best topology.RouteSpec
	found := false
	for _, r := range n.routes {
		if r.To.Contains(a) && (!found || r.To.Bits() > best.To.Bits()) {
			best, found = r, true
		}
	}
	return best, found
}

// hop is a gateway the nodes' routes name that is no cluster node: the
// switch it is on and the switches nodes reach through it.
type hop struct {
	gw    netip.Addr
	from  *swtch
	to    map[*swtch]bool
	users []string
}

// routers makes a router for the gateways through which a node reaches a
// subnet of the replica it has no link on. A default route counts only
// when a measured path took it. Two gateways that route to each other's
// subnet are one router; a subnet a router reaches but has no gateway
// address on gets an address made up (the highest free one).
func (b *builder) routers() {
	hops, gws := b.gatewayHops(b.pathNeeds())
	sort.Slice(gws, func(i, j int) bool { return gws[i].Less(gws[j]) })
	group := map[netip.Addr]int{}
	for i, g := range gws {
		group[g] = i
	}
	for _, g := range gws {
		for _, h := range gws {
			if hops[g].to[hops[h].from] && hops[h].to[hops[g].from] && group[g] != group[h] {
				old := group[h]
				for k, v := range group {
					if v == old {
						group[k] = group[g]
					}
				}
			}
		}
	}
	done := map[int]bool{}
	for _, g := range gws {
		if done[group[g]] {
			continue
		}
		done[group[g]] = true
		var members []*hop
		for _, h := range gws {
			if group[h] == group[g] {
				members = append(members, hops[h])
			}
		}
		b.router(members)
	}
}

// pathNeeds is, per node, the switches a measured path of the run reached
// from it (where its default route counts).
func (b *builder) pathNeeds() map[*bnode]map[*swtch]bool {
	need := map[*bnode]map[*swtch]bool{}
	m := b.run.Mesh
	if m == nil {
		return need
	}
	byName := map[string]*bnode{}
	for _, n := range b.nodes {
		byName[n.cluster] = n
	}
	for _, p := range m.Paths {
		to, err := netip.ParseAddr(p.ToAddr)
		n := byName[p.From]
		if err != nil || n == nil || b.owner[to] == nil {
			continue
		}
		if need[n] == nil {
			need[n] = map[*swtch]bool{}
		}
		need[n][b.owner[to].sw] = true
	}
	return need
}

// gatewayHops finds, for every node and every switch it has no link on,
// the gateway its routes take there: a replica node (which then forwards)
// or an address of no node (a hop, returned with the gateways in the
// order found).
func (b *builder) gatewayHops(need map[*bnode]map[*swtch]bool) (map[netip.Addr]*hop, []netip.Addr) {
	hops := map[netip.Addr]*hop{}
	var gws []netip.Addr
	for _, n := range b.nodes {
		for _, s := range b.sws {
			p4, ok := s.prefix4()
			if !ok || n.linkOn(s) != nil {
				continue
			}
			r, ok := n.lookup(p4.Addr())
			if !ok || r.To.Bits() == 0 && !need[n][s] {
				continue
			}
			if l := b.owner[r.Via]; l != nil {
				switch {
				case l.node.linkOn(s) == nil:
					b.limit("%s reaches %s through %s, which has no link there: a path of more than one hop is not reproduced", n.cluster, s.name, l.node.cluster)
				case !l.node.forward:
					l.node.forward = true
					b.decide("%s forwards (%s routes %s via %s)", l.node.name, n.cluster, p4, r.Via)
				}
				continue
			}
			h := hops[r.Via]
			if h == nil {
				h = &hop{gw: r.Via, to: map[*swtch]bool{}}
				for _, s2 := range b.sws {
					if s2.contains(r.Via) {
						h.from = s2
					}
				}
				hops[r.Via] = h
				gws = append(gws, r.Via)
			}
			h.to[s] = true
			h.users = append(h.users, n.cluster)
		}
	}
	return hops, gws
}

// router adds one router for the gateways of members.
func (b *builder) router(members []*hop) {
	taken := map[string]bool{}
	for _, n := range b.nodes {
		taken[n.name] = true
	}
	name := ""
	for i := 1; name == "" || taken[name]; i++ {
		name = fmt.Sprintf("r%d", i)
	}
	r := &bnode{name: name, forward: true}
	on := map[*swtch]bool{}
	var gws, users []string
	add := func(s *swtch, a netip.Addr, made bool) {
		p4, _ := s.prefix4()
		l := &link{node: r, name: fmt.Sprintf("eth%d", len(r.links)), addrs: []netip.Prefix{netip.PrefixFrom(a, p4.Bits())}, sw: s, mtu: s.mtu(), role: s.role}
		l.comment = []string{"gateway " + a.String() + " of the cluster's routes"}
		if made {
			l.comment = []string{"address made up: no node's route names one here"}
			b.note("%s: address %s on %s made up (the nodes there route through another gateway or none)", name, a, s.name)
		}
		r.links = append(r.links, l)
		s.links = append(s.links, l)
		b.owner[a] = l
		on[s] = true
	}
	for _, h := range members {
		add(h.from, h.gw, false)
		gws = append(gws, h.gw.String())
		users = append(users, h.users...)
	}
	for _, h := range members {
		for _, s := range b.sws {
			if h.to[s] && !on[s] {
				if a, ok := b.freeAddr(s); ok {
					add(s, a, true)
				} else {
					b.limit("%s: no free address on %s: the nodes there are not reached through it", name, s.name)
				}
			}
		}
	}
	b.nodes = append(b.nodes, r)
	b.routed = append(b.routed, r)
	b.decide("router %s for gateway %s (routes of %s)", name, strings.Join(gws, ", "), strings.Join(uniq(users), ", "))
	b.r.comments.nodes[name] = []string{fmt.Sprintf("a router the cluster's routes go through (gateway %s); not a cluster node", strings.Join(gws, ", "))}
}

// freeAddr returns the highest host address of the switch's IPv4 subnet
// that no link of the replica holds.
func (b *builder) freeAddr(s *swtch) (netip.Addr, bool) {
	p, ok := s.prefix4()
	if !ok || p.Bits() > 30 {
		return netip.Addr{}, false
	}
	a := lastAddr(p).Prev()
	for ; p.Contains(a) && a != p.Addr(); a = a.Prev() {
		if b.owner[a] == nil {
			return a, true
		}
	}
	return netip.Addr{}, false
}

func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().As4()
	v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	v |= uint32(1)<<(32-p.Bits()) - 1
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}

func uniq(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
