package replica

import (
	"bytes"
	"fmt"
	"io"
	"net/netip"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/interlink/interlink/internal/lab/topology"
)

// topology writes the plan as a lab topology, validated as lab up would,
// and the node map.
func (b *builder) topology(name string) (*topology.Topology, error) {
	t := &topology.Topology{Name: name}
	for _, s := range b.sws {
		t.Switches = append(t.Switches, topology.SwitchSpec{Name: s.name, MTU: s.mtu()})
	}
	for _, n := range b.nodes {
		ns := topology.NodeSpec{Name: n.name, Forward: n.forward, Routes: n.routes, Services: n.services}
		for _, l := range n.links {
			ns.Links = append(ns.Links, topology.LinkSpec{Name: l.name, Switch: l.sw.name, Addresses: l.addrs, MTU: l.mtu, PortMTU: l.portMTU()})
			b.r.comments.links[[2]string{n.name, l.name}] = strings.Join(l.comment, "; ")
		}
		t.Nodes = append(t.Nodes, ns)
		if n.cluster == "" {
			continue
		}
		head := "cluster node " + n.cluster
		if n.src.Bundle != "" {
			head += ", bundle " + n.src.Bundle
		}
		if k := n.src.Inv.Node.Kernel; k != "" {
			head += ", kernel " + k
		}
		b.r.comments.nodes[n.name] = append([]string{head}, b.r.comments.nodes[n.name]...)
		b.r.Nodes = append(b.r.Nodes, b.nodeMap(n))
	}
	if err := t.Validate(); err != nil {
		return nil, inputErr("the replica is not a lab that can be built: %v", err)
	}
	return t, nil
}

func (b *builder) nodeMap(n *bnode) NodeMap {
	m := NodeMap{Cluster: n.cluster, Lab: n.name, Bundle: n.src.Bundle, Mesh: n.src.Mesh}
	agent := netip.Addr{}
	for _, a := range append([]netip.Addr{n.src.Agent}, n.src.Mesh...) {
		if l := b.owner[a]; a.IsValid() && l != nil && l.node == n && !agent.IsValid() {
			agent = a
		}
	}
	if !agent.IsValid() {
		agent = n.links[0].addrs[0].Addr()
	}
	m.Agent = netip.AddrPortFrom(agent, topology.AgentPort)
	if c, ok := b.run.Checks[n.cluster]; ok && len(c.Interconnect) > 0 {
		m.Interconnect = c.Interconnect
	} else {
		for _, l := range n.links {
			if l.role == roleInterconnect {
				m.Interconnect = append(m.Interconnect, l.name)
			}
		}
	}
	return m
}

// WriteYAML writes the replica's topology file: the lab topology format
// (lab up reads it back as it is), with comments that say where each node
// came from, what each link is in the cluster and what was taken from the
// measured paths, and the limits at the head.
func (r *Replica) WriteYAML(w io.Writer) error {
	v, err := r.Topology.MarshalYAML()
	if err != nil {
		return err
	}
	root := v.(*yaml.Node)
	var head []string
	head = append(head, fmt.Sprintf("A replica of the cluster run %s, made by interlink lab replica.", r.From))
	if !r.Measured {
		head = append(head, "Paths were not measured: ports and routers are at their networks' MTUs.")
	}
	head = append(head, "Edit it freely; 'interlink lab up FILE' builds it. It cannot reproduce:")
	for _, l := range r.Limits {
		head = append(head, "  - "+l)
	}
	root.HeadComment = comment(head...)
	for i := 0; i+1 < len(root.Content); i += 2 {
		key, val := root.Content[i], root.Content[i+1]
		switch key.Value {
		case "switches":
			for j := 0; j+1 < len(val.Content); j += 2 {
				val.Content[j+1].LineComment = comment(r.comments.sws[val.Content[j].Value])
			}
		case "nodes":
			for j := 0; j+1 < len(val.Content); j += 2 {
				name := val.Content[j].Value
				val.Content[j].HeadComment = comment(r.comments.nodes[name]...)
				r.linkComments(name, val.Content[j+1])
			}
		}
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(root); err != nil {
		return err
	}
	if err := enc.Close(); err != nil {
		return err
	}
	// What lab up will read must be what was planned.
	if _, err := topology.Parse("replica", buf.Bytes()); err != nil {
		return fmt.Errorf("replica: the topology written does not read back: %w", err)
	}
	_, err = w.Write(buf.Bytes())
	return err
}

func (r *Replica) linkComments(node string, n *yaml.Node) {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value != "links" {
			continue
		}
		for _, l := range n.Content[i+1].Content {
			for k := 0; k+1 < len(l.Content); k += 2 {
				if l.Content[k].Value == "name" {
					l.LineComment = comment(r.comments.links[[2]string{node, l.Content[k+1].Value}])
				}
			}
		}
	}
}

// comment makes YAML comment text of lines, one "# " each, with newlines
// and other control characters in them made blanks.
func comment(lines ...string) string {
	var out []string
	for _, l := range lines {
		if l == "" {
			continue
		}
		l = strings.Map(func(r rune) rune {
			if r < 0x20 || r == 0x7f {
				return ' '
			}
			return r
		}, l)
		out = append(out, "# "+l)
	}
	return strings.Join(out, "\n")
}

// WriteNodes writes a nodes file for interlink mesh --nodes in the
// replica: each node by its name in the run (so that interlink diff
// compares the two meshes path by path), its agent in the replica, and its
// interconnect addresses in the run's mesh order.
func (r *Replica) WriteNodes(w io.Writer) error {
	var b strings.Builder
	b.WriteString("# nodes for interlink mesh --nodes: the run's node names, their agents in the replica, the run's interconnect addresses\n")
	for _, n := range r.Nodes {
		fmt.Fprintf(&b, "%s %s", n.Cluster, n.Agent)
		for _, a := range n.Mesh {
			fmt.Fprintf(&b, " %s", a)
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
