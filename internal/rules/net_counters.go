package rules

import (
	"fmt"
	"strings"

	"github.com/interlink/interlink/internal/inventory"
	"github.com/interlink/interlink/internal/shellq"
)

// Counter rules judge rates only: the counters are cumulative since boot, so
// a total says nothing about now. Without --interval they stay silent and
// the totals are in the inventory.

// counterRule describes a rule over kernel counters that must not rise.
type counterRule struct {
	id, title, why, fix string
	severity            Severity
	counters            []string // "Group Name"
}

var counterRules = []counterRule{
	{id: "NET-REASM-FAILS", severity: Critical, title: "IP reassembly failures rising",
		counters: []string{"Ip ReasmFails", "Ip ReasmTimeout"},
		why:      "fragments are being dropped before reassembly: each failure is a lost UDP message (an interconnect block: gc cr block lost)",
		fix:      "use MTU 9000 on the interconnect so 8 KiB blocks do not fragment; raise net.ipv4.ipfrag_high_thresh to 16777216; look for loss on the path ('interlink pmtu', switch counters)"},
	{id: "NET-UDP-RCVBUF", severity: Critical, title: "UDP receive errors rising (socket buffer overflows)",
		counters: []string{"Udp RcvbufErrors", "Udp InErrors"},
		why:      "UDP datagrams are dropped because a receiving socket's buffer is full: on a RAC node these are interconnect blocks",
		fix:      "raise net.core.rmem_default/rmem_max to at least 262144/4194304 (Oracle's minimums) and check that LMS processes get CPU"},
	{id: "NET-LISTEN-OVERFLOW", severity: Warning, title: "listen queue overflows rising",
		counters: []string{"TcpExt ListenOverflows", "TcpExt ListenDrops"},
		why:      "connection attempts are dropped because a listener's accept queue is full (connection storm, or net.core.somaxconn too small)",
		fix:      "raise net.core.somaxconn and the listener's QUEUESIZE, and spread application server start-up"},
	{id: "NET-RPF-DROPS", severity: Warning, title: "reverse-path filter drops rising",
		counters: []string{"TcpExt IPReversePathFilter"},
		why:      "the kernel drops packets that fail the reverse-path check (rp_filter): with several interconnect NICs these are interconnect packets",
		fix:      "set rp_filter to 2 (loose) or 0 on the interconnect NICs and in conf.all"},
}

func init() {
	for _, cr := range counterRules {
		register(Rule{ID: cr.id, Severity: cr.severity, Title: cr.title + " (with --interval)",
			Source: "kernel Documentation/networking/snmp_counter.rst (Ip ReasmFails, Udp RcvbufErrors, TcpExt ListenOverflows and IPReversePathFilter); RFC 4293 (ipReasmFails); My Oracle Support note 563566.1 (reassembly failures and socket buffer overflows lose blocks); docs/sources.md",
			Check:  cr.check})
	}
	register(Rule{ID: "NET-IF-ERRORS", Severity: Warning, Also: []SeverityCase{{Critical, "on the interconnect"}},
		Title:  "interface receive errors or drops rising (with --interval)",
		Source: "kernel Documentation/networking/statistics.rst (rx_errors, rx_dropped, rx_length_errors); My Oracle Support note 563566.1 (NIC errors and drops lose blocks); docs/sources.md",
		Check:  checkIfErrors})
}

func (cr counterRule) check(inv *inventory.Inventory, cfg *Config) []Finding {
	c := inv.Counters
	if c == nil || c.IntervalNs <= 0 {
		return nil
	}
	var ev []Evidence
	var moved []string
	for _, k := range c.Kernel {
		if !containsString(cr.counters, k.Group+" "+k.Name) || k.Delta == nil || *k.Delta == 0 {
			continue
		}
		ev = append(ev, rateEvidence(k, c))
		moved = append(moved, fmt.Sprintf("%s %s %.1f/s", k.Group, k.Name, *k.PerSec))
	}
	if len(ev) == 0 {
		return nil
	}
	return []Finding{{Severity: cr.severity, Object: "kernel counters",
		Message:  fmt.Sprintf("%s over %s: %s", strings.Join(moved, ", "), c.IntervalNs, cr.why),
		Evidence: ev, Fix: cr.fix}}
}

func rateEvidence(k inventory.Counter, c *inventory.Counters) Evidence {
	return Evidence{What: k.Group + " " + k.Name,
		Value: fmt.Sprintf("+%d in %s (%.1f/s; total %d)", *k.Delta, c.IntervalNs, *k.PerSec, k.Total), File: k.File}
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// ifErrorCounters are the statistics that mean trouble when they rise.
var ifErrorCounters = []string{"rx_errors", "rx_dropped", "rx_length_errors", "rx_crc_errors", "rx_missed_errors", "rx_over_errors"}

func checkIfErrors(inv *inventory.Inventory, cfg *Config) []Finding {
	c := inv.Counters
	if c == nil || c.IntervalNs <= 0 {
		return nil
	}
	var out []Finding
	for _, ic := range c.Interfaces {
		ifc := inv.Interface(ic.Interface)
		if ifc == nil || ifc.Type == "loopback" || ifc.Type == "bond" {
			// A bond's statistics are the sums of its slaves' (including
			// the by-design drops of a backup slave): judge the slaves.
			continue
		}
		backup := inactiveSlave(inv, ifc)
		var ev []Evidence
		var moved []string
		for _, k := range ic.Counters {
			if !containsString(ifErrorCounters, k.Name) || k.Delta == nil || *k.Delta == 0 {
				continue
			}
			if backup && k.Name == "rx_dropped" {
				continue // an active-backup bond's backup slave drops all it receives, by design
			}
			ev = append(ev, rateEvidence(k, c))
			moved = append(moved, fmt.Sprintf("%s %.1f/s", k.Name, *k.PerSec))
		}
		if len(ev) == 0 {
			continue
		}
		sev := Warning
		if isInterconnect(inv, cfg, ifc.Name) {
			sev = Critical
		}
		out = append(out, Finding{Severity: sev, Object: "interface " + ifc.Name,
			Message:  fmt.Sprintf("%s over %s: frames are lost on this interface", strings.Join(moved, ", "), c.IntervalNs),
			Evidence: ev,
			Fix: fmt.Sprintf("read the driver's detail (ethtool -S %s); check cable, switch port errors and ring sizes (ethtool -g %[1]s); rx_dropped also rises when the softirq backlog is full (net.core.netdev_max_backlog)",
				shellq.Quote(ifc.Name))})
	}
	return out
}

// inactiveSlave reports whether ifc is a backup slave of an active-backup
// bond.
func inactiveSlave(inv *inventory.Inventory, ifc *inventory.Interface) bool {
	if ifc.Kind != "bond-slave" {
		return false
	}
	bond := inv.Interface(ifc.Master)
	return bond != nil && bond.Bond != nil && bond.Bond.Mode == "active-backup" && bond.Bond.ActiveSlave != "" && bond.Bond.ActiveSlave != ifc.Name
}
