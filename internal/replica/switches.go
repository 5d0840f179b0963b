package replica

import (
	"fmt"
	"net/netip"
	"sort"
)

// switches puts every link into the switch of its subnet: links whose
// prefixes overlap share one, and a link's IPv4 and IPv6 subnets are one
// switch. Names follow the role: ic, stor, pub, net (numbered when there
// are several, interconnect switches in mesh order).
func (b *builder) switches() {
	for _, n := range b.nodes {
		for _, l := range n.links {
			var merged []*swtch
			var rest []*swtch
			for _, s := range b.sws {
				if overlaps(s.prefixes, l.addrs) {
					merged = append(merged, s)
				} else {
					rest = append(rest, s)
				}
			}
			s := &swtch{role: l.role}
			for _, m := range merged {
				s.prefixes = append(s.prefixes, m.prefixes...)
				s.links = append(s.links, m.links...)
				if rolePrio[m.role] < rolePrio[s.role] {
					s.role = m.role
				}
			}
			for _, p := range l.addrs {
				if !overlaps(s.prefixes, []netip.Prefix{p}) {
					s.prefixes = append(s.prefixes, p.Masked())
				}
			}
			s.links = append(s.links, l)
			b.sws = append(rest, s)
		}
	}
	for _, s := range b.sws {
		for _, l := range s.links {
			l.sw = s
		}
	}
	for _, n := range b.nodes {
		for i, a := range n.src.Mesh {
			if l := b.owner[a]; l != nil && (l.sw.network == 0 || i+1 < l.sw.network) {
				l.sw.network = i + 1
			}
		}
	}
	sort.SliceStable(b.sws, func(i, j int) bool {
		x, y := b.sws[i], b.sws[j]
		if rolePrio[x.role] != rolePrio[y.role] {
			return rolePrio[x.role] < rolePrio[y.role]
		}
		if (x.network == 0) != (y.network == 0) {
			return x.network != 0
		}
		if x.network != y.network {
			return x.network < y.network
		}
		return x.prefixes[0].Addr().Less(y.prefixes[0].Addr())
	})
	base := map[string]string{roleInterconnect: "ic", roleStorage: "stor", rolePublic: "pub", roleOther: "net"}
	count, seq := map[string]int{}, map[string]int{}
	for _, s := range b.sws {
		count[s.role]++
	}
	for _, s := range b.sws {
		s.name = base[s.role]
		if count[s.role] > 1 {
			seq[s.role]++
			s.name = fmt.Sprintf("%s%d", s.name, seq[s.role])
		}
		c := joinPrefixes(s.prefixes)
		if s.network > 0 {
			c += fmt.Sprintf(" (mesh network %d)", s.network)
		}
		b.r.comments.sws[s.name] = c
	}
}

func overlaps(a, b []netip.Prefix) bool {
	for _, x := range a {
		for _, y := range b {
			if x.Overlaps(y) {
				return true
			}
		}
	}
	return false
}
