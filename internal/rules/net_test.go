package rules

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/fixturetest"
	"github.com/interlink/interlink/internal/inventory"
)

const fixtures = "../../testdata/nodes/"

func gather(t testing.TB, root string, opts inventory.Options) *inventory.Inventory {
	t.Helper()
	src, err := inventory.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	inv, err := inventory.Gather(context.Background(), src, opts)
	if err != nil {
		t.Fatal(err)
	}
	return inv
}

// netFindings returns the findings of NET-* rules by rule id.
func netFindings(r *Result) map[string][]Finding {
	out := map[string][]Finding{}
	for _, f := range r.Findings {
		if strings.HasPrefix(f.Rule, "NET-") {
			out[f.Rule] = append(out[f.Rule], f)
		}
	}
	return out
}

func ids(m map[string][]Finding) []string {
	var out []string
	for id := range m {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

func TestFragments(t *testing.T) {
	for _, c := range [][3]int{{8192, 1500, 6}, {8192, 9000, 1}, {32768, 9000, 4}, {8192, 4000, 3}, {1472, 1500, 1}, {1473, 1500, 2}} {
		if got := Fragments(c[0], c[1]); got != c[2] {
			t.Errorf("Fragments(%d, %d) = %d, want %d", c[0], c[1], got, c[2])
		}
	}
}

// TestEverythingWrong: the broken OL7 node fires every rule its files give
// evidence for, and every evidence file exists in the tree.
func TestEverythingWrong(t *testing.T) {
	root := fixtures + "ol7-everything-wrong"
	r := Check(gather(t, root, inventory.Options{}), Config{})
	if r.Interconnect.From != "gpnp" || strings.Join(r.Interconnect.Interfaces, ",") != "bond0,eth3" {
		t.Fatalf("interconnect %+v", r.Interconnect)
	}
	got := netFindings(r)
	want := []string{"NET-BOND-MTU", "NET-HAIP", "NET-IC-MTU", "NET-IC-MTU-MISMATCH", "NET-IC-NOT-PERSISTED", "NET-IPFRAG",
		"NET-MTU-PERSIST", "NET-PORT-RANGE", "NET-RP-FILTER", "NET-SOMAXCONN", "NET-UDP-BUFFERS"}
	if strings.Join(ids(got), " ") != strings.Join(want, " ") {
		t.Errorf("rules fired:\n got %v\nwant %v", ids(got), want)
	}
	expect := map[string]string{
		"NET-BOND-MTU":         "interface eth2|bond slave MTU 1500 differs from bond0 MTU 9000",
		"NET-IC-MTU":           "interface eth3|becomes 6 IP fragments",
		"NET-MTU-PERSIST":      "interface bond0|runtime MTU 9000 but /etc/sysconfig/network-scripts/ifcfg-bond0 (MTU 1500 set): the MTU reverts to 1500",
		"NET-RP-FILTER":        "interconnect|on bond0, eth3 with 2 interconnect NICs",
		"NET-IPFRAG":           "sysctl net.ipv4.ipfrag_high_thresh|256.00 KiB is below 16 MiB",
		"NET-HAIP":             "route 169.254.0.0/16|via eth0",
		"NET-IC-NOT-PERSISTED": "interface eth3|no persisted configuration",
		"NET-PORT-RANGE":       "sysctl net.ipv4.ip_local_port_range|32768-61000",
	}
	for id, w := range expect {
		obj, msg, _ := strings.Cut(w, "|")
		fs := got[id]
		if len(fs) != 1 || fs[0].Object != obj || !strings.Contains(fs[0].Message, msg) {
			t.Errorf("%s: %+v, want one finding on %q containing %q", id, fs, obj, msg)
		}
	}
	if n := len(got["NET-UDP-BUFFERS"]); n != 4 {
		t.Errorf("NET-UDP-BUFFERS fired %d times, want 4 (all four buffers are 212992)", n)
	}
	if sev := got["NET-IPFRAG"][0].Severity; sev != Critical {
		t.Errorf("ipfrag below the kernel default: severity %s, want critical", sev)
	}
	if sev := got["NET-MTU-PERSIST"][0].Severity; sev != Critical {
		t.Errorf("persisted MTU on the interconnect: severity %s, want critical", sev)
	}
	// Kernel 3.10 predates 4.17: the low threshold is judged too.
	if !strings.Contains(got["NET-IPFRAG"][0].Fix, "ipfrag_low_thresh=15728640") {
		t.Errorf("ipfrag fix %q misses the low threshold", got["NET-IPFRAG"][0].Fix)
	}
	// Counters have totals but no interval: nothing judged on them.
	for _, id := range []string{"NET-REASM-FAILS", "NET-UDP-RCVBUF", "NET-LISTEN-OVERFLOW", "NET-IF-ERRORS", "NET-RPF-DROPS"} {
		if len(got[id]) > 0 {
			t.Errorf("%s fired on totals without --interval", id)
		}
	}
	checkEvidence(t, root, r)
	if r.Summary.ExitCode != 2 || r.Summary.Status != "CRITICAL" {
		t.Errorf("summary %+v", r.Summary)
	}
}

// checkEvidence: every finding has evidence, a fix and a source, and every
// evidence file exists under root.
func checkEvidence(t *testing.T, root string, r *Result) {
	t.Helper()
	for _, f := range r.Findings {
		if len(f.Evidence) == 0 || f.Fix == "" || f.Source == "" || f.Object == "" || f.Message == "" {
			t.Errorf("%s on %s: incomplete finding %+v", f.Rule, f.Object, f)
		}
		for _, ev := range f.Evidence {
			if ev.File == "" {
				continue
			}
			if _, err := os.Stat(filepath.Join(root, ev.File)); err != nil {
				t.Errorf("%s: evidence file %s: %v", f.Rule, ev.File, err)
			}
		}
	}
}

func TestHealthyFixturesAreSilent(t *testing.T) {
	for _, c := range []struct {
		root string
		cfg  Config
	}{
		{"ol8-rac-bond-jumbo", Config{}},
		{"debian12-netplan", Config{Interconnect: []string{"eth1"}}},
	} {
		r := Check(gather(t, fixtures+c.root, inventory.Options{}), c.cfg)
		if len(r.Interconnect.Interfaces) == 0 {
			t.Errorf("%s: no interconnect", c.root)
		}
		for _, f := range r.Findings {
			if strings.HasPrefix(f.Rule, "NET-") {
				t.Errorf("%s: %s fired on %s: %s", c.root, f.Rule, f.Object, f.Message)
			}
		}
	}
}

// TestTargeted changes one fact in the files of a copy of the healthy RAC
// node (as an administrator would on a real one) and expects the rule about
// that fact, gathered from the files like any audit.
func TestTargeted(t *testing.T) {
	const (
		sysBond1 = "/sys/devices/virtual/net/bond1/"
		ifcfg    = "/etc/sysconfig/network-scripts/"
		profile  = "/u01/app/19.0.0/grid/gpnp/profiles/peer/profile.xml"
	)
	cases := []struct {
		rule   string
		sev    Severity
		cfg    Config
		change func(root string)
		want   string
	}{
		{"NET-IC-DOWN", Critical, Config{}, func(root string) {
			fixturetest.Edit(t, root, sysBond1+"operstate", "up", "down")
			fixturetest.Edit(t, root, sysBond1+"carrier", "1", "0")
		}, "interconnect interface is down"},
		{"NET-IC-MISSING", Critical, Config{}, func(root string) {
			// A second interconnect registered cluster-wide that this node lacks.
			fixturetest.Edit(t, root, profile, `</gpnp:HostNetwork>`,
				`<gpnp:Network id="net3" IP="192.168.11.0" Adapter="bond2" Use="cluster_interconnect"/></gpnp:HostNetwork>`)
		}, "bond2 is named as interconnect but does not exist"},
		{"NET-IC-MULTICAST", Warning, Config{}, func(root string) {
			fixturetest.Edit(t, root, sysBond1+"flags", "0x1403", "0x403") // ip link set bond1 multicast off
		}, "multicast is off"},
		{"NET-BOND-SLAVE-DOWN", Critical, Config{}, func(root string) {
			fixturetest.Edit(t, root, "/proc/self/net/bonding/bond1", "Slave Interface: eth2\nMII Status: up", "Slave Interface: eth2\nMII Status: down")
		}, "slave of bond1 has MII status down"},
		{"NET-IC-NOT-PERSISTED", Warning, Config{}, func(root string) {
			fixturetest.Edit(t, root, ifcfg+"ifcfg-bond1", "ONBOOT=yes", "ONBOOT=no")
		}, "not brought up at boot"},
		{"NET-HAIP", Warning, Config{}, func(root string) {
			// avahi-autoipd gave eth0 a link-local address and its route.
			fixturetest.Edit(t, root, "/proc/self/net/fib_trie", "     +-- 169.254.0.0/19 2 0 2\n",
				"     +-- 169.254.0.0/16 2 0 2\n           |-- 169.254.0.0\n              /16 link UNICAST\n           |-- 169.254.7.7\n              /32 host LOCAL\n     +-- 169.254.0.0/19 2 0 2\n")
			fixturetest.Edit(t, root, "/proc/self/net/route", "bond1\t0000FEA9", "eth0\t0000FEA9\t00000000\t0001\t0\t0\t1002\t0000FFFF\t0\t0\t0\nbond1\t0000FEA9")
		}, "overlaps 169.254.0.0/16"},
		{"NET-BRIDGE-MTU", Warning, Config{}, func(root string) {
			// A KVM bridge with a guest's tap left at 1500.
			fixturetest.Interface(t, root, "br0", "virtual", map[string]string{"mtu": "9000", "operstate": "up",
				"uevent": "DEVTYPE=bridge\nINTERFACE=br0\nIFINDEX=6", "ifindex": "6", "iflink": "6", "type": "1", "flags": "0x1003"})
			dir := fixturetest.Interface(t, root, "vnet0", "virtual", map[string]string{"mtu": "1500", "operstate": "unknown",
				"uevent": "INTERFACE=vnet0\nIFINDEX=7", "ifindex": "7", "iflink": "7", "type": "1", "flags": "0x1003", "tun_flags": "0x1002"})
			fixturetest.Symlink(t, root, dir+"/master", "../br0")
		}, "bridge port MTU 1500 differs from bridge br0 MTU 9000"},
		{"NET-MTU-PERSIST", Warning, Config{}, func(root string) {
			// ip link set eth0 mtu 9000, ifcfg-eth0 has no MTU.
			fixturetest.Edit(t, root, "/sys/devices/pci0000:00/0000:00:03.0/net/eth0/mtu", "1500", "9000")
		}, "MTU not set: the default 1500 applies at boot"},
		{"NET-IPFRAG", Warning, Config{}, func(root string) {
			// The interconnect back at 1500, reassembly memory raised only to 8 MiB.
			for _, f := range []string{sysBond1 + "mtu", "/sys/devices/pci0000:00/0000:00:04.0/net/eth1/mtu", "/sys/devices/pci0000:00/0000:00:05.0/net/eth2/mtu"} {
				fixturetest.Edit(t, root, f, "9000", "1500")
			}
			fixturetest.Edit(t, root, ifcfg+"ifcfg-bond1", "MTU=9000", "MTU=1500")
			fixturetest.Write(t, root, "/proc/sys/net/ipv4/ipfrag_high_thresh", "8388608\n")
		}, "8.00 MiB is below 16 MiB"},
		{"NET-RP-FILTER", Critical, Config{Interconnect: []string{"bond1", "eth0"}}, func(root string) {
			// eth0 made a second interconnect NIC (at 9000, persisted)
			// while both keep strict reverse-path filtering.
			fixturetest.Edit(t, root, "/sys/devices/pci0000:00/0000:00:03.0/net/eth0/mtu", "1500", "9000")
			fixturetest.Edit(t, root, ifcfg+"ifcfg-eth0", "ONBOOT=yes\n", "ONBOOT=yes\nMTU=9000\n")
			fixturetest.Write(t, root, "/proc/sys/net/ipv4/conf/bond1/rp_filter", "1\n")
		}, "on bond1, eth0 with 2 interconnect NICs"},
		{"NET-GPNP-SUBNET", Critical, Config{}, func(root string) {
			fixturetest.Edit(t, root, profile, `IP="192.168.10.0"`, `IP="192.168.30.0"`) // re-addressed cluster-wide, not here
		}, "registers bond1 as asm,cluster_interconnect on subnet 192.168.30.0, but bond1 has 192.168.10.11/24"},
	}
	// One copy, restored to the fixture before each case: creating and
	// removing a copy per case was most of this test's time.
	const node = fixtures + "ol8-rac-bond-jumbo"
	root := t.TempDir()
	fixturetest.Copy(t, node, root)
	for _, c := range cases {
		t.Run(c.rule, func(t *testing.T) {
			fixturetest.Restore(t, node, root)
			c.change(root)
			r := Check(gather(t, root, inventory.Options{}), c.cfg)
			got := netFindings(r)
			fs := got[c.rule]
			if len(fs) == 0 || fs[0].Severity != c.sev || !strings.Contains(fs[0].Message, c.want) {
				t.Fatalf("%s: %+v, want a %s finding containing %q (all: %v)", c.rule, fs, c.sev, c.want, ids(got))
			}
			// Nothing else fires, except what the same change implies:
			// an interconnect back at 1500 is also NET-IC-MTU.
			for id := range got {
				if id != c.rule && !(c.rule == "NET-IPFRAG" && id == "NET-IC-MTU") {
					t.Errorf("%s also fired: %+v", id, got[id])
				}
			}
			checkEvidence(t, root, r)
		})
	}
}

// TestRulesWithoutEvidenceStaySilent: rp_filter with one interconnect NIC,
// interconnect rules with no interconnect known.
func TestRulesWithoutEvidenceStaySilent(t *testing.T) {
	inv := gather(t, fixtures+"ol8-rac-bond-jumbo", inventory.Options{})
	inv.Sysctls["net.ipv4.conf.all.rp_filter"] = "1"
	inv.Sysctls["net.ipv4.conf.bond1.rp_filter"] = "1"
	if got := netFindings(Check(inv, Config{})); len(got["NET-RP-FILTER"]) > 0 {
		t.Errorf("strict rp_filter with one interconnect NIC fired: %+v", got["NET-RP-FILTER"])
	}
	inv.Cluster = nil
	inv.Interface("bond1").MTU = 1500
	r := Check(inv, Config{})
	if r.Interconnect.From != "" {
		t.Errorf("interconnect %+v without flag or profile", r.Interconnect)
	}
	for _, id := range []string{"NET-IC-MTU", "NET-IC-DOWN", "NET-RP-FILTER", "NET-HAIP"} {
		if len(netFindings(r)[id]) > 0 {
			t.Errorf("%s fired with the interconnect unknown", id)
		}
	}
}

// TestCounterRates samples the broken node's counters twice, with the
// files moving in between as on a node losing blocks, and expects the rate
// rules to fire (and the backup slave's by-design drops to be ignored).
func TestCounterRates(t *testing.T) {
	root := t.TempDir()
	fixturetest.Copy(t, fixtures+"ol7-everything-wrong", root)
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	bump := func(file, group, field string, by int64) {
		p := filepath.Join(root, file)
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(b), "\n")
		for i := 0; i+1 < len(lines); i += 2 {
			names, vals := strings.Fields(lines[i]), strings.Fields(lines[i+1])
			if len(names) == 0 || names[0] != group+":" {
				continue
			}
			for j := range names {
				if names[j] == field {
					var v int64
					for _, c := range vals[j] {
						v = v*10 + int64(c-'0')
					}
					vals[j] = itoa(v + by)
				}
			}
			lines[i+1] = strings.Join(vals, " ")
		}
		os.WriteFile(p, []byte(strings.Join(lines, "\n")), 0o644)
	}
	stat := func(ifc, name string, v int64) {
		p := filepath.Join(root, "sys/class/net", ifc, "statistics", name)
		b, _ := os.ReadFile(p)
		var old int64
		for _, c := range strings.TrimSpace(string(b)) {
			old = old*10 + int64(c-'0')
		}
		os.WriteFile(p, []byte(itoa(old+v)+"\n"), 0o644)
	}
	wait := func(ctx context.Context, d time.Duration) error {
		now = now.Add(d)
		bump("proc/self/net/snmp", "Ip", "ReasmFails", 50)
		bump("proc/self/net/snmp", "Udp", "RcvbufErrors", 20)
		bump("proc/self/net/snmp", "Udp", "InErrors", 20)
		bump("proc/self/net/netstat", "TcpExt", "ListenOverflows", 5)
		bump("proc/self/net/netstat", "TcpExt", "IPReversePathFilter", 100)
		stat("eth1", "rx_crc_errors", 10)
		stat("eth1", "rx_errors", 10)
		stat("eth2", "rx_dropped", 5000)  // backup slave of active-backup bond0
		stat("bond0", "rx_dropped", 5000) // the bond sums its slaves
		stat("bond0", "rx_errors", 10)
		stat("eth0", "rx_dropped", 7)
		return nil
	}
	inv := gather(t, root, inventory.Options{CounterInterval: 5 * time.Second, Now: func() time.Time { return now }, Wait: wait})
	if inv.Counters.IntervalNs != 5*time.Second {
		t.Fatalf("interval %v", inv.Counters.IntervalNs)
	}
	got := netFindings(Check(inv, Config{}))
	expect := map[string]string{
		"NET-REASM-FAILS":     "Ip ReasmFails 10.0/s",
		"NET-UDP-RCVBUF":      "Udp InErrors 4.0/s, Udp RcvbufErrors 4.0/s",
		"NET-LISTEN-OVERFLOW": "TcpExt ListenOverflows 1.0/s",
		"NET-RPF-DROPS":       "TcpExt IPReversePathFilter 20.0/s",
	}
	for id, w := range expect {
		if fs := got[id]; len(fs) != 1 || !strings.Contains(fs[0].Message, w) {
			t.Errorf("%s: %+v, want a finding containing %q", id, fs, w)
		}
	}
	objs := map[string]Severity{}
	for _, f := range got["NET-IF-ERRORS"] {
		objs[f.Object] = f.Severity
	}
	if len(objs) != 2 || objs["interface eth1"] != Critical || objs["interface eth0"] != Warning {
		t.Errorf("NET-IF-ERRORS on %v, want eth1 (critical: interconnect slave) and eth0 (warning), not the backup slave eth2 nor the bond", objs)
	}
	checkEvidence(t, root, Check(inv, Config{}))
}

func itoa(v int64) string {
	if v == 0 {
		return "0"
	}
	var b []byte
	for ; v > 0; v /= 10 {
		b = append([]byte{byte('0' + v%10)}, b...)
	}
	return string(b)
}

// TestFromGPnPPatterns: an Adapter pattern ("bond*", as oifcfg allows)
// matches the interfaces with an address in the profile's subnet.
func TestFromGPnPPatterns(t *testing.T) {
	inv := gather(t, fixtures+"ol8-rac-bond-jumbo", inventory.Options{})
	inv.Cluster.Networks = []inventory.ClusterNetwork{
		{Adapter: "eth*", Subnet: "10.0.1.0", Use: "public"},
		{Adapter: "bond*", Subnet: "192.168.10.0", Use: "cluster_interconnect"},
		{Adapter: "eth*", Subnet: "192.168.99.0", Use: "cluster_interconnect"}, // no eth has it
	}
	ic := FromGPnP(inv)
	if ic.From != "gpnp" || strings.Join(ic.Interfaces, ",") != "bond1" {
		t.Errorf("%+v", ic)
	}
}
