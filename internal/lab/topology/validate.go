package topology

import (
	"fmt"
	"net/netip"
	"sort"
	"strings"

	"github.com/interlink/interlink/internal/units"
)

// Validate checks a topology, whether Parse read it from a file or it was
// built or changed in Go, and fills what follows from the rest: the switch
// side of every link, the default port of every service and a standby's
// switch. Every rule a topology obeys lives here, once; Parse calls it and
// adds the file's line numbers to its errors. Up calls it before it
// creates anything.
//
// A problem is returned as a *TopologyError naming the field (e.g.
// nodes.db1.links[1].mtu); it wraps ErrInvalid. The first problem found
// is returned, in the order of the file: name, switches, then each node's
// links, routes and services, then the references between services.
func (t *Topology) Validate() error {
	v := validator{t: t, switchMTU: map[string]int{}, addrs: map[netip.Addr]string{}, ports: map[string]int{}}
	if err := v.topology(); err != nil {
		return err
	}
	assignPorts(t)
	return nil
}

type validator struct {
	t         *Topology
	lab       string // the lab's name in errors, once it is known to be one
	switchMTU map[string]int
	addrs     map[netip.Addr]string // each address and the field that first has it
	ports     map[string]int        // links per switch
}

func (v *validator) bad(field, format string, a ...any) *TopologyError {
	return &TopologyError{Lab: v.lab, Field: field, Problem: fmt.Sprintf(format, a...)}
}

func mtuProblem(mtu int) string {
	return fmt.Sprintf("MTU %d out of range %d..%d", mtu, MinMTU, MaxMTU)
}

func (v *validator) topology() *TopologyError {
	t := v.t
	if t.Name == "" {
		return v.bad("name", "missing: every lab needs a name")
	}
	if err := checkLabName(t.Name); err != nil {
		return v.bad("name", "%v", err)
	}
	v.lab = t.Name
	for _, s := range t.Switches {
		f := "switches." + s.Name
		if err := checkIface(s.Name); err != nil {
			return v.bad(f, "switch name %v", err)
		}
		if _, dup := v.switchMTU[s.Name]; dup {
			return v.bad(f, "given twice")
		}
		if s.MTU < MinMTU || s.MTU > MaxMTU {
			return v.bad(f+".mtu", "%s", mtuProblem(s.MTU))
		}
		v.switchMTU[s.Name] = s.MTU
	}
	if len(t.Nodes) == 0 {
		return v.bad("nodes", "missing or empty: a lab needs at least one node")
	}
	if len(t.Nodes) > MaxNodes {
		return v.bad("nodes", "%d nodes: a lab takes at most %d", len(t.Nodes), MaxNodes)
	}
	nodes := map[string]bool{}
	for i := range t.Nodes {
		n := &t.Nodes[i]
		f := "nodes." + n.Name
		if err := checkLabName(n.Name); err != nil {
			return v.bad(f, "node name %v", err)
		}
		if nodes[n.Name] {
			return v.bad(f, "given twice")
		}
		nodes[n.Name] = true
		links := map[string]bool{}
		for j, l := range n.Links {
			lf := fmt.Sprintf("%s.links[%d]", f, j)
			if err := v.link(l, lf); err != nil {
				return err
			}
			if links[l.Name] {
				return v.bad(lf+".name", "link %q given twice in node %s", l.Name, n.Name)
			}
			links[l.Name] = true
		}
		if err := v.routes(n, f); err != nil {
			return err
		}
		if err := v.vm(n, f); err != nil {
			return err
		}
	}
	return v.services()
}

func (v *validator) link(l LinkSpec, f string) *TopologyError {
	if err := checkLinkName(l.Name); err != nil {
		return v.bad(f+".name", "%v", err)
	}
	if l.Name == "lo" {
		return v.bad(f+".name", "lo is the node's loopback; pick another name")
	}
	if l.Switch == "" {
		return v.bad(f+".switch", "missing: every link goes into a switch")
	}
	if _, ok := v.switchMTU[l.Switch]; !ok {
		return v.bad(f+".switch", "unknown switch %q (switches: %s)", l.Switch, keys(v.switchMTU))
	}
	if v.ports[l.Switch]++; v.ports[l.Switch] > MaxSwitchPorts {
		return v.bad(f+".switch", "switch %s: more than %d links (a Linux bridge has at most %d ports)", l.Switch, MaxSwitchPorts, MaxSwitchPorts)
	}
	if l.MTU < MinMTU || l.MTU > MaxMTU {
		return v.bad(f+".mtu", "%s", mtuProblem(l.MTU))
	}
	if l.PortMTU < MinMTU || l.PortMTU > MaxMTU {
		return v.bad(f+".port_mtu", "%s", mtuProblem(l.PortMTU))
	}
	if l.RateBitsPerSec != 0 && (l.RateBitsPerSec < MinRateBitsPerSec || l.RateBitsPerSec > MaxRateBitsPerSec) {
		return v.bad(f+".rate", "%s", rateProblem(l.RateBitsPerSec))
	}
	if p := lossProblem(l.LossPercent); p != "" {
		return v.bad(f+".loss", "%s", p)
	}
	for i, a := range l.Addresses {
		af := fmt.Sprintf("%s.addresses[%d]", f, i)
		if err := checkAddress(a); err != nil {
			return v.bad(af, "%v", err)
		}
		if a.Addr().Is6() && l.MTU < MinMTU6 {
			return v.bad(f+".mtu", "MTU %d is below %d, the IPv6 minimum, and the link has IPv6 address %s", l.MTU, MinMTU6, a)
		}
		if first, dup := v.addrs[a.Addr()]; dup {
			e := v.bad(af, "duplicate address %s", a.Addr())
			e.First = first
			return e
		}
		v.addrs[a.Addr()] = af
	}
	return nil
}

func rateProblem(r int64) string {
	return fmt.Sprintf("rate %s out of range %s..%s", units.FormatRate(float64(r)),
		units.FormatRate(MinRateBitsPerSec), units.FormatRate(MaxRateBitsPerSec))
}

// routes checks a node's routes: each gateway is another host on one of
// the node's links, of the destination's IP version, and no destination
// is given twice.
func (v *validator) routes(n *NodeSpec, nf string) *TopologyError {
	seen := map[netip.Prefix]bool{}
	for i, r := range n.Routes {
		f := fmt.Sprintf("%s.routes[%d]", nf, i)
		if !r.Via.IsValid() {
			return v.bad(f+".via", "missing: the gateway of the route")
		}
		if !r.To.IsValid() {
			return v.bad(f+".to", "missing: the destination prefix (or default)")
		}
		if r.To.Addr().Is4() != r.Via.Is4() {
			return v.bad(f+".via", "gateway %s and destination %s are of different IP versions", r.Via, r.To)
		}
		onLink := false
		for _, a := range n.Addresses() {
			if a.Masked().Contains(r.Via) {
				if a.Addr() == r.Via {
					return v.bad(f+".via", "gateway %s is the node's own address", r.Via)
				}
				onLink = true
			}
		}
		if !onLink {
			return v.bad(f+".via", "gateway %s is not on any link of this node", r.Via)
		}
		if seen[r.To.Masked()] {
			return v.bad(f+".to", "route to %s given twice", r.To)
		}
		seen[r.To.Masked()] = true
	}
	return nil
}

// services checks what each service says about itself and the references
// between nodes' services: a standby's primary is a node with a
// PostgreSQL primary, and the two share the switch it replicates over
// (Via is filled in when empty).
func (v *validator) services() *TopologyError {
	t := v.t
	for i := range t.Nodes {
		n := &t.Nodes[i]
		kinds := map[string]bool{}
		for j := range n.Services {
			s := &n.Services[j]
			f := fmt.Sprintf("nodes.%s.services[%d]", n.Name, j)
			if msg := s.check(); msg != "" {
				return v.bad(f, "%s", msg)
			}
			if kinds[s.Kind] {
				return v.bad(f, "a node runs one %s service; this is the second", s.Kind)
			}
			kinds[s.Kind] = true
		}
	}
	if err := v.galera(); err != nil {
		return err
	}
	nodes := map[string]*NodeSpec{}
	for i := range t.Nodes {
		nodes[t.Nodes[i].Name] = &t.Nodes[i]
	}
	for i := range t.Nodes {
		n := &t.Nodes[i]
		for j := range n.Services {
			s := &n.Services[j]
			f := fmt.Sprintf("nodes.%s.services[%d]", n.Name, j)
			if s.Kind != KindPostgres {
				continue
			}
			if len(n.AddrsOn("")) == 0 {
				return v.bad(f, "PostgreSQL needs an address on one of the node's links")
			}
			if s.Role != RoleStandby {
				continue
			}
			pn, ok := nodes[s.Primary]
			if !ok || pn == n {
				return v.bad(f, "primary %q is not another node of the lab", s.Primary)
			}
			if ps := pn.Service(KindPostgres); ps == nil || ps.Role != RolePrimary {
				return v.bad(f, "node %s runs no PostgreSQL primary", s.Primary)
			}
			if s.Via == "" {
				for _, l := range n.Links {
					if len(pn.AddrsOn(l.Switch)) > 0 && len(n.AddrsOn(l.Switch)) > 0 {
						s.Via = l.Switch
						break
					}
				}
				if s.Via == "" {
					return v.bad(f, "no switch connects it to %s with addresses on both sides", s.Primary)
				}
			}
			if len(pn.AddrsOn(s.Via)) == 0 || len(n.AddrsOn(s.Via)) == 0 {
				return v.bad(f, "via %q: %s and %s need addresses on that switch", s.Via, n.Name, s.Primary)
			}
		}
	}
	return nil
}

// galera checks the lab's Galera cluster: at least MinGalera members, each
// with an address on the one switch the cluster's replication crosses (Via,
// filled in on every member when none names it).
func (v *validator) galera() *TopologyError {
	members := v.t.GaleraNodes()
	if len(members) == 0 {
		return nil
	}
	field := func(n *NodeSpec) string {
		for j := range n.Services {
			if n.Services[j].Kind == KindGalera {
				return fmt.Sprintf("nodes.%s.services[%d]", n.Name, j)
			}
		}
		return "nodes." + n.Name
	}
	if len(members) < MinGalera {
		return v.bad(field(members[0]), "a Galera cluster needs at least %d nodes with a galera service (two keep quorum when one is lost); the lab has %d", MinGalera, len(members))
	}
	via := ""
	for _, n := range members {
		if s := n.Service(KindGalera); s.Via != "" {
			if via != "" && s.Via != via {
				return v.bad(field(n), "via %q: the lab's galera nodes form one cluster over one switch, and another names %q", s.Via, via)
			}
			via = s.Via
		}
	}
	if via == "" {
		for _, l := range members[0].Links {
			all := true
			for _, n := range members {
				all = all && len(n.AddrsOn(l.Switch)) > 0
			}
			if all {
				via = l.Switch
				break
			}
		}
		if via == "" {
			return v.bad(field(members[0]), "no switch connects every galera node with addresses on all of them")
		}
	}
	for _, n := range members {
		if len(n.AddrsOn(via)) == 0 {
			return v.bad(field(n), "via %q: node %s needs an address on that switch (the cluster's replication crosses it)", via, n.Name)
		}
		n.Service(KindGalera).Via = via
	}
	return nil
}

func keys(m map[string]int) string {
	if len(m) == 0 {
		return "none defined"
	}
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return strings.Join(ks, ", ")
}
