package rules

import (
	"fmt"
	"net/netip"
	"sort"
	"strconv"
	"strings"

	"github.com/interlink/interlink/internal/inventory"
	"github.com/interlink/interlink/internal/shellq"
)

func init() {
	register(
		Rule{ID: "NET-IC-MISSING", Severity: Critical, Title: "an interconnect interface does not exist on this node",
			Source: "Oracle Real Application Clusters Administration and Deployment Guide (the private interconnect carries Cache Fusion); Oracle Clusterware Administration and Deployment Guide (oifcfg, cluster_interconnect)",
			Check:  checkICMissing},
		Rule{ID: "NET-IC-DOWN", Severity: Critical, Title: "an interconnect interface is down or has no carrier",
			Source: "Oracle Real Application Clusters Administration and Deployment Guide (the private interconnect carries Cache Fusion); Oracle Clusterware Administration and Deployment Guide (oifcfg, cluster_interconnect)",
			Check:  checkICDown},
		Rule{ID: "NET-IC-NOT-PERSISTED", Severity: Warning, Title: "an interconnect interface is not in the persisted network configuration (or not brought up at boot)",
			Source: "Oracle Grid Infrastructure Installation Guide (network interfaces must be configured identically on every node and at boot); Oracle Linux and RHEL networking guides (ONBOOT, autoconnect); docs/sources.md",
			Check:  checkICNotPersisted},
		Rule{ID: "NET-IC-MTU", Severity: Warning, Title: "interconnect MTU below 9000: every 8 KiB block is fragmented",
			Source: "RFC 791 (fragmentation); My Oracle Support note 341788.1 (jumbo frames for the RAC interconnect); docs/sources.md (fragments per message: one 8 KiB block per frame at 9000)",
			Check:  checkICMTU},
		Rule{ID: "NET-IC-MTU-MISMATCH", Severity: Critical, Title: "interconnect interfaces have different MTUs",
			Source: "RFC 1191 (path MTU: the smallest MTU on the path); My Oracle Support note 341788.1 (every device on the interconnect must have the same MTU); docs/sources.md",
			Check:  checkICMTUMismatch},
		Rule{ID: "NET-IC-MULTICAST", Severity: Warning, Title: "multicast is disabled on an interconnect interface",
			Source: "Oracle Grid Infrastructure Installation Guide, multicast requirements (230.0.1.0/24 and 224.0.0.251 on the private network); My Oracle Support note 1212703.1",
			Check:  checkICMulticast},
		Rule{ID: "NET-RP-FILTER", Severity: Critical, Title: "strict rp_filter with two or more interconnect NICs",
			Source: "My Oracle Support note 1286796.1 (rp_filter with several private interconnect NICs); kernel Documentation/networking/ip-sysctl.rst (rp_filter: the maximum of conf/all and conf/IFACE)",
			Check:  checkRPFilter},
		Rule{ID: "NET-HAIP", Severity: Warning, Title: "169.254.0.0/16 (reserved for Oracle HAIP) used outside the interconnect",
			Source: "Oracle Grid Infrastructure Installation Guide (Redundant Interconnect Usage: HAIP takes addresses in 169.254.0.0/16); RFC 3927 (link-local addresses)",
			Check:  checkHAIP},
	)
}

func checkICMissing(inv *inventory.Inventory, cfg *Config) []Finding {
	if sec := inv.Section("interfaces"); sec == nil || sec.Status != "ok" {
		return nil // cannot tell absent from unreadable
	}
	_, missing := interconnect(inv, cfg)
	var out []Finding
	for _, n := range missing {
		names := make([]string, 0, len(inv.Interfaces))
		for _, ifc := range inv.Interfaces {
			names = append(names, ifc.Name)
		}
		out = append(out, Finding{Severity: Critical, Object: "interface " + n,
			Message:  fmt.Sprintf("%s is named as interconnect but does not exist on this node", n),
			Evidence: []Evidence{{What: "interfaces", Value: strings.Join(names, " "), File: "/sys/class/net"}},
			Fix:      fmt.Sprintf("check the name (oifcfg getif lists the cluster's networks) or create and persist %s", shellq.Quote(n))})
	}
	return out
}

func checkICDown(inv *inventory.Inventory, cfg *Config) []Finding {
	present, _ := interconnect(inv, cfg)
	var out []Finding
	for _, ifc := range present {
		// Up with the carrier not known (a virtual link that gives none)
		// is no finding: only a carrier the kernel says is 0 is.
		if ifc.Up() && (ifc.Carrier == nil || *ifc.Carrier != 0) {
			continue
		}
		ev := []Evidence{{What: ifc.Name + " operstate", Value: ifc.OperState, File: ifc.File("operstate")}}
		if ifc.Carrier != nil {
			ev = append(ev, Evidence{What: ifc.Name + " carrier", Value: strconv.Itoa(*ifc.Carrier), File: ifc.File("carrier")})
		}
		out = append(out, Finding{Severity: Critical, Object: "interface " + ifc.Name,
			Message:  fmt.Sprintf("interconnect interface is %s: the node cannot reach the other nodes' instances over it", orUnknown(ifc.OperState)),
			Evidence: ev,
			Fix:      fmt.Sprintf("ip link set dev %s up; check the cable, the switch port and the link (ethtool %[1]s)", shellq.Quote(ifc.Name))})
	}
	return out
}

func orUnknown(s string) string {
	if s == "" {
		return "not up"
	}
	return s
}

func checkICNotPersisted(inv *inventory.Inventory, cfg *Config) []Finding {
	if sec := inv.Section("persisted"); sec == nil || sec.Status != "ok" {
		return nil // absent or partly unreadable: no evidence either way
	}
	present, _ := interconnect(inv, cfg)
	var out []Finding
	for _, ifc := range present {
		cs := inv.PersistedFor(ifc.Name)
		var files []string
		onboot := false
		for _, c := range cs {
			files = append(files, c.File)
			onboot = onboot || c.OnBoot
		}
		switch {
		case len(cs) == 0:
			out = append(out, Finding{Severity: Warning, Object: "interface " + ifc.Name,
				Message:  "interconnect interface has no persisted configuration: its address and MTU are gone after a reboot",
				Evidence: []Evidence{{What: "persisted configurations", Value: persistedSummary(inv), File: ""}},
				Fix:      fmt.Sprintf("write a configuration for %s (%s, a NetworkManager connection or netplan) with its address and MTU %d", shellq.Quote(ifc.Name), shellq.Quote("ifcfg-"+ifc.Name), ifc.MTU)})
		case !onboot:
			out = append(out, Finding{Severity: Warning, Object: "interface " + ifc.Name,
				Message:  "interconnect interface is not brought up at boot",
				Evidence: []Evidence{{What: "onboot", Value: "no", File: strings.Join(files, ", ")}},
				Fix:      fmt.Sprintf("set ONBOOT=yes (ifcfg), autoconnect=true (NetworkManager) or add an auto line for %s (interfaces)", shellq.Quote(ifc.Name))})
		}
	}
	return out
}

// persistedSummary lists which interfaces have a persisted configuration,
// as evidence that the missing one was looked for.
func persistedSummary(inv *inventory.Inventory) string {
	seen := map[string]bool{}
	var names []string
	for _, c := range inv.Persisted {
		if !seen[c.Interface] {
			seen[c.Interface] = true
			names = append(names, c.Interface)
		}
	}
	if len(names) == 0 {
		return "none"
	}
	return "only " + strings.Join(names, ", ")
}

func checkICMTU(inv *inventory.Inventory, cfg *Config) []Finding {
	present, _ := interconnect(inv, cfg)
	var out []Finding
	for _, ifc := range present {
		if ifc.MTU >= jumboMTU || ifc.Type == "loopback" {
			continue
		}
		out = append(out, Finding{Severity: Warning, Object: "interface " + ifc.Name,
			Message: fmt.Sprintf("interconnect MTU %d: every 8 KiB block becomes %d IP fragments (1 packet at 9000), and one lost fragment loses the block",
				ifc.MTU, Fragments(blockBytes, ifc.MTU)),
			Evidence: []Evidence{mtuEvidence(ifc)},
			Fix: fmt.Sprintf("in a maintenance window set MTU 9000 on %s, its slaves and every switch port on the path, persist it, and prove it with 'interlink pmtu' to each peer",
				shellq.Quote(ifc.Name))})
	}
	return out
}

func checkICMTUMismatch(inv *inventory.Inventory, cfg *Config) []Finding {
	present, _ := interconnect(inv, cfg)
	mtus := map[int]bool{}
	var ev []Evidence
	for _, ifc := range present {
		mtus[ifc.MTU] = true
		ev = append(ev, mtuEvidence(ifc))
	}
	if len(mtus) < 2 {
		return nil
	}
	var list []int
	for m := range mtus {
		list = append(list, m)
	}
	sort.Ints(list)
	return []Finding{{Severity: Critical, Object: "interconnect",
		Message: fmt.Sprintf("interconnect interfaces have different MTUs (%s): blocks sent on one path fit, on the other they fragment or vanish",
			strings.Trim(fmt.Sprint(list), "[]")),
		Evidence: ev,
		Fix:      fmt.Sprintf("give every interconnect interface on every node the same MTU (%d) and persist it", list[len(list)-1])}}
}

func checkICMulticast(inv *inventory.Inventory, cfg *Config) []Finding {
	present, _ := interconnect(inv, cfg)
	var out []Finding
	for _, ifc := range present {
		if ifc.Flags == 0 || ifc.Flags&inventory.FlagMulticast != 0 {
			continue
		}
		out = append(out, Finding{Severity: Warning, Object: "interface " + ifc.Name,
			Message:  "multicast is off on the interconnect: Clusterware (mDNS 224.0.0.251, 230.0.1.0/24) cannot use it",
			Evidence: []Evidence{{What: ifc.Name + " flags", Value: fmt.Sprintf("0x%x (IFF_MULTICAST 0x1000 not set)", ifc.Flags), File: ifc.File("flags")}},
			Fix:      fmt.Sprintf("ip link set dev %s multicast on, and find what turned it off (a NOARP/MULTICAST option in its configuration)", shellq.Quote(ifc.Name))})
	}
	return out
}

func checkRPFilter(inv *inventory.Inventory, cfg *Config) []Finding {
	present, _ := interconnect(inv, cfg)
	if len(present) < 2 {
		return nil
	}
	all, allEv, ok := sysctlInt(inv, "net.ipv4.conf.all.rp_filter")
	if !ok {
		return nil
	}
	ev := []Evidence{allEv}
	var strict, fixes []string
	for _, ifc := range present {
		name := inventory.SysctlName("net.ipv4.conf", ifc.Name, "rp_filter")
		v, e, ok := sysctlInt(inv, name)
		if !ok {
			continue
		}
		ev = append(ev, e)
		if max(all, v) == 1 {
			strict = append(strict, ifc.Name)
			fixes = append(fixes, name+"=2")
		}
	}
	if len(strict) == 0 {
		return nil
	}
	return []Finding{{Severity: Critical, Object: "interconnect",
		Message: fmt.Sprintf("strict reverse-path filtering (effective rp_filter = max(all, interface) = 1) on %s with %d interconnect NICs: the kernel drops interconnect packets that arrive on the other NIC",
			strings.Join(strict, ", "), len(present)),
		Evidence: ev,
		Fix:      sysctlPersist(fixes...) + " (2 per interface is enough: the effective value is the larger of all and the interface)"}}
}

var haipRange = netip.MustParsePrefix("169.254.0.0/16")

func checkHAIP(inv *inventory.Inventory, cfg *Config) []Finding {
	if len(cfg.Interconnect) == 0 {
		return nil // cannot tell HAIP's own addresses from a conflict
	}
	var out []Finding
	for _, r := range inv.Routes {
		if r.Destination.Bits() < haipRange.Bits() || !haipRange.Contains(r.Destination.Addr()) || isInterconnect(inv, cfg, r.Interface) {
			continue
		}
		out = append(out, Finding{Severity: Warning, Object: "route " + r.Destination.String(),
			Message: fmt.Sprintf("route %s via %s (not the interconnect) overlaps 169.254.0.0/16, which HAIP uses for the interconnect: HAIP traffic can leave by the wrong interface",
				r.Destination, r.Interface),
			Evidence: []Evidence{{What: "route", Value: fmt.Sprintf("%s dev %s metric %d", r.Destination, r.Interface, r.Metric), File: "/proc/net/route"}},
			Fix:      "set NOZEROCONF=yes in /etc/sysconfig/network (the zeroconf route) or remove the route, then restart networking in a maintenance window"})
	}
	for _, ifc := range inv.Interfaces {
		if isInterconnect(inv, cfg, ifc.Name) || ifc.Type == "loopback" {
			continue
		}
		for _, a := range ifc.Addresses {
			p, err := netip.ParsePrefix(a)
			if err != nil || !haipRange.Contains(p.Addr()) {
				continue
			}
			out = append(out, Finding{Severity: Warning, Object: "interface " + ifc.Name,
				Message:  fmt.Sprintf("address %s is in 169.254.0.0/16, reserved for HAIP on the interconnect", a),
				Evidence: []Evidence{{What: ifc.Name + " address", Value: a, File: "/proc/net/fib_trie"}},
				Fix:      fmt.Sprintf("ip address del %s dev %s, and remove its source (zeroconf, avahi-autoipd, a DHCP fallback)", shellq.Quote(a), shellq.Quote(ifc.Name))})
		}
	}
	return out
}

func init() {
	register(Rule{ID: "NET-GPNP-SUBNET", Severity: Warning, Also: []SeverityCase{{Critical, "for the interconnect network"}},
		Title:  "an interface the GPnP profile names has no address in the profile's subnet",
		Source: "Oracle Clusterware GPnP profile (what 'oifcfg getif' shows): networks are matched by interface name and subnet",
		Check:  checkGPnPSubnet})
}

// checkGPnPSubnet compares the cluster's registered networks with the
// interfaces: Clusterware looks for the subnet on the named interface, and a
// renamed NIC or re-addressed network leaves it without an interconnect.
func checkGPnPSubnet(inv *inventory.Inventory, cfg *Config) []Finding {
	if inv.Cluster == nil {
		return nil
	}
	if sec := inv.Section("addresses"); sec == nil || sec.Status != "ok" {
		return nil // addresses unknown: no evidence either way
	}
	var out []Finding
	for _, n := range inv.Cluster.Networks {
		subnet, err := netip.ParseAddr(n.Subnet)
		ifc := inv.Interface(n.Adapter)
		if err != nil || ifc == nil || strings.ContainsAny(n.Adapter, "*?[") {
			continue // a pattern, or absent (NET-IC-MISSING says so for the interconnect)
		}
		if inSubnet(ifc.Addresses, subnet) {
			continue
		}
		var v4 []string
		for _, a := range ifc.Addresses {
			if p, err := netip.ParsePrefix(a); err == nil && p.Addr().Is4() && !haipRange.Contains(p.Addr()) {
				v4 = append(v4, a)
			}
		}
		sev := Warning
		if n.Interconnect() {
			sev = Critical
		}
		have := "no IPv4 address"
		if len(v4) > 0 {
			have = strings.Join(v4, ", ")
		}
		out = append(out, Finding{Severity: sev, Object: "interface " + ifc.Name,
			Message: fmt.Sprintf("the GPnP profile registers %s as %s on subnet %s, but %s has %s: Clusterware will not find this network on this node",
				ifc.Name, n.Use, n.Subnet, ifc.Name, have),
			Evidence: []Evidence{
				{What: "gpnp:Network", Value: fmt.Sprintf("Adapter=%s IP=%s Use=%s", n.Adapter, n.Subnet, n.Use), File: inv.Cluster.GPnPProfile},
				{What: ifc.Name + " IPv4", Value: have, File: "/proc/net/fib_trie"},
			},
			Fix: fmt.Sprintf("give %s its address in %s again, or (cluster-wide, with Clusterware up) register the new network: oifcfg setif -global %s; then remove the old one: oifcfg delif -global %s",
				shellq.Quote(ifc.Name), shellq.Quote(n.Subnet), shellq.Quote(ifc.Name+"/"+newSubnet(v4)+":"+n.Use), shellq.Quote(n.Adapter+"/"+n.Subnet))})
	}
	return out
}

// newSubnet is the network of the interface's one IPv4 address, for oifcfg
// setif; with none or several, a placeholder the operator fills in.
func newSubnet(v4 []string) string {
	if len(v4) == 1 {
		if p, err := netip.ParsePrefix(v4[0]); err == nil {
			return p.Masked().Addr().String()
		}
	}
	return "<subnet>"
}
