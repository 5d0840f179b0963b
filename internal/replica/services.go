package replica

import (
	"fmt"
	"net/netip"
	"sort"
	"strings"

	"github.com/interlink/interlink/internal/inventory"
	"github.com/interlink/interlink/internal/lab/topology"
	"github.com/interlink/interlink/internal/units"
)

// services gives every cluster node an agent, and an NFS server to each
// server the nodes mount from, as far as the lab's NFS service reaches:
// nfs-ganesha exporting one directory of the lab over NFSv3 and v4 (TCP)
// on the node's first address. A server that is a cluster node serves
// there (its link with the server's address goes first); a server that is
// not, but whose address is on a network of the replica, becomes a filer
// node with that address.
func (b *builder) services() {
	var cluster []*bnode
	for _, n := range b.nodes {
		if n.cluster != "" {
			cluster = append(cluster, n)
			n.services = append(n.services, topology.ServiceSpec{Kind: topology.KindAgent})
		}
	}
	servers, order := b.nfsServers(cluster)
	filers := 0
	for _, a := range order {
		s := servers[a]
		var node *bnode
		if l := b.owner[a]; l != nil && l.node.cluster != "" {
			node = l.node
			if i := indexOf(node.links, l); i > 0 {
				node.links = append([]*link{l}, append(node.links[:i:i], node.links[i+1:]...)...)
			}
			if node.links[0].addrs[0].Addr() != a {
				b.limit("%s serves NFS on %s in the replica, not on %s (the lab's NFS server takes the node's first address)", node.name, node.links[0].addrs[0].Addr(), a)
			}
		} else if b.owner[a] == nil {
			if node = b.filer(a, s, &filers); node == nil {
				continue
			}
		} else {
			continue
		}
		if node.service(topology.KindNFS) {
			continue
		}
		node.services = append(node.services, topology.ServiceSpec{Kind: topology.KindNFS})
		b.decide("%s serves NFS (nfs-ganesha) for %s", node.name, strings.Join(s.mounts, ", "))
	}
	if len(order) > 0 {
		b.limit("NFS: the replica's server exports one directory of the lab (nfs-ganesha, NFSv3 and v4 over TCP); the nodes' mounts, their options and the server's exports are not made, so check's NFS findings are not reproduced")
	}
}

// nfsServer is an NFS server the cluster's nodes mount from.
type nfsServer struct {
	mounts []string // NODE:MOUNTPOINT
	name   string   // the mounts' name for it, when they give one
}

// nfsServers lists the servers the cluster nodes mount from, by address,
// in the order first mounted.
func (b *builder) nfsServers(cluster []*bnode) (map[netip.Addr]*nfsServer, []netip.Addr) {
	servers := map[netip.Addr]*nfsServer{}
	var order []netip.Addr
	for _, n := range cluster {
		for _, m := range n.src.Inv.Mounts {
			a, ok := serverAddr(m)
			if !ok {
				b.limit("%s: NFS mount %s from %s: the server is named and the mount shows no addr=; it is not in the replica", n.cluster, m.MountPoint, m.Server)
				continue
			}
			if servers[a] == nil {
				servers[a] = &nfsServer{}
				order = append(order, a)
			}
			servers[a].mounts = append(servers[a].mounts, n.cluster+":"+m.MountPoint)
			if _, err := netip.ParseAddr(strings.Trim(m.Server, "[]")); err != nil && servers[a].name == "" {
				servers[a].name = strings.ToLower(m.Server)
			}
		}
	}
	return servers, order
}

// filer adds a node for the NFS server at a, which is no cluster node,
// on the replica's network that holds a (named after the server, else
// filerN with *filers counting them); nil when no network holds a.
func (b *builder) filer(a netip.Addr, s *nfsServer, filers *int) *bnode {
	var sw *swtch
	for _, x := range b.sws {
		if x.contains(a) {
			sw = x
		}
	}
	if sw == nil {
		b.limit("NFS server %s (mounted by %s) is on no network of the replica: not reproduced", a, strings.Join(s.mounts, ", "))
		return nil
	}
	name := s.name
	if f, _, _ := strings.Cut(name, "."); topology.CheckName(f) == nil && len(f) <= maxLabName {
		name = b.freeName(f, 1)
	} else {
		*filers++
		name = b.freeName("filer", *filers)
	}
	node := &bnode{name: name}
	pfx, _ := prefixFor(sw, a)
	l := &link{node: node, name: "eth0", addrs: []netip.Prefix{pfx}, sw: sw, mtu: sw.mtu(), role: roleStorage}
	l.comment = []string{fmt.Sprintf("MTU %d assumed (its network's largest): the filer's own was not measured", l.mtu)}
	node.links = []*link{l}
	sw.links = append(sw.links, l)
	b.owner[a] = l
	b.nodes = append(b.nodes, node)
	b.r.comments.nodes[node.name] = []string{fmt.Sprintf("the NFS server %s the nodes mount from (%s); not a cluster node", a, strings.Join(s.mounts, ", "))}
	return node
}

// serverAddr is the address of a mount's server: the device's, else the
// addr= the kernel shows for a running mount (it resolved the name).
func serverAddr(m inventory.Mount) (netip.Addr, bool) {
	if a, err := netip.ParseAddr(strings.Trim(m.Server, "[]")); err == nil {
		return a, true
	}
	if m.Runtime != nil {
		if v, ok := m.Runtime.Get("addr"); ok {
			if a, err := netip.ParseAddr(v); err == nil {
				return a, true
			}
		}
	}
	return netip.Addr{}, false
}

func (n *bnode) service(kind string) bool {
	for _, s := range n.services {
		if s.Kind == kind {
			return true
		}
	}
	return false
}

func indexOf(ls []*link, l *link) int {
	for i, x := range ls {
		if x == l {
			return i
		}
	}
	return -1
}

// prefixFor gives address a the prefix length of its subnet on the switch.
func prefixFor(s *swtch, a netip.Addr) (netip.Prefix, bool) {
	for _, p := range s.prefixes {
		if p.Contains(a) {
			return netip.PrefixFrom(a, p.Bits()), true
		}
	}
	return netip.Prefix{}, false
}

// freeName returns base (base2, base3, ... for the i-th) unless a node
// holds that name.
func (b *builder) freeName(base string, i int) string {
	taken := map[string]bool{}
	for _, n := range b.nodes {
		taken[n.name] = true
	}
	name := base
	if i > 1 {
		name = fmt.Sprintf("%s%d", base, i)
	}
	for j := i; taken[name]; j++ {
		name = fmt.Sprintf("%s%d", base, j+1)
	}
	return name
}

// limits lists what no lab reproduces, with the cluster's own figures.
func (b *builder) limits() {
	if b.run.Mesh == nil {
		b.limit("paths were not measured (%s): switch ports stay at their switch's MTU and routers at their networks'; a blackholed port or an ICMP hop of the cluster is not in the replica (interlink cluster --collect DIR --json measures them)", b.why())
	}
	speeds := map[int64][]string{}
	kernels := map[string][]string{}
	for _, n := range b.nodes {
		if n.cluster == "" {
			continue
		}
		for _, l := range n.links {
			if sp := speed(n, l); sp > 0 {
				speeds[sp] = append(speeds[sp], n.cluster+" "+l.name)
			}
		}
		k := n.src.Inv.Node.Kernel
		if k == "" {
			k = "unknown"
		}
		kernels[k] = append(kernels[k], n.cluster)
	}
	var sp []string
	for s, ls := range speeds {
		sp = append(sp, fmt.Sprintf("%s on %s", units.FormatRate(float64(s)), strings.Join(ls, ", ")))
	}
	sort.Strings(sp)
	if len(sp) == 0 {
		sp = []string{"not known from the bundles"}
	}
	b.limit("link speed: the replica's links are not shaped (the cluster's NICs: %s); give a link a rate in the file to shape it", strings.Join(sp, "; "))
	b.limit("NIC offloads (TSO, GSO, GRO, checksums), ring sizes and interrupt coalescing: the replica's links are veth pairs")
	var ks []string
	for k, ns := range kernels {
		ks = append(ks, fmt.Sprintf("%s (%s)", k, strings.Join(ns, ", ")))
	}
	sort.Strings(ks)
	b.limit("kernel versions: the cluster runs %s; the replica runs this machine's kernel", strings.Join(ks, ", "))
	b.limit("sysctls, persisted network configuration, counters, mounts and the GPnP profile: a replica node sees this machine's, so check's findings about them are not the cluster's")
	names := make([]string, 0, len(b.run.Checks))
	for name := range b.run.Checks {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if s := notReproduced(name, b.run.Checks[name]); s != "" {
			b.limit("%s", s)
		}
	}
	for _, l := range b.run.Left {
		b.limit("not in the replica: %s", l)
	}
	v6 := false
	for _, s := range b.sws {
		for _, p := range s.prefixes {
			v6 = v6 || p.Addr().Is6()
		}
	}
	if v6 && len(b.routed) > 0 {
		b.limit("IPv6 routes: a bundle holds the IPv4 routing table only, so the replica routes IPv4 alone")
	}
}

// speed is the link's speed in the cluster: the interface's, else the sum
// of its bond's slaves' (0 unknown).
func speed(n *bnode, l *link) int64 {
	if l.ifc == nil {
		return 0
	}
	if l.ifc.SpeedBitsPerSec > 0 {
		return l.ifc.SpeedBitsPerSec
	}
	var sum int64
	if l.ifc.Bond != nil {
		for _, s := range l.ifc.Bond.Slaves {
			if s.SpeedBitsPerSec > 0 {
				sum += s.SpeedBitsPerSec
			}
		}
	}
	return sum
}

func (b *builder) why() string {
	if b.run.Kind == KindBundles {
		return "a directory of check bundles"
	}
	return "the cluster run has no mesh"
}
