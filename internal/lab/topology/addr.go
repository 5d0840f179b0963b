package topology

import (
	"fmt"
	"net/netip"
	"regexp"
	"strings"
)

var (
	labNameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)
	ifaceRE   = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_-]*$`)
	// linkRE also takes dots: a VLAN keeps its kernel name (bond0.100)
	// when a replica of a cluster builds it as a link.
	linkRE = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]*$`)
)

// checkLabName accepts lab and node names: they become parts of namespace
// names (il-LAB.NODE) and of paths.
func checkLabName(s string) error {
	if len(s) > maxNameLen {
		return fmt.Errorf("%q is longer than %d characters", s, maxNameLen)
	}
	if !labNameRE.MatchString(s) {
		return fmt.Errorf("%q: use lower-case letters, digits, '-' and '_'", s)
	}
	return nil
}

// checkIface accepts names the kernel takes as interface names (at most 15
// bytes) and that read well in ip(8) output.
func checkIface(s string) error {
	if len(s) > 15 {
		return fmt.Errorf("%q is longer than 15 characters (the kernel's interface-name limit)", s)
	}
	if !ifaceRE.MatchString(s) {
		return fmt.Errorf("%q: use letters, digits, '-' and '_'", s)
	}
	return nil
}

// checkLinkName accepts a link's name: an interface name that may hold
// dots (eth1.100), never "." or ".." (it starts with a letter, digit or
// '_').
func checkLinkName(s string) error {
	if len(s) > 15 {
		return fmt.Errorf("%q is longer than 15 characters (the kernel's interface-name limit)", s)
	}
	if !linkRE.MatchString(s) {
		return fmt.Errorf("%q: use letters, digits, '.', '-' and '_'", s)
	}
	return nil
}

// CheckLinkName says whether s can name a link of a lab node (nil) or why
// not, as Validate would.
func CheckLinkName(s string) error { return checkLinkName(s) }

// parseAddress reads ADDRESS/LEN as a topology file writes it. Whether the
// address may be used on a link is checkAddress's question.
func parseAddress(s string) (netip.Prefix, error) {
	pfx, err := netip.ParsePrefix(strings.TrimSpace(s))
	if err != nil {
		if _, aerr := netip.ParseAddr(strings.TrimSpace(s)); aerr == nil {
			return pfx, fmt.Errorf("%q has no prefix length (want e.g. 198.18.10.1/24 or fd00:10::1/64)", s)
		}
		return pfx, fmt.Errorf("%q is not an address with prefix length (want e.g. 198.18.10.1/24)", s)
	}
	return pfx, nil
}

// checkAddress accepts an address for a host on a link: not the network or
// broadcast address, nothing the kernel treats specially.
func checkAddress(pfx netip.Prefix) error {
	if !pfx.IsValid() {
		return fmt.Errorf("no address with prefix length (want e.g. 198.18.10.1/24)")
	}
	a := pfx.Addr()
	if a.Zone() != "" || a.Is4In6() || a.IsUnspecified() || a.IsLoopback() || a.IsMulticast() || a.IsLinkLocalUnicast() {
		return fmt.Errorf("%s cannot be a lab address (loopback, multicast, link-local, unspecified and mapped addresses are refused)", pfx)
	}
	if a.Is4() && pfx.Bits() < 31 {
		if a == pfx.Masked().Addr() {
			return fmt.Errorf("%s is the network address of its subnet", pfx)
		}
		if a == lastAddr(pfx) {
			return fmt.Errorf("%s is the broadcast address of its subnet", pfx)
		}
	}
	return nil
}

func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().As4()
	host := uint32(1)<<(32-p.Bits()) - 1
	v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	v |= host
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}

// assignPorts names the switch side of every link. All ports and bridges of
// a lab share one namespace, so names must be unique there and fit the
// kernel's 15 characters: NODE-LINK when that fits, else pN.
func assignPorts(t *Topology) {
	taken := map[string]bool{}
	for _, s := range t.Switches {
		taken[s.Name] = true
	}
	n := 0
	for i := range t.Nodes {
		for j := range t.Nodes[i].Links {
			l := &t.Nodes[i].Links[j]
			name := t.Nodes[i].Name + "-" + l.Name
			for len(name) > 15 || taken[name] {
				n++
				name = fmt.Sprintf("p%d", n)
			}
			taken[name] = true
			l.Port = name
		}
	}
}
