package cluster

import (
	"fmt"
	"io"
	"net/netip"
	"path"
	"strings"

	"github.com/interlink/interlink/internal/inventory"
	"github.com/interlink/interlink/internal/termtext"
)

// InterconnectAddrs finds a node's address on each interconnect network:
// for network i of nets, the first address of an interface whose name the
// network's Adapter matches (a name or a pattern like eth*) that lies in
// the network's Subnet (the subnet's address as GPnP and oifcfg give it,
// without a length: the interface address's own prefix decides). Without
// a Subnet, the interface's first address that is not link-local. The
// result has one entry per network; a network the node has no address on
// is the zero Addr, and why is in missing (one line per network).
// Link-local addresses (169.254/16, fe80::/10: Oracle's HAIP) never
// count: they are assigned at run time and not what the cluster was set
// up with.
func InterconnectAddrs(ifs []inventory.Interface, nets []inventory.ClusterNetwork) (addrs []netip.Addr, missing []string) {
	addrs = make([]netip.Addr, len(nets))
	for i, n := range nets {
		subnet, _ := netip.ParseAddr(strings.TrimSpace(n.Subnet))
		subnet = subnet.Unmap()
		var names []string
	find:
		for _, ifc := range ifs {
			if ok, _ := path.Match(n.Adapter, ifc.Name); n.Adapter != "" && !ok {
				continue
			}
			names = append(names, ifc.Name)
			for _, a := range ifc.Addresses {
				p, err := netip.ParsePrefix(a)
				if err != nil {
					continue
				}
				ip := p.Addr().Unmap()
				if ip.IsLinkLocalUnicast() || ip.IsLoopback() {
					continue
				}
				if subnet.IsValid() && netip.PrefixFrom(ip, p.Bits()).Masked().Addr() != subnet {
					continue
				}
				addrs[i] = ip
				break find
			}
		}
		if !addrs[i].IsValid() {
			where := "no interface named " + n.Adapter
			if len(names) > 0 {
				where = "no address"
				if subnet.IsValid() {
					where += " in subnet " + subnet.String()
				}
				where += " on " + strings.Join(names, ", ")
			}
			missing = append(missing, fmt.Sprintf("interconnect network %d (%s/%s): %s", i+1, n.Adapter, n.Subnet, where))
		}
	}
	return addrs, missing
}

// nodeNetworks returns the interconnect networks a node's own check read
// from its GPnP profile, else fallback (this host's).
func nodeNetworks(n *NodeResult, fallback []inventory.ClusterNetwork) []inventory.ClusterNetwork {
	if n.Check != nil && n.Check.Inventory != nil && n.Check.Inventory.Cluster != nil {
		if nets := interconnects(n.Check.Inventory.Cluster.Networks); len(nets) > 0 {
			return nets
		}
	}
	return fallback
}

// alignInterconnect fills the Interconnect of the nodes (whose check ran)
// from their own interfaces, for a run whose nodes came from the
// clusterware. The mesh pairs the i-th address of every node, so a
// network on which some node has no address is dropped for all, with a
// note naming the node and the network; the node keeps its other ones.
func alignInterconnect(cw *Clusterware, nodes []*NodeResult) {
	var cols int
	per := make([][]netip.Addr, len(nodes))
	for i, n := range nodes {
		if n.Check == nil || n.Check.Inventory == nil {
			continue
		}
		nets := nodeNetworks(n, cw.Networks)
		if len(nets) == 0 {
			cw.Notes = append(cw.Notes, n.Name+": no cluster_interconnect network in its GPnP profile nor in "+cw.GridHome+": probed on its SSH address")
			continue
		}
		a, missing := InterconnectAddrs(n.Check.Inventory.Interfaces, nets)
		per[i] = a
		cols = max(cols, len(a))
		for _, m := range missing {
			cw.Notes = append(cw.Notes, n.Name+": "+m+": that network is left out of the mesh")
		}
	}
	keep := make([]bool, cols)
	for c := range keep {
		keep[c] = true
		for _, a := range per {
			if a != nil && (c >= len(a) || !a[c].IsValid()) {
				keep[c] = false
			}
		}
	}
	for i, n := range nodes {
		n.Interconnect = nil
		for c, a := range per[i] {
			if keep[c] {
				n.Interconnect = append(n.Interconnect, a)
			}
		}
		if per[i] != nil {
			n.InterconnectFrom = "clusterware"
		}
	}
}

// renderClusterware says where the nodes and their interconnect addresses
// came from, when that was the clusterware.
func renderClusterware(w io.Writer, res *Result) {
	cw := res.Clusterware
	if cw == nil {
		return
	}
	from := cw.NodesFrom
	if from == "olsnodes" {
		from = cw.GridHome + "/bin/olsnodes"
	}
	fmt.Fprintf(w, "nodes from Oracle Clusterware: %s (%s)\n", strings.Join(cw.Nodes, ", "), termtext.Clean(from))
	if cw.OLSNodes != "" {
		fmt.Fprintf(w, "  olsnodes not used: %s\n", termtext.Clean(cw.OLSNodes))
	}
	var nets []string
	for _, n := range cw.Networks {
		nets = append(nets, n.Adapter+"/"+n.Subnet)
	}
	fmt.Fprintf(w, "interconnect networks: %s (%s); each node's addresses on them, found on the node:\n", orDash(strings.Join(nets, ", ")), termtext.Clean(cw.NetworksFrom))
	for _, n := range res.Nodes {
		if n.InterconnectFrom == "clusterware" {
			var a []string
			for _, ip := range n.Interconnect {
				a = append(a, ip.String())
			}
			fmt.Fprintf(w, "  %s: %s\n", termtext.Clean(n.Name), orDash(strings.Join(a, ", ")))
		}
	}
	for _, note := range cw.Notes {
		fmt.Fprintf(w, "  note: %s\n", termtext.Clean(note))
	}
}
