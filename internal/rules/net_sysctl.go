package rules

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/interlink/interlink/internal/inventory"
	"github.com/interlink/interlink/internal/kernel"
	"github.com/interlink/interlink/internal/units"
)

// udpBufferMinimums are Oracle's preinstall values (docs/sources.md).
var udpBufferMinimums = []struct {
	name string
	min  int64
	why  string
}{
	{"net.core.rmem_default", 262144, "UDP receive buffers overflow under Cache Fusion bursts (Udp RcvbufErrors)"},
	{"net.core.rmem_max", 4194304, "Oracle cannot enlarge its receive buffers to what it asks for (Udp RcvbufErrors)"},
	{"net.core.wmem_default", 262144, "UDP send buffers fill under bursts (Udp SndbufErrors)"},
	{"net.core.wmem_max", 1048576, "Oracle cannot enlarge its send buffers to what it asks for (Udp SndbufErrors)"},
}

func init() {
	register(
		Rule{ID: "NET-UDP-BUFFERS", Severity: Warning, Title: "UDP socket buffer sysctls below Oracle's minimums",
			Source: "Oracle Database Installation Guide for Linux, minimum kernel parameter settings, as the oracle-database-preinstall package sets them (rmem_default 262144, rmem_max 4194304, wmem_default 262144, wmem_max 1048576)",
			Check:  checkUDPBuffers},
		Rule{ID: "NET-PORT-RANGE", Severity: Warning, Title: "ip_local_port_range narrower than 9000 65500",
			Source: "Oracle Database Installation Guide for Linux, minimum kernel parameter settings, as the oracle-database-preinstall package sets them (ip_local_port_range 9000 65500)",
			Check:  checkPortRange},
		Rule{ID: "NET-IPFRAG", Severity: Warning, Also: []SeverityCase{{Critical, "when ipfrag_high_thresh is below the kernel's own default, as hardening guides set it"}},
			Title:  "reassembly memory (ipfrag thresholds) below 16 MiB while the interconnect fragments",
			Source: "My Oracle Support note 563566.1 (gc block lost: reassembly; ipfrag_high_thresh 16777216, ipfrag_low_thresh 15728640); kernel Documentation/networking/ip-sysctl.rst (ipfrag_*; low_thresh unused since 4.17); CVE-2018-5391 (hardening that lowers them); docs/sources.md",
			Check:  checkIPFrag},
		Rule{ID: "NET-SOMAXCONN", Severity: Info, Title: "net.core.somaxconn caps every listen backlog below 1024",
			Source: "Oracle Net Services Reference (QUEUESIZE); listen(2) and kernel Documentation/networking/ip-sysctl.rst (somaxconn caps the backlog; 4096 since 5.4)",
			Check:  checkSomaxconn},
	)
}

func checkUDPBuffers(inv *inventory.Inventory, cfg *Config) []Finding {
	var out []Finding
	for _, m := range udpBufferMinimums {
		v, ev, ok := sysctlInt(inv, m.name)
		if !ok || v >= m.min {
			continue
		}
		out = append(out, Finding{Severity: Warning, Object: "sysctl " + m.name,
			Message: fmt.Sprintf("%d (%s) is below Oracle's minimum %d (%s): %s",
				v, units.FormatBytes(float64(v)), m.min, units.FormatBytes(float64(m.min)), m.why),
			Evidence: []Evidence{ev},
			Fix:      sysctlPersist(fmt.Sprintf("%s=%d", m.name, m.min))})
	}
	return out
}

func checkPortRange(inv *inventory.Inventory, cfg *Config) []Finding {
	const name = "net.ipv4.ip_local_port_range"
	v, ok := inv.Sysctls[name]
	if !ok {
		return nil
	}
	f := strings.Fields(v)
	if len(f) != 2 {
		return nil
	}
	lo, err1 := strconv.Atoi(f[0])
	hi, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil || lo <= 9000 && hi >= 65500 {
		return nil
	}
	return []Finding{{Severity: Warning, Object: "sysctl " + name,
		Message: fmt.Sprintf("ephemeral ports %d-%d (%d ports) are fewer than Oracle's 9000-65500 (56501): busy nodes run out of ports for interconnect and client connections",
			lo, hi, hi-lo+1),
		Evidence: []Evidence{{What: name, Value: v, File: inventory.SysctlFile(name)}},
		Fix:      sysctlPersist("net.ipv4.ip_local_port_range=9000 65500")}}
}

// kernelBefore reports whether the release string ("4.14.35-2047...",
// "3.10.0-1160.el7") is older than major.minor, and whether it could tell.
func kernelBefore(release string, major, minor int) (before, known bool) {
	r, err := kernel.ParseRelease(release)
	if err != nil {
		return false, false
	}
	return r.Version.Before(kernel.V(major, minor)), true
}

func checkIPFrag(inv *inventory.Inventory, cfg *Config) []Finding {
	present, _ := interconnect(inv, cfg)
	var fragmenting []*inventory.Interface
	for _, ifc := range present {
		if ifc.MTU < jumboMTU && Fragments(blockBytes, ifc.MTU) > 1 {
			fragmenting = append(fragmenting, ifc)
		}
	}
	if len(fragmenting) == 0 {
		return nil
	}
	high, highEv, ok := sysctlInt(inv, "net.ipv4.ipfrag_high_thresh")
	if !ok {
		return nil
	}
	ev := []Evidence{highEv}
	short := high < ipfragHighOK
	fixes := []string{fmt.Sprintf("net.ipv4.ipfrag_high_thresh=%d", ipfragHighOK)}
	if old, known := kernelBefore(inv.Node.Kernel, 4, 17); old || !known {
		if low, lowEv, ok := sysctlInt(inv, "net.ipv4.ipfrag_low_thresh"); ok {
			ev = append(ev, lowEv)
			if low < ipfragLowOK {
				short = true
				fixes = append(fixes, fmt.Sprintf("net.ipv4.ipfrag_low_thresh=%d", ipfragLowOK))
			}
		}
	}
	if !short {
		return nil
	}
	sev := Warning
	if high < ipfragKernel {
		sev = Critical // lowered below the kernel's own default: hardened
	}
	for _, ifc := range fragmenting {
		ev = append(ev, mtuEvidence(ifc))
	}
	return []Finding{{Severity: sev, Object: "sysctl net.ipv4.ipfrag_high_thresh",
		Message: fmt.Sprintf("reassembly memory %s is below 16 MiB while the interconnect fragments (%s at MTU %d: %d fragments per 8 KiB block): the kernel drops fragments under load and whole blocks are lost (gc cr block lost)",
			units.FormatBytes(float64(high)), fragmenting[0].Name, fragmenting[0].MTU, Fragments(blockBytes, fragmenting[0].MTU)),
		Evidence: ev,
		Fix:      sysctlPersist(fixes...) + "; better, use MTU 9000 on the interconnect so blocks do not fragment"}}
}

func checkSomaxconn(inv *inventory.Inventory, cfg *Config) []Finding {
	v, ev, ok := sysctlInt(inv, "net.core.somaxconn")
	if !ok || v >= 1024 {
		return nil
	}
	return []Finding{{Severity: Info, Object: "sysctl net.core.somaxconn",
		Message:  fmt.Sprintf("every listen backlog (the listener's QUEUESIZE) is capped at %d: a connection storm overflows the accept queue (TcpExt ListenOverflows)", v),
		Evidence: []Evidence{ev},
		Fix:      sysctlPersist("net.core.somaxconn=4096")}}
}
