package rules

import (
	"fmt"
	"strconv"

	"github.com/interlink/interlink/internal/inventory"
	"github.com/interlink/interlink/internal/shellq"
)

// coalesceMaxUs is the longest receive-interrupt delay not judged: a
// lone datagram waits up to rx-usecs for its interrupt, and above 20 us
// that is more than the wire and both stacks take for an 8 KiB block.
const coalesceMaxUs = 20

// stealMaxShare is the steal time, as a share of the time the vCPUs had
// work, from which check warns: one wake-up in ten then waits for the
// host to run the vCPU.
const stealMaxShare = 0.10

func init() {
	register(
		Rule{ID: "NET-IC-COALESCE", Severity: Warning,
			Title: "interconnect NIC delays receive interrupts (rx-usecs above 20 without adaptive-rx)",
			Source: "kernel Documentation/networking/ethtool-netlink.rst (COALESCE_GET: rx-usecs, rx-frames, adaptive-rx) and ethtool(8) -c/-C; " +
				"Red Hat's network performance tuning guide (interrupt coalescing)",
			Check: checkCoalesce},
		Rule{ID: "NET-IC-IRQ", Severity: Warning,
			Title: "every queue interrupt of an interconnect NIC is taken by one CPU",
			Source: "kernel Documentation/core-api/irq/irq-affinity.rst (/proc/irq/N/smp_affinity_list) and " +
				"Documentation/networking/scaling.rst (RSS: one interrupt per receive queue, spread over CPUs)",
			Check: checkIRQs},
		Rule{ID: "VM-STEAL", Severity: Warning,
			Title:  "the vCPUs wait for their host (steal time at least 10 % of the time they had work)",
			Source: "kernel Documentation/filesystems/proc.rst (/proc/stat: the steal column, time spent in other operating systems when running in a virtualized environment)",
			Check:  checkSteal},
	)
}

// interconnectNICs returns the NICs of the interconnect interfaces: the
// interface itself when it has a device, else its bond slaves.
func interconnectNICs(inv *inventory.Inventory, cfg *Config) []inventory.NIC {
	if inv.Host == nil {
		return nil
	}
	byName := map[string]inventory.NIC{}
	for _, n := range inv.Host.NICs {
		byName[n.Interface] = n
	}
	var out []inventory.NIC
	seen := map[string]bool{}
	add := func(name string) {
		if n, ok := byName[name]; ok && !seen[name] {
			seen[name] = true
			out = append(out, n)
		}
	}
	for _, name := range cfg.Interconnect {
		add(name)
		if ifc := inv.Interface(name); ifc != nil {
			for _, p := range ifc.Ports {
				add(p)
			}
		}
	}
	return out
}

func checkCoalesce(inv *inventory.Inventory, cfg *Config) []Finding {
	var out []Finding
	for _, n := range interconnectNICs(inv, cfg) {
		c := n.Coalesce
		if c == nil || c.AdaptiveRx || c.RxUsecs <= coalesceMaxUs {
			continue
		}
		q := shellq.Quote(n.Interface)
		out = append(out, Finding{Severity: Warning, Object: "interface " + n.Interface,
			Message: fmt.Sprintf("receive interrupts wait up to %d us (rx-usecs %d, rx-frames %d, adaptive-rx off): at one block in flight "+
				"each block waits that long for its interrupt on each node, more than the wire and both stacks take", c.RxUsecs, c.RxUsecs, c.RxFrames),
			Evidence: []Evidence{{What: n.Interface + " coalescing (ETHTOOL_GCOALESCE)",
				Value: fmt.Sprintf("rx-usecs %d, rx-frames %d, adaptive-rx off", c.RxUsecs, c.RxFrames), File: n.CoalesceFile}},
			Fix: fmt.Sprintf("now: ethtool -C %s adaptive-rx on (or rx-usecs 0 where the driver has no adaptive mode); to keep it: "+
				"nmcli connection modify PROFILE ethtool.coalesce-adaptive-rx on (NetworkManager), or ETHTOOL_OPTS=\"-C ${DEVICE} adaptive-rx on\" "+
				"in its ifcfg file (network-scripts); it costs CPU under heavy receive load", q)})
	}
	return out
}

func checkIRQs(inv *inventory.Inventory, cfg *Config) []Finding {
	var out []Finding
	for _, n := range interconnectNICs(inv, cfg) {
		perCPU := map[int]int64{}
		cpus, active := 0, 0
		var ev []Evidence
		for _, irq := range n.IRQs {
			cpus = max(cpus, len(irq.Counts))
			var sum int64
			for cpu, c := range irq.Counts {
				if c > 0 {
					perCPU[cpu] += c
					sum += c
				}
			}
			if sum == 0 {
				continue
			}
			active++
			ev = append(ev, Evidence{What: fmt.Sprintf("IRQ %d %s affinity", irq.Number, irq.Name), Value: orDash(irq.Affinity), File: irq.AffinityFile})
		}
		if active < 2 || cpus < 2 || len(perCPU) != 1 {
			continue
		}
		var only int
		for cpu := range perCPU {
			only = cpu
		}
		ev = append([]Evidence{{What: n.Interface + " interrupts per CPU since boot", Value: fmt.Sprintf("all %d on CPU %d of %d", perCPU[only], only, cpus), File: inventory.InterruptsFile}}, ev...)
		out = append(out, Finding{Severity: Warning, Object: "interface " + n.Interface,
			Message: fmt.Sprintf("all %d queue interrupts of %s were taken by CPU %d: one CPU does the interconnect's receive work "+
				"(hard and soft interrupts) for every queue, and becomes the bottleneck and the CPU every block waits on under Cache Fusion load", active, n.Interface, only),
			Evidence: ev,
			Fix: "let irqbalance spread them (systemctl enable --now irqbalance), or write each queue's CPU to /proc/irq/N/smp_affinity_list " +
				"from a unit run at boot (CPUs of the NIC's NUMA node: " + shellq.Quote("/sys/class/net/"+n.Interface+"/device/local_cpulist") + ") and keep irqbalance off those IRQs (IRQBALANCE_BANNED_CPULIST or --banirq)"})
	}
	return out
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func checkSteal(inv *inventory.Inventory, cfg *Config) []Finding {
	if inv.Host == nil || inv.Host.Steal == nil {
		return nil
	}
	s := inv.Host.Steal
	t, when := s.Total, "since boot (check --interval 5s judges now)"
	if s.Interval != nil {
		t, when = *s.Interval, "over "+s.IntervalNs.String()
	}
	wanted := t.Busy() + t.Steal
	if wanted == 0 {
		return nil
	}
	share := float64(t.Steal) / float64(wanted)
	if share < stealMaxShare {
		return nil
	}
	return []Finding{{Severity: Warning, Object: "cpu steal",
		Message: fmt.Sprintf("the vCPUs waited for the host %.1f %% of the time they had work, %s: a block that arrives while its vCPU is not running "+
			"waits for the host's scheduler as well as for the wake-up", 100*share, when),
		Evidence: []Evidence{{What: "cpu steal, of busy + steal (USER_HZ ticks)", Value: strconv.FormatUint(t.Steal, 10) + " of " + strconv.FormatUint(wanted, 10), File: s.File}},
		Fix: "nothing in the guest changes it: give the cluster's VMs dedicated (pinned) host CPUs in the VM's definition " +
			"(libvirt <cputune> vcpupin, virsh vcpupin --config; a dedicated host or shape in a cloud) and do not overcommit the host's CPUs"}}
}
