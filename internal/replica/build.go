package replica

import (
	"fmt"
	"net/netip"
	"path"
	"strings"

	"github.com/interlink/interlink/internal/inventory"
	"github.com/interlink/interlink/internal/lab/topology"
	"github.com/interlink/interlink/internal/rules"
)

// Roles of an interface in the replica, best first.
const (
	roleInterconnect = "interconnect"
	roleStorage      = "storage"
	rolePublic       = "public"
	roleOther        = "network" // a node whose roles are unknown: every up interface
)

var rolePrio = map[string]int{roleInterconnect: 0, roleStorage: 1, rolePublic: 2, roleOther: 3}

// builder holds a replica while Build makes it.
type builder struct {
	run    *Run
	r      *Replica
	nodes  []*bnode // cluster nodes, then routers and filers
	sws    []*swtch
	owner  map[netip.Addr]*link // every address of the replica and its link
	routed []*bnode             // routers, in the order made
}

type bnode struct {
	name     string // lab name
	cluster  string // name in the run; "" for a router or filer
	src      *Node
	links    []*link
	routes   []topology.RouteSpec
	forward  bool
	services []topology.ServiceSpec
}

type link struct {
	node    *bnode
	ifc     *inventory.Interface // nil for a router's or filer's link
	name    string
	addrs   []netip.Prefix
	role    string
	sw      *swtch
	mtu     int
	port    int // 0: the switch's MTU
	comment []string
}

type swtch struct {
	name     string
	prefixes []netip.Prefix // masked
	role     string
	network  int // the mesh network on it (1-based), 0 none
	links    []*link
}

func (s *swtch) mtu() int {
	m := 0
	for _, l := range s.links {
		m = max(m, l.mtu)
	}
	return m
}

func (s *swtch) contains(a netip.Addr) bool {
	for _, p := range s.prefixes {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// prefix4 returns the switch's first IPv4 prefix, if any.
func (s *swtch) prefix4() (netip.Prefix, bool) {
	for _, p := range s.prefixes {
		if p.Addr().Is4() {
			return p, true
		}
	}
	return netip.Prefix{}, false
}

func (n *bnode) linkOn(s *swtch) *link {
	for _, l := range n.links {
		if l.sw == s {
			return l
		}
	}
	return nil
}

// Build makes the replica of run. Every problem with the run (a hostile
// interface name, two nodes claiming one address, more nodes than a lab
// builds) wraps ErrInput; nothing is built either way (Build only plans).
func Build(run *Run, opt Options) (*Replica, error) {
	if opt.Name == "" {
		opt.Name = DefaultName
	}
	if err := topology.CheckName(opt.Name); err != nil {
		return nil, inputErr("lab name %v", err)
	}
	if len(run.Nodes) > MaxNodes {
		return nil, inputErr("RUN has %d nodes; a lab builds at most %d (its switches are Linux bridges, %d ports each)", len(run.Nodes), MaxNodes, topology.MaxSwitchPorts)
	}
	b := &builder{run: run, owner: map[netip.Addr]*link{},
		r: &Replica{Schema: Schema, From: run.From, Kind: run.Kind, Measured: run.Mesh != nil, Decisions: []string{}, Notes: []string{}, Limits: []string{},
			comments: comments{nodes: map[string][]string{}, links: map[[2]string]string{}, sws: map[string]string{}}}}
	if run.Mesh != nil {
		b.r.Expect = run.Mesh.Expect
	}
	names := make([]string, len(run.Nodes))
	for i, n := range run.Nodes {
		names[i] = n.Name
	}
	labName, err := labNames(names)
	if err != nil {
		return nil, err
	}
	for i := range run.Nodes {
		n := &run.Nodes[i]
		bn := &bnode{name: labName[n.Name], cluster: n.Name, src: n}
		if err := b.links(bn); err != nil {
			return nil, err
		}
		b.nodes = append(b.nodes, bn)
	}
	b.switches()
	b.routes()
	b.routers()
	b.fromMesh()
	b.services()
	b.limits()
	t, err := b.topology(opt.Name)
	if err != nil {
		return nil, err
	}
	b.r.Topology = t
	b.r.Predicted = b.predict()
	for _, p := range b.r.Predicted {
		if !p.Same {
			b.r.Limits = append(b.r.Limits, fmt.Sprintf("mesh path %s: measured %s, the replica gives %s", p.Path, p.Measured, p.Replica))
		}
	}
	return b.r, nil
}

// links picks the node's interfaces the replica builds and their roles.
func (b *builder) links(n *bnode) error {
	hints := roleHintsOf(n)
	var cands []*link
	known := false // some interface has a role: those without are left out
	for i := range n.src.Inv.Interfaces {
		l := b.candidate(n, &n.src.Inv.Interfaces[i], hints)
		if l == nil {
			continue
		}
		known = known || l.role != ""
		if len(l.addrs) > 0 {
			cands = append(cands, l)
		} else if l.role == roleInterconnect {
			b.note("%s: interconnect interface %s has no address the lab can give it: left out", n.cluster, l.name)
		}
	}
	for _, l := range cands {
		if err := b.keep(n, l, known); err != nil {
			return err
		}
	}
	for _, a := range n.src.Mesh {
		if !hasAddr(addrsOf(n), map[netip.Addr]bool{a: true}) {
			b.limit("%s: its mesh address %s is on no interface of its bundle", n.cluster, a)
		}
	}
	if len(n.links) == 0 {
		return inputErr("node %s: no interface with an address the lab can build", n.cluster)
	}
	return nil
}

// roleHints is what a node's bundle says about its interfaces' roles: the
// measured mesh's addresses, the interconnect in the GPnP profile, the
// public networks (Clusterware's, the default route's) and the NFS
// servers' routes.
type roleHints struct {
	mesh                  map[netip.Addr]bool
	gpnp, public, storage map[string]bool
}

func roleHintsOf(n *bnode) roleHints {
	inv := n.src.Inv
	h := roleHints{mesh: map[netip.Addr]bool{}, gpnp: map[string]bool{}, public: map[string]bool{}, storage: map[string]bool{}}
	for _, a := range n.src.Mesh {
		h.mesh[a] = true
	}
	for _, name := range rules.FromGPnP(inv).Interfaces {
		h.gpnp[name] = true
	}
	if inv.Cluster != nil {
		for _, cn := range inv.Cluster.Networks {
			if !strings.Contains(cn.Use, "public") {
				continue
			}
			for _, ifc := range inv.Interfaces {
				if ok, _ := path.Match(cn.Adapter, ifc.Name); ok {
					h.public[ifc.Name] = true
				}
			}
		}
	}
	for _, r := range inv.Routes {
		if r.Destination.Bits() == 0 {
			h.public[r.Interface] = true
		}
	}
	for _, m := range inv.Mounts {
		if a, ok := serverAddr(m); ok {
			if ifc := ifaceFor(inv, a); ifc != "" {
				h.storage[ifc] = true
			}
		}
	}
	return h
}

// candidate is ifc as a link with the addresses a lab can give it and its
// role ("" when nothing says); nil for the loopback.
func (b *builder) candidate(n *bnode, ifc *inventory.Interface, h roleHints) *link {
	if ifc.Type == "loopback" {
		return nil
	}
	l := &link{node: n, ifc: ifc, name: ifc.Name, mtu: ifc.MTU}
	for _, s := range ifc.Addresses {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			continue
		}
		a := p.Addr()
		switch {
		case a.Is4() && a.IsLinkLocalUnicast():
			b.note("%s: %s %s left out: link-local (Oracle HAIP makes its own; a lab builds none)", n.cluster, ifc.Name, p)
			continue
		case a.IsLinkLocalUnicast() || a.IsLoopback() || a.IsMulticast() || a.IsUnspecified():
			continue // fe80:: the kernel makes in the lab too
		}
		l.addrs = append(l.addrs, p)
	}
	switch {
	case hasAddr(l.addrs, h.mesh) || h.gpnp[ifc.Name]:
		l.role = roleInterconnect
	case h.storage[ifc.Name]:
		l.role = roleStorage
	case h.public[ifc.Name] || l.holds(n.src.Agent):
		l.role = rolePublic
	}
	return l
}

// keep adds the candidate l to its node unless it is left out (no role
// where others have one, or down), and claims its addresses.
func (b *builder) keep(n *bnode, l *link, known bool) error {
	switch {
	case l.role == "" && known:
		b.note("%s: %s (%s, %s) left out: not an interconnect, storage or public interface", n.cluster, l.name, l.ifc.Type, joinPrefixes(l.addrs))
		return nil
	case l.role == "" && !l.ifc.Up():
		b.note("%s: %s (%s) left out: down", n.cluster, l.name, joinPrefixes(l.addrs))
		return nil
	case l.role == "":
		l.role = roleOther
	}
	if err := checkIface(n.cluster, n.src.Bundle, l.name); err != nil {
		return err
	}
	l.comment = append(l.comment, l.role)
	b.describe(l)
	for _, p := range l.addrs {
		if other := b.owner[p.Addr()]; other != nil {
			return inputErr("%s (%s) and %s (%s) both claim %s: a lab gives an address to one node", other.node.cluster, other.name, n.cluster, l.name, p.Addr())
		}
		b.owner[p.Addr()] = l
	}
	n.links = append(n.links, l)
	return nil
}

// describe says in the link's comment what the interface is in the
// cluster when the lab builds it as a plain link.
func (b *builder) describe(l *link) {
	ifc, inv := l.ifc, l.node.src.Inv
	switch ifc.Type {
	case "bond":
		mode, slaves := "mode unknown", strings.Join(ifc.Ports, " ")
		if ifc.Bond != nil && ifc.Bond.Mode != "" {
			mode = ifc.Bond.Mode
		}
		l.comment = append(l.comment, fmt.Sprintf("a bond in the cluster (%s, slaves %s): one link here", mode, slaves))
		b.limit("%s: bond %s (%s, slaves %s) is one link: failover and load sharing across its slaves are not reproduced", l.node.cluster, ifc.Name, mode, slaves)
	case "vlan":
		l.comment = append(l.comment, fmt.Sprintf("VLAN %d on %s in the cluster: one untagged link here", ifc.VLANID, ifc.Parent))
		b.note("%s: VLAN %s (id %d on %s) is one untagged link", l.node.cluster, ifc.Name, ifc.VLANID, ifc.Parent)
		if p := inv.Interface(ifc.Parent); p != nil && p.Type == "bond" {
			b.limit("%s: %s runs over bond %s: one link here, the bond's failover is not reproduced", l.node.cluster, ifc.Name, p.Name)
		}
	case "bridge":
		l.comment = append(l.comment, fmt.Sprintf("a bridge in the cluster (ports %s): one link here", strings.Join(ifc.Ports, " ")))
		b.note("%s: bridge %s (ports %s) is one link", l.node.cluster, ifc.Name, strings.Join(ifc.Ports, " "))
	}
}

func (l *link) holds(a netip.Addr) bool {
	for _, p := range l.addrs {
		if p.Addr() == a {
			return true
		}
	}
	return false
}

func hasAddr(ps []netip.Prefix, set map[netip.Addr]bool) bool {
	for _, p := range ps {
		if set[p.Addr()] {
			return true
		}
	}
	return false
}

func addrsOf(n *bnode) []netip.Prefix {
	var out []netip.Prefix
	for _, l := range n.links {
		out = append(out, l.addrs...)
	}
	return out
}

func joinPrefixes(ps []netip.Prefix) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String()
	}
	return strings.Join(s, " ")
}

// ifaceFor returns the interface by which the node reaches a: the one
// whose subnet holds it, else the route's.
func ifaceFor(inv *inventory.Inventory, a netip.Addr) string {
	for _, ifc := range inv.Interfaces {
		for _, s := range ifc.Addresses {
			if p, err := netip.ParsePrefix(s); err == nil && p.Masked().Contains(a) {
				return ifc.Name
			}
		}
	}
	best := -1
	name := ""
	for _, r := range inv.Routes {
		if r.Destination.Contains(a) && r.Destination.Bits() > best {
			best, name = r.Destination.Bits(), r.Interface
		}
	}
	return name
}

func (b *builder) note(format string, a ...any) {
	b.r.Notes = append(b.r.Notes, fmt.Sprintf(format, a...))
}

func (b *builder) limit(format string, a ...any) {
	b.r.Limits = append(b.r.Limits, fmt.Sprintf(format, a...))
}

func (b *builder) decide(format string, a ...any) {
	b.r.Decisions = append(b.r.Decisions, fmt.Sprintf(format, a...))
}
