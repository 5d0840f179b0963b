package cluster

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// yamlGroup is one group of an Ansible YAML inventory.
type yamlGroup struct {
	Hosts    map[string]map[string]any `yaml:"hosts"`
	Vars     map[string]any            `yaml:"vars"`
	Children map[string]*yamlGroup     `yaml:"children"`
	order    []string                  // host names in file order
	children []string                  // child names in file order
}

// UnmarshalYAML keeps the file order of hosts and children, which decides
// the order of the report.
func (g *yamlGroup) UnmarshalYAML(n *yaml.Node) error {
	type plain yamlGroup
	if err := n.Decode((*plain)(g)); err != nil {
		return err
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i].Value, n.Content[i+1]
		if k != "hosts" && k != "children" || v.Kind != yaml.MappingNode {
			continue
		}
		for j := 0; j < len(v.Content); j += 2 {
			if k == "hosts" {
				g.order = append(g.order, v.Content[j].Value)
			} else {
				g.children = append(g.children, v.Content[j].Value)
			}
		}
	}
	return nil
}

// simpleNode is one entry of the simple YAML form (nodes: [...]).
type simpleNode struct {
	Name         string `yaml:"name"`
	Host         string `yaml:"host"`
	User         string `yaml:"user"`
	Port         int    `yaml:"port"`
	Identity     string `yaml:"identity"`
	Interconnect any    `yaml:"interconnect"` // "a,b" or [a, b]
}

func parseYAML(data []byte, file string) ([]Host, error) {
	var top yaml.Node
	if err := yaml.Unmarshal(data, &top); err != nil {
		return nil, fmt.Errorf("%s: %s", file, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if len(top.Content) == 0 || top.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s: want a YAML mapping (an Ansible inventory, or nodes: [...])", file)
	}
	root := top.Content[0]
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "nodes" && root.Content[i+1].Kind == yaml.SequenceNode {
			return parseSimple(root.Content[i+1], file)
		}
	}
	t := newTree()
	for i := 0; i+1 < len(root.Content); i += 2 {
		name := root.Content[i].Value
		var g yamlGroup
		if err := root.Content[i+1].Decode(&g); err != nil {
			return nil, fmt.Errorf("%s: group %s: %s", file, name, strings.TrimPrefix(err.Error(), "yaml: "))
		}
		if err := addYAMLGroup(t, name, &g, 0); err != nil {
			return nil, fmt.Errorf("%s: %v", file, err)
		}
	}
	return t.hosts(file)
}

func addYAMLGroup(t *tree, name string, g *yamlGroup, depth int) error {
	if depth > 32 {
		return fmt.Errorf("group %s: nested more than 32 deep", name)
	}
	tg := t.group(name)
	for k, v := range g.Vars {
		tg.vars[k] = scalar(v)
	}
	for _, h := range g.order {
		v := vars{}
		for k, val := range g.Hosts[h] {
			v[k] = scalar(val)
		}
		names, err := expand(h)
		if err != nil {
			return err
		}
		for _, n := range names {
			if err := t.addHost(tg, n, v); err != nil {
				return err
			}
		}
	}
	for _, c := range g.children {
		tg.children = append(tg.children, c)
		child := g.Children[c]
		if child == nil {
			child = &yamlGroup{}
		}
		if err := addYAMLGroup(t, c, child, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// scalar turns a YAML value into the string Ansible would template it to;
// a list becomes comma separated (interconnect: [a, b]).
func scalar(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case []any:
		s := make([]string, len(x))
		for i, e := range x {
			s[i] = scalar(e)
		}
		return strings.Join(s, ",")
	default:
		return fmt.Sprint(x)
	}
}

func parseSimple(seq *yaml.Node, file string) ([]Host, error) {
	var nodes []simpleNode
	if err := seq.Decode(&nodes); err != nil {
		return nil, fmt.Errorf("%s: nodes: %s", file, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if len(nodes) > maxHosts {
		return nil, fmt.Errorf("%s: %d nodes, at most %d", file, len(nodes), maxHosts)
	}
	var out []Host
	for i, n := range nodes {
		if n.Name == "" {
			n.Name = n.Host
		}
		if n.Name == "" {
			return nil, fmt.Errorf("%s: nodes[%d]: want name or host", file, i)
		}
		if n.Port < 0 || n.Port > 65535 {
			return nil, fmt.Errorf("%s: node %s: port %d is not a port number", file, n.Name, n.Port)
		}
		ic, err := ParseAddrs(scalar(n.Interconnect))
		if err != nil {
			return nil, fmt.Errorf("%s: node %s: interconnect: %v", file, n.Name, err)
		}
		out = append(out, Host{Name: n.Name, Address: n.Host, User: n.User, Port: n.Port, Identity: n.Identity, Interconnect: ic})
	}
	return out, nil
}
