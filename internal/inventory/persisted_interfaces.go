package inventory

import (
	"bufio"
	"fmt"
	"path"
	"strconv"
	"strings"
)

const interfacesFile = "/etc/network/interfaces"

// gatherInterfacesFile reads Debian's ifupdown configuration, following
// "source" and "source-directory" lines (interfaces.d).
func gatherInterfacesFile(src *Source) ([]PersistedConfig, []string, bool) {
	p := &ifupdown{src: src, seen: map[string]bool{}, stanzas: map[string]*PersistedConfig{},
		auto: map[string]bool{}, bridgePort: map[string]string{}}
	b, err := src.ReadFile(interfacesFile)
	if err != nil {
		if isNotExist(err) {
			return nil, nil, false
		}
		return nil, []string{interfacesFile + ": " + errText(err)}, true
	}
	p.parse(string(b), interfacesFile, 0)
	for port, bridge := range p.bridgePort {
		if c := p.stanzas[port]; c != nil {
			c.Master = bridge
		}
	}
	var out []PersistedConfig
	for _, name := range p.order {
		c := p.stanzas[name]
		c.OnBoot = p.auto[name]
		if name == "lo" {
			continue
		}
		out = append(out, *c)
	}
	return out, p.problems, true
}

type ifupdown struct {
	src      *Source
	seen     map[string]bool
	stanzas  map[string]*PersistedConfig
	order    []string
	auto     map[string]bool
	problems []string
	// bridgePort maps a port to its bridge: bridge_ports names ports that
	// may have no stanza of their own, or one further down.
	bridgePort map[string]string
}

func (p *ifupdown) parse(text, file string, depth int) {
	if depth > 8 || p.seen[file] {
		return
	}
	p.seen[file] = true
	var cur *PersistedConfig
	sc := bufio.NewScanner(strings.NewReader(joinContinued(text)))
	n := 0
	for sc.Scan() {
		n++
		f := strings.Fields(sc.Text())
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		switch f[0] {
		case "auto", "allow-auto", "allow-hotplug":
			for _, name := range f[1:] {
				p.auto[name] = true
			}
			cur = nil
		case "iface":
			if len(f) < 2 {
				continue
			}
			name := f[1]
			c := p.stanzas[name]
			if c == nil {
				c = &PersistedConfig{Interface: name, File: file, Format: "interfaces"}
				p.stanzas[name] = c
				p.order = append(p.order, name)
			}
			cur = c
		case "mapping":
			cur = nil
		case "source", "source-directory":
			cur = nil
			if len(f) >= 2 {
				p.include(f[0], f[1], file, depth)
			}
		default:
			if cur != nil {
				p.option(cur, f, file, n)
			}
		}
	}
}

// option applies one option line of an iface stanza.
func (p *ifupdown) option(c *PersistedConfig, f []string, file string, line int) {
	setMTU := func(v string) {
		if m, err := strconv.Atoi(v); err == nil {
			c.MTU, c.MTULine, c.File = m, line, file
		}
	}
	switch f[0] {
	case "mtu":
		if len(f) >= 2 {
			setMTU(f[1])
		}
	case "bond-master", "bond_master":
		if len(f) >= 2 {
			c.Master = f[1]
		}
	case "bond-slaves", "bond_slaves", "bond-mode", "bond_mode":
		c.Type = "bond"
	case "bridge-ports", "bridge_ports":
		c.Type = "bridge"
		for _, port := range f[1:] {
			if port != "none" {
				p.bridgePort[port] = c.Interface
			}
		}
	case "vlan-raw-device", "vlan_raw_device":
		c.Type = "vlan"
	case "up", "post-up", "pre-up":
		// The classic jumbo recipe: "post-up ip link set dev eth1 mtu 9000"
		// or "post-up /sbin/ifconfig eth1 mtu 9000".
		for i := 1; i+1 < len(f); i++ {
			if f[i] == "mtu" && strings.Contains(strings.Join(f[1:i], " "), c.Interface) {
				setMTU(f[i+1])
			}
		}
	}
}

func (p *ifupdown) include(kind, pattern, from string, depth int) {
	if !path.IsAbs(pattern) {
		pattern = path.Join(path.Dir(from), pattern)
	}
	var files []string
	if kind == "source-directory" {
		// run-parts naming: letters, digits, underscores and hyphens only.
		list, problem := listDir(p.src, pattern, func(n string) bool {
			return strings.Trim(n, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") == ""
		})
		if problem != "" {
			p.problems = append(p.problems, problem)
		}
		files = list
	} else {
		m, err := p.src.Glob(pattern)
		if err != nil {
			p.problems = append(p.problems, fmt.Sprintf("%s: bad source pattern %q", from, pattern))
		}
		files = m
	}
	for _, f := range files {
		b, err := p.src.ReadFile(f)
		if err != nil {
			p.problems = append(p.problems, f+": "+errText(err))
			continue
		}
		p.parse(string(b), f, depth+1)
	}
}

// joinContinued joins lines ending in a backslash, as ifupdown does, and
// leaves an empty line for each joined one so line numbers stay right.
func joinContinued(s string) string {
	lines := strings.Split(s, "\n")
	for i := 0; i < len(lines); i++ {
		for j := i + 1; strings.HasSuffix(lines[i], "\\") && j < len(lines); j++ {
			lines[i] = strings.TrimSuffix(lines[i], "\\") + " " + lines[j]
			lines[j] = ""
		}
	}
	return strings.Join(lines, "\n")
}
