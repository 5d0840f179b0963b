package inventory

import (
	"fmt"
	"strings"
)

// Sysctls read for every node (docs/sources.md); the rp_filter of
// each interface is added per interface.
var sysctlNames = []string{
	"net.core.rmem_default",
	"net.core.rmem_max",
	"net.core.wmem_default",
	"net.core.wmem_max",
	"net.core.somaxconn",
	"net.ipv4.ipfrag_high_thresh",
	"net.ipv4.ipfrag_low_thresh",
	"net.ipv4.ipfrag_time",
	"net.ipv4.ip_local_port_range",
	"net.ipv4.conf.all.rp_filter",
	"net.ipv4.conf.default.rp_filter",
}

// SysctlFile returns the procfs file of a sysctl name. As in sysctl(8), a
// dot inside an interface name (a vlan "eth1.100") is written as a slash in
// the name: net.ipv4.conf.eth1/100.rp_filter is
// /proc/sys/net/ipv4/conf/eth1.100/rp_filter.
func SysctlFile(name string) string {
	return "/proc/sys/" + strings.NewReplacer(".", "/", "/", ".").Replace(name)
}

// SysctlName is the inverse of SysctlFile for an interface's setting.
func SysctlName(prefix, ifname, leaf string) string {
	return prefix + "." + strings.ReplaceAll(ifname, ".", "/") + "." + leaf
}

// gatherSysctls reads the sysctls into Inventory.Sysctls; values keep the
// kernel's text with runs of blanks folded ("9000 65500").
func gatherSysctls(src *Source, inv *Inventory) {
	names := append([]string{}, sysctlNames...)
	for _, ifc := range inv.Interfaces {
		names = append(names, SysctlName("net.ipv4.conf", ifc.Name, "rp_filter"))
	}
	var missing []string
	read, absent := 0, 0
	for _, n := range names {
		v, err := src.ReadString(SysctlFile(n))
		if err != nil {
			missing = append(missing, fmt.Sprintf("%s: %s", n, errText(err)))
			if isNotExist(err) {
				absent++
			}
			continue
		}
		inv.Sysctls[n] = strings.Join(strings.Fields(v), " ")
		read++
	}
	switch {
	case read == 0 && absent == len(names):
		inv.addSection("sysctls", "absent", "no /proc/sys/net in this tree")
	case read == 0:
		inv.addSection("sysctls", "unreadable", strings.Join(missing, "; "))
	case len(missing) > 0:
		inv.addSection("sysctls", "partial", strings.Join(missing, "; "))
	default:
		inv.addSection("sysctls", "ok", fmt.Sprintf("%d values", read))
	}
}
