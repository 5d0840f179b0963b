package replica

import (
	"fmt"
	"net/netip"
	"sort"
	"strings"

	"github.com/interlink/interlink/internal/mesh"
	"github.com/interlink/interlink/internal/pmtu"
)

// measured reports whether a path of the run was measured to a verdict.
func measured(p mesh.Path) bool {
	return p.Skipped == "" && p.Error == "" && p.Verdict != "" && p.Verdict != pmtu.Unreachable && p.PathMTU > 0
}

// at returns the link of the replica that holds address s.
func (b *builder) at(s string) *link {
	a, err := netip.ParseAddr(s)
	if err != nil {
		return nil
	}
	return b.owner[a]
}

func (l *link) portMTU() int {
	if l.port > 0 {
		return l.port
	}
	return l.sw.mtu()
}

func (l *link) String() string { return l.node.name + ":" + l.name }

// fromMesh sets what the measured paths show and the interfaces do not.
// First the MTU of a router's link where a hop answered with ICMP; then,
// for each blackhole that the links and routers do not explain, a switch
// port at both ends of the path, at the largest size any measured path
// through that port carried. With every port crossed at those sizes,
// every path gets its measured MTU again; a port no blackhole needs stays
// at its switch's MTU.
func (b *builder) fromMesh() {
	m := b.run.Mesh
	if m == nil {
		return
	}
	carried := map[*link]int{}
	for _, p := range m.Paths {
		if fl, tl := b.at(p.FromAddr), b.at(p.ToAddr); measured(p) && fl != nil && tl != nil {
			carried[fl] = max(carried[fl], p.PathMTU)
			carried[tl] = max(carried[tl], p.PathMTU)
			if p.Verdict == pmtu.ICMP {
				b.icmp(p, fl, tl)
			}
		}
	}
	needs := map[*link][]string{}
	for _, p := range m.Paths {
		fl, tl := b.at(p.FromAddr), b.at(p.ToAddr)
		if !measured(p) || fl == nil || tl == nil || p.Verdict != pmtu.Blackhole {
			continue
		}
		if v, mtu := b.path(p, m.Expect); v == pmtu.Blackhole && mtu == p.PathMTU {
			continue // a receiving interface or a router's link explains it
		}
		what := fmt.Sprintf("%s -> %s", p.From, p.To)
		needs[fl] = append(needs[fl], what)
		needs[tl] = append(needs[tl], what)
	}
	for _, n := range b.nodes {
		for _, l := range n.links {
			if len(needs[l]) == 0 || carried[l] >= l.sw.mtu() {
				continue
			}
			l.port = carried[l]
			b.decide("%s port MTU %d: blackholes at %d on %s, and no path through this port carried more", l, l.port, l.port, strings.Join(uniq(needs[l]), ", "))
			l.comment = append(l.comment, fmt.Sprintf("port_mtu %d: the mesh found a blackhole at %d here", l.port, l.port))
		}
	}
}

// icmp gives the router on path p the MTU its ICMP said, on its link
// toward the path's end.
func (b *builder) icmp(p mesh.Path, fl, tl *link) {
	to, _ := netip.ParseAddr(p.ToAddr)
	r, ok := fl.node.lookup(to)
	var out *link
	if ok && b.owner[r.Via] != nil {
		out = b.owner[r.Via].node.linkOn(tl.sw)
	}
	if out == nil {
		b.limit("mesh path %s -> %s (network %d): ICMP from %s said MTU %d, and no router of the replica carries the path", p.From, p.To, p.Network, p.ICMPFrom, p.ICMPMTU)
		return
	}
	if p.ICMPMTU <= 0 || p.ICMPMTU >= out.mtu {
		return
	}
	out.mtu = p.ICMPMTU
	b.decide("%s MTU %d: %s said 'fragmentation needed, MTU %d' on %s -> %s (network %d)", out, out.mtu, p.ICMPFrom, p.ICMPMTU, p.From, p.To, p.Network)
	out.comment = append(out.comment, fmt.Sprintf("MTU %d: the hop the mesh found answering with ICMP", out.mtu))
}

// predict gives, for every path the run measured (or found unreachable),
// what the replica will measure: the verdict and path MTU the lab's
// links, ports and routers make.
func (b *builder) predict() []Prediction {
	m := b.run.Mesh
	if m == nil {
		return nil
	}
	var out []Prediction
	for _, p := range m.Paths {
		if p.Skipped != "" || p.Error != "" || p.Verdict == "" {
			continue
		}
		want := string(p.Verdict)
		if p.Verdict != pmtu.Unreachable {
			want = fmt.Sprintf("%s %d", p.Verdict, p.PathMTU)
		}
		v, mtu := b.path(p, m.Expect)
		got := string(v)
		if v != pmtu.Unreachable {
			got = fmt.Sprintf("%s %d", v, mtu)
		}
		out = append(out, Prediction{Path: fmt.Sprintf("%s -> %s, network %d", p.From, p.To, p.Network), Measured: want, Replica: got, Same: want == got})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Same && !out[j].Same })
	return out
}

// path models one direction of a path in the replica: the sender's MTU,
// each port and router link it crosses, the receiver's MTU.
func (b *builder) path(p mesh.Path, expect int) (pmtu.Verdict, int) {
	fl, tl := b.at(p.FromAddr), b.at(p.ToAddr)
	if fl == nil || tl == nil {
		return pmtu.Unreachable, 0
	}
	mA := fl.mtu
	verdict := func(mtu int) pmtu.Verdict {
		if mtu == mA {
			if tl.mtu > mA || expect > mA {
				return pmtu.LocalLimit
			}
			return pmtu.OK
		}
		return pmtu.Blackhole
	}
	if fl.sw == tl.sw {
		mtu := min(mA, fl.portMTU(), tl.portMTU(), tl.mtu)
		return verdict(mtu), mtu
	}
	from, _ := netip.ParseAddr(p.FromAddr)
	to, _ := netip.ParseAddr(p.ToAddr)
	in, out := b.hop(fl.node, to, tl.sw)
	if in == nil || !b.reaches(tl.node, from, fl.sw) {
		return pmtu.Unreachable, 0
	}
	h1 := min(fl.portMTU(), in.portMTU(), in.mtu)
	h2 := min(out.portMTU(), tl.portMTU(), tl.mtu)
	mtu := min(mA, h1, out.mtu, h2)
	if mtu < mA && mtu == out.mtu && out.mtu < h1 && out.mtu <= h2 {
		return pmtu.ICMP, mtu
	}
	return verdict(mtu), mtu
}

// hop returns the links of the router that n's route to a goes through:
// the one on n's side and the one on switch dst; nil when n has no such
// route or the gateway is no forwarding node with a link on dst.
func (b *builder) hop(n *bnode, a netip.Addr, dst *swtch) (in, out *link) {
	r, ok := n.lookup(a)
	if !ok || b.owner[r.Via] == nil {
		return nil, nil
	}
	in = b.owner[r.Via]
	if !in.node.forward {
		return nil, nil
	}
	if out = in.node.linkOn(dst); out == nil {
		return nil, nil
	}
	return in, out
}

// reaches reports whether n's answers get back to a on switch dst.
func (b *builder) reaches(n *bnode, a netip.Addr, dst *swtch) bool {
	in, _ := b.hop(n, a, dst)
	return in != nil
}
