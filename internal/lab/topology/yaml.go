package topology

import (
	"strconv"

	"gopkg.in/yaml.v3"
)

// MarshalYAML writes t in the topology file format, every default spelled
// out, so that yaml.Marshal(t) is a file Parse reads back as t (with the
// File it is given). The switch side of links (Port) is not in the file:
// Validate names it again the same way.
func (t *Topology) MarshalYAML() (any, error) {
	root := mapNode()
	add(root, "name", str(t.Name))
	if len(t.Switches) > 0 {
		sws := mapNode()
		for _, s := range t.Switches {
			sw := flowMap()
			add(sw, "mtu", num(int64(s.MTU)))
			add(sws, s.Name, sw)
		}
		add(root, "switches", sws)
	}
	nodes := mapNode()
	for _, n := range t.Nodes {
		add(nodes, n.Name, nodeYAML(n))
	}
	add(root, "nodes", nodes)
	return root, nil
}

// nodeYAML is a node's mapping: forward, vm, links, routes, services.
func nodeYAML(n NodeSpec) *yaml.Node {
	nn := mapNode()
	if n.Forward {
		add(nn, "forward", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: "true"})
	}
	if n.VM != nil {
		add(nn, "vm", vmYAML(n.VM))
	}
	if len(n.Links) > 0 {
		links := &yaml.Node{Kind: yaml.SequenceNode}
		for _, l := range n.Links {
			links.Content = append(links.Content, linkYAML(l))
		}
		add(nn, "links", links)
	}
	if len(n.Routes) > 0 {
		routes := &yaml.Node{Kind: yaml.SequenceNode}
		for _, r := range n.Routes {
			rn := flowMap()
			add(rn, "to", str(r.To.String()))
			add(rn, "via", str(r.Via.String()))
			routes.Content = append(routes.Content, rn)
		}
		add(nn, "routes", routes)
	}
	if len(n.Services) > 0 {
		svcs := &yaml.Node{Kind: yaml.SequenceNode}
		for _, s := range n.Services {
			svcs.Content = append(svcs.Content, serviceYAML(s))
		}
		add(nn, "services", svcs)
	}
	if len(nn.Content) == 0 {
		nn.Style = yaml.FlowStyle // n1: {}
	}
	return nn
}

// linkYAML is one link, MTUs spelled out.
func linkYAML(l LinkSpec) *yaml.Node {
	ln := flowMap()
	add(ln, "name", str(l.Name))
	add(ln, "switch", str(l.Switch))
	if len(l.Addresses) > 0 {
		as := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
		for _, a := range l.Addresses {
			as.Content = append(as.Content, str(a.String()))
		}
		add(ln, "addresses", as)
	}
	add(ln, "mtu", num(int64(l.MTU)))
	add(ln, "port_mtu", num(int64(l.PortMTU)))
	if l.RateBitsPerSec != 0 {
		add(ln, "rate", num(l.RateBitsPerSec))
	}
	if l.LossPercent != 0 {
		add(ln, "loss", str(FormatLoss(l.LossPercent)))
	}
	return ln
}

// serviceYAML is one service; sync is spelled out for a PostgreSQL
// standby, where it is a choice.
func serviceYAML(s ServiceSpec) *yaml.Node {
	sn := flowMap()
	add(sn, "kind", str(s.Kind))
	for _, kv := range [][2]string{{"role", s.Role}, {"primary", s.Primary}, {"via", s.Via}} {
		if kv[1] != "" {
			add(sn, kv[0], str(kv[1]))
		}
	}
	if s.Kind == KindPostgres && s.Role == RoleStandby || s.Sync {
		add(sn, "sync", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(s.Sync)})
	}
	if s.Port != 0 {
		add(sn, "port", num(int64(s.Port)))
	}
	return sn
}

// vmYAML is a node's vm: mapping, every default spelled out.
func vmYAML(v *VMSpec) *yaml.Node {
	vn := flowMap()
	for _, kv := range [][2]string{{"kernel", v.Kernel}, {"modules", v.Modules}} {
		if kv[1] != "" {
			add(vn, kv[0], str(kv[1]))
		}
	}
	add(vn, "memory", num(v.MemoryBytes))
	add(vn, "cpus", num(int64(v.CPUs)))
	return vn
}

func mapNode() *yaml.Node { return &yaml.Node{Kind: yaml.MappingNode} }
func flowMap() *yaml.Node { return &yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle} }

// str is a string that stays one when read back (yaml quotes "true",
// "1.5" or "null" as needed).
func str(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }

func num(v int64) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.FormatInt(v, 10)}
}

func add(m *yaml.Node, key string, val *yaml.Node) {
	m.Content = append(m.Content, str(key), val)
}
