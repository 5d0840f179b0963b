package inventory

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

const netplanDir = "/etc/netplan"

// netplanKinds are the device sections of a netplan file and the type each
// declares.
var netplanKinds = []struct{ section, typ string }{
	{"ethernets", "ethernet"}, {"bonds", "bond"}, {"bridges", "bridge"}, {"vlans", "vlan"}, {"wifis", "wifi"},
}

// gatherNetplan reads /etc/netplan/*.yaml. Netplan merges the files in
// lexical order, later keys overriding earlier ones, so the MTU reported
// for an interface is the last one set and its file is where it was set.
func gatherNetplan(src *Source) ([]PersistedConfig, []string, bool) {
	cfgs, problems, found := readEach(src, netplanDir, func(n string) bool { return strings.HasSuffix(n, ".yaml") },
		func(text, file string) ([]PersistedConfig, error) { return ParseNetplan([]byte(text), file) })
	byName := map[string]*PersistedConfig{}
	var order []string
	for _, c := range cfgs {
		old := byName[c.Interface]
		if old == nil {
			cc := c
			byName[c.Interface] = &cc
			order = append(order, c.Interface)
			continue
		}
		if c.MTU != 0 {
			old.MTU, old.MTULine, old.File = c.MTU, c.MTULine, c.File
		}
		if c.Master != "" {
			old.Master = c.Master
		}
	}
	out := make([]PersistedConfig, 0, len(order))
	for _, n := range order {
		out = append(out, *byName[n])
	}
	return out, problems, found
}

// ParseNetplan parses one netplan YAML file. Devices are named by their key,
// or by set-name / a literal match.name when the key is only an id.
func ParseNetplan(b []byte, file string) ([]PersistedConfig, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%s: %v", file, err)
	}
	if len(doc.Content) == 0 {
		return nil, nil
	}
	network := mapValue(doc.Content[0], "network")
	if network == nil {
		return nil, nil
	}
	var out []PersistedConfig
	var ids []string               // the key of each entry of out
	masters := map[string]string{} // member id -> master's interface
	for _, k := range netplanKinds {
		sec := mapValue(network, k.section)
		if sec == nil || sec.Kind != yaml.MappingNode {
			continue
		}
		for i := 0; i+1 < len(sec.Content); i += 2 {
			id, dev := sec.Content[i].Value, sec.Content[i+1]
			c := PersistedConfig{Interface: id, File: file, Format: "netplan", Type: k.typ, OnBoot: true}
			if n := mapValue(dev, "set-name"); n != nil {
				c.Interface = n.Value
			} else if m := mapValue(mapValue(dev, "match"), "name"); m != nil && !strings.ContainsAny(m.Value, "*?[") {
				c.Interface = m.Value
			}
			if m := mapValue(dev, "mtu"); m != nil {
				if v, err := strconv.Atoi(m.Value); err == nil {
					c.MTU, c.MTULine = v, m.Line
				}
			}
			if a := mapValue(dev, "activation-mode"); a != nil && a.Value == "off" {
				c.OnBoot = false
			}
			if ifs := mapValue(dev, "interfaces"); ifs != nil && ifs.Kind == yaml.SequenceNode {
				for _, s := range ifs.Content {
					masters[s.Value] = c.Interface
				}
			}
			out = append(out, c)
			ids = append(ids, id)
		}
	}
	// bonds and bridges list their members by id; the ids are the keys of
	// ethernets (or other sections) in the same file.
	for i := range out {
		if m, ok := masters[ids[i]]; ok {
			out[i].Master = m
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Interface < out[j].Interface })
	return out, nil
}

// mapValue returns the value of key in a YAML mapping node, or nil.
func mapValue(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}
