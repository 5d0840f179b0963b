package rules

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/interlink/interlink/internal/inventory"
	"github.com/interlink/interlink/internal/shellq"
)

// Figures from RFC 791 (fragmentation) and Oracle's installation guides; docs/sources.md.
const (
	jumboMTU     = 9000
	blockBytes   = 8192     // an Oracle database block, what Cache Fusion ships
	ipfragHighOK = 16 << 20 // ipfrag_high_thresh for a fragmenting interconnect
	ipfragLowOK  = 15 << 20 // ipfrag_low_thresh, kernels before 4.17
	ipfragKernel = 4194304  // the kernel's own default high threshold
)

// Fragments returns how many IP packets a UDP message of size bytes becomes
// at mtu: ceil((size+8) / (floor((mtu-20)/8)*8)) (RFC 791: fragment data
// in units of 8 octets; docs/sources.md).
func Fragments(size, mtu int) int {
	per := (mtu - 20) / 8 * 8
	if per <= 0 {
		return 0
	}
	return (size + 8 + per - 1) / per
}

// interconnect returns the interconnect interfaces that exist, and the
// names that do not.
func interconnect(inv *inventory.Inventory, cfg *Config) (present []*inventory.Interface, missing []string) {
	for _, n := range cfg.Interconnect {
		if ifc := inv.Interface(n); ifc != nil {
			present = append(present, ifc)
		} else {
			missing = append(missing, n)
		}
	}
	return present, missing
}

// isInterconnect reports whether name is an interconnect interface or a
// slave/port of one.
func isInterconnect(inv *inventory.Inventory, cfg *Config, name string) bool {
	for _, n := range cfg.Interconnect {
		if n == name {
			return true
		}
		if ifc := inv.Interface(name); ifc != nil && ifc.Master == n {
			return true
		}
	}
	return false
}

func mtuEvidence(ifc *inventory.Interface) Evidence {
	return Evidence{What: ifc.Name + " mtu", Value: strconv.Itoa(ifc.MTU), File: ifc.File("mtu")}
}

// sysctlInt returns a sysctl's integer value and its evidence.
func sysctlInt(inv *inventory.Inventory, name string) (int64, Evidence, bool) {
	v, ok := inv.Sysctls[name]
	if !ok {
		return 0, Evidence{}, false
	}
	n, err := strconv.ParseInt(strings.Fields(v + " 0")[0], 10, 64)
	if err != nil {
		return 0, Evidence{}, false
	}
	return n, Evidence{What: name, Value: v, File: inventory.SysctlFile(name)}, true
}

// sysctlPersist is the fix line for persisting sysctls the Oracle way.
// Each setting is one NAME=VALUE word (a name can hold an interface's).
func sysctlPersist(settings ...string) string {
	return fmt.Sprintf("sysctl -w %s, and put the same setting(s) in /etc/sysctl.d/98-oracle.conf so they survive a reboot",
		shellq.Join(settings...))
}

func init() {
	register(
		Rule{ID: "NET-BOND-MTU", Severity: Critical, Title: "bond slave MTU differs from the bond's",
			Source: "the Linux bonding driver (drivers/net/bonding: a slave takes the bond's MTU when it is enslaved and when the bond's changes); My Oracle Support note 341788.1 (jumbo frames on the RAC interconnect: every device on the path must agree); docs/sources.md",
			Check:  checkBondMTU},
		Rule{ID: "NET-BRIDGE-MTU", Severity: Warning, Also: []SeverityCase{{Critical, "when the bridge or the port is on the interconnect"}},
			Title:  "bridge port MTU differs from the bridge's",
			Source: "My Oracle Support note 341788.1 (every device on the interconnect's path must agree: bridges, their ports and each virtual interface); RFC 1191 (the smallest MTU on the path wins); docs/sources.md",
			Check:  checkBridgeMTU},
		Rule{ID: "NET-BOND-SLAVE-DOWN", Severity: Warning, Also: []SeverityCase{{Critical, "on the interconnect"}},
			Title:  "a bond slave's link is down: the bond has lost redundancy",
			Source: "Linux bonding driver documentation (MII Status in /proc/net/bonding)",
			Check:  checkBondSlaveDown},
		Rule{ID: "NET-MTU-PERSIST", Severity: Warning, Also: []SeverityCase{{Critical, "on the interconnect, whose MTU must still match the other nodes' after a reboot"}},
			Title:  "runtime MTU differs from the persisted MTU (reverts at reboot)",
			Source: "Oracle Linux and RHEL networking guides (MTU= in ifcfg files, 802-3-ethernet.mtu in NetworkManager, mtu in netplan): a runtime change (ip link set) is lost at reboot; docs/sources.md",
			Check:  checkMTUPersist},
	)
}

// mtuMismatches calls f for every interface of kind (bond-slave,
// bridge-port) whose MTU differs from its master's.
func mtuMismatches(inv *inventory.Inventory, kind string, f func(port, master *inventory.Interface)) {
	for i := range inv.Interfaces {
		port := &inv.Interfaces[i]
		if port.Kind != kind {
			continue
		}
		if m := inv.Interface(port.Master); m != nil && m.MTU != port.MTU {
			f(port, m)
		}
	}
}

func checkBondMTU(inv *inventory.Inventory, cfg *Config) []Finding {
	var out []Finding
	mtuMismatches(inv, "bond-slave", func(slave, bond *inventory.Interface) {
		effect := "frames above %d are dropped whenever this slave carries the traffic"
		if bond.Bond != nil && bond.Bond.Mode == "active-backup" && bond.Bond.ActiveSlave != "" && bond.Bond.ActiveSlave != slave.Name {
			// The classic hidden case: everything works until failover.
			effect = "it is the backup slave: all works until the bond fails over to it, then frames above %d are dropped"
		}
		out = append(out, Finding{Severity: Critical, Object: "interface " + slave.Name,
			Message: fmt.Sprintf("bond slave MTU %d differs from %s MTU %d: "+effect,
				slave.MTU, bond.Name, bond.MTU, min(slave.MTU, bond.MTU)),
			Evidence: []Evidence{mtuEvidence(slave), mtuEvidence(bond)},
			Fix: fmt.Sprintf("ip link set dev %s mtu %d (in a maintenance window); set MTU only on the bond in the persisted configuration, the kernel gives it to the slaves",
				shellq.Quote(slave.Name), bond.MTU)})
	})
	return out
}

func checkBridgeMTU(inv *inventory.Inventory, cfg *Config) []Finding {
	var out []Finding
	mtuMismatches(inv, "bridge-port", func(port, br *inventory.Interface) {
		sev := Warning
		if isInterconnect(inv, cfg, br.Name) || isInterconnect(inv, cfg, port.Name) {
			sev = Critical
		}
		lower := port
		if br.MTU < port.MTU {
			lower = br
		}
		out = append(out, Finding{Severity: sev, Object: "interface " + port.Name,
			Message: fmt.Sprintf("bridge port MTU %d differs from bridge %s MTU %d: frames above %d are dropped at %s",
				port.MTU, br.Name, br.MTU, lower.MTU, lower.Name),
			Evidence: []Evidence{mtuEvidence(port), mtuEvidence(br)},
			Fix: fmt.Sprintf("give the bridge and every port (vif, tap, bond, NIC) the same MTU: ip link set dev %s mtu %d; ip link set dev %s mtu %d; persist both",
				shellq.Quote(port.Name), max(port.MTU, br.MTU), shellq.Quote(br.Name), max(port.MTU, br.MTU))})
	})
	return out
}

func checkBondSlaveDown(inv *inventory.Inventory, cfg *Config) []Finding {
	var out []Finding
	for _, ifc := range inv.Interfaces {
		if ifc.Bond == nil {
			continue
		}
		for _, s := range ifc.Bond.Slaves {
			if s.MIIStatus == "" || s.MIIStatus == "up" {
				continue
			}
			sev := Warning
			if isInterconnect(inv, cfg, ifc.Name) {
				sev = Critical
			}
			out = append(out, Finding{Severity: sev, Object: "interface " + s.Name,
				Message: fmt.Sprintf("slave of %s has MII status %s (%d link failures): %s runs without redundancy",
					ifc.Name, s.MIIStatus, s.LinkFailures, ifc.Name),
				Evidence: []Evidence{{What: s.Name + " MII Status", Value: s.MIIStatus, File: ifc.Bond.File}},
				Fix:      fmt.Sprintf("check the cable, the switch port and the link (ethtool %s); the bond fails over but has no spare while this lasts", shellq.Quote(s.Name))})
		}
	}
	return out
}

// persistedMTU returns the MTU interface ifc gets at boot from config c:
// its own MTU, else its master's (the kernel gives slaves the bond's MTU),
// else a vlan's parent's, else the Ethernet default of 1500. ok is false
// when nothing can be said (a bridge without MTU follows its ports).
func persistedMTU(inv *inventory.Inventory, ifc *inventory.Interface, c inventory.PersistedConfig, depth int) (mtu int, how string, ok bool) {
	if c.MTU > 0 {
		return c.MTU, fmt.Sprintf("MTU %d set", c.MTU), true
	}
	if depth > 3 {
		return 0, "", false
	}
	master := c.Master
	if master == "" {
		master = ifc.Master
	}
	for _, name := range []string{master, ifc.Parent} {
		if name == "" {
			continue
		}
		up := inv.Interface(name)
		for _, mc := range inv.PersistedFor(name) {
			if up != nil {
				if m, _, ok := persistedMTU(inv, up, mc, depth+1); ok {
					return m, fmt.Sprintf("MTU not set; inherits %d from %s (%s)", m, name, mc.File), true
				}
			}
		}
		return 0, "", false
	}
	switch ifc.Type {
	case "physical", "bond", "veth", "virtual":
		return 1500, "MTU not set: the default 1500 applies at boot", true
	}
	return 0, "", false
}

func checkMTUPersist(inv *inventory.Inventory, cfg *Config) []Finding {
	var out []Finding
	for i := range inv.Interfaces {
		ifc := &inv.Interfaces[i]
		if ifc.Type == "loopback" {
			continue
		}
		for _, c := range inv.PersistedFor(ifc.Name) {
			if c.MTU == 0 && ifc.Kind == "bond-slave" {
				// A slave takes the bond's MTU: the bond's own finding
				// (and NET-BOND-MTU) already say it.
				continue
			}
			m, how, ok := persistedMTU(inv, ifc, c, 0)
			if !ok || m == ifc.MTU {
				continue
			}
			sev := Warning
			if isInterconnect(inv, cfg, ifc.Name) {
				sev = Critical
			}
			ev := Evidence{What: c.Format + " MTU", Value: "not set", File: c.File}
			if c.MTU > 0 {
				ev = Evidence{What: fmt.Sprintf("%s MTU (line %d)", c.Format, c.MTULine), Value: strconv.Itoa(c.MTU), File: c.File}
			}
			out = append(out, Finding{Severity: sev, Object: "interface " + ifc.Name,
				Message: fmt.Sprintf("runtime MTU %d but %s (%s): the MTU reverts to %d at the next reboot",
					ifc.MTU, c.File, how, m),
				Evidence: []Evidence{mtuEvidence(ifc), ev},
				Fix:      persistFix(ifc, c)})
		}
	}
	return out
}

// persistFix says how to persist the runtime MTU in the format in use.
// Names and paths are shell-quoted: the file is what an editor is given.
func persistFix(ifc *inventory.Interface, c inventory.PersistedConfig) string {
	q := shellq.Quote
	target := ifc.Name
	if c.MTU == 0 && c.Master != "" {
		target = c.Master
	}
	switch c.Format {
	case "ifcfg":
		if target != ifc.Name {
			return fmt.Sprintf("set MTU=%d in %s (the bond's file; its slaves inherit it), or set the runtime MTU back if %d is wrong", ifc.MTU, q("ifcfg-"+target), ifc.MTU)
		}
		return fmt.Sprintf("set MTU=%d in %s, or set the runtime MTU back if %d is wrong", ifc.MTU, q(c.File), ifc.MTU)
	case "networkmanager":
		conn := c.Connection
		if conn == "" {
			conn = c.Interface // a result saved before Connection was read
		}
		return fmt.Sprintf("nmcli connection modify %s 802-3-ethernet.mtu %d (writes %s)", q(conn), ifc.MTU, q(c.File))
	case "netplan":
		return fmt.Sprintf("set 'mtu: %d' for %s in %s, then 'netplan try'", ifc.MTU, q(c.Interface), q(c.File))
	case "interfaces":
		return fmt.Sprintf("add 'mtu %d' to the iface stanza of %s in %s", ifc.MTU, q(c.Interface), q(c.File))
	}
	return fmt.Sprintf("persist MTU %d for %s in %s", ifc.MTU, q(ifc.Name), q(c.File))
}
