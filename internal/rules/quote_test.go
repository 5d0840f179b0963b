package rules

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/inventory"
	"github.com/interlink/interlink/internal/shellq"
	"github.com/interlink/interlink/internal/shellq/shellqtest"
)

// hostileNames are names a bundle can give an interface, a mount point or a
// path: valid Linux interface names ($(id), `id`, a;b, it's, -rf, *: the
// kernel refuses only '/', ':' and blanks), and what only a captured tree
// or a mount table can hold (a blank, a newline, an escape sequence).
var hostileNames = []string{"$(id)", "`id`", "a;b", "a b", "it's", "-rf", "*", "a\nb", "x\x1b[2J", "ïface"}

// fixWord is what a fix line must hold after anchor: words, each one shell
// word; "{}" in a word stands for the hostile name.
type fixWord struct {
	anchor string
	words  []string
}

// fstabLine marks a fix that holds an fstab line (after "use: " or "add to
// /etc/fstab: ") whose device and mount point must stay one field each.
type fstabLine struct{ dev, mountPoint string }

var quoteCases = []struct {
	rule  string
	build func(name string) (*inventory.Inventory, *Config)
	want  []fixWord
	fstab *fstabLine
}{
	{"NET-BOND-MTU", func(n string) (*inventory.Inventory, *Config) {
		return quoteInv(ifc("bond0", "bond", 9000), slave(n, "bond0", 1500)), &Config{}
	}, []fixWord{{"ip link set dev ", []string{"{}", "mtu", "9000"}}}, nil},
	{"NET-BRIDGE-MTU", func(n string) (*inventory.Inventory, *Config) {
		port := ifc(n, "physical", 1500)
		port.Kind, port.Master = "bridge-port", "br0"
		return quoteInv(ifc("br0", "bridge", 9000), port), &Config{}
	}, []fixWord{{"ip link set dev ", []string{"{}", "mtu", "9000"}}, {"ip link set dev ", []string{"br0", "mtu", "9000"}}}, nil},
	{"NET-BRIDGE-MTU", func(n string) (*inventory.Inventory, *Config) {
		port := ifc("vnet0", "physical", 1500)
		port.Kind, port.Master = "bridge-port", n
		return quoteInv(ifc(n, "bridge", 9000), port), &Config{}
	}, []fixWord{{"ip link set dev ", []string{"vnet0", "mtu", "9000"}}, {"ip link set dev ", []string{"{}", "mtu", "9000"}}}, nil},
	{"NET-IC-COALESCE", func(n string) (*inventory.Inventory, *Config) {
		inv := quoteInv(ifc(n, "physical", 9000))
		inv.Host = &inventory.Host{NICs: []inventory.NIC{{Interface: n, Coalesce: &inventory.Coalesce{RxUsecs: 100, RxFrames: 128},
			CoalesceFile: inventory.CoalesceFile(n)}}}
		return inv, &Config{Interconnect: []string{n}}
	}, []fixWord{{"now: ethtool -C ", []string{"{}", "adaptive-rx", "on"}}}, nil},
	{"NET-IC-IRQ", func(n string) (*inventory.Inventory, *Config) {
		inv := quoteInv(ifc(n, "physical", 9000))
		inv.Host = &inventory.Host{NICs: []inventory.NIC{{Interface: n, IRQs: []inventory.IRQ{
			{Number: 121, Name: n + "-TxRx-0", Counts: []int64{10, 0}}, {Number: 122, Name: n + "-TxRx-1", Counts: []int64{20, 0}}}}}}
		return inv, &Config{Interconnect: []string{n}}
	}, []fixWord{{"NUMA node: ", []string{"/sys/class/net/{}/device/local_cpulist"}}}, nil},
	{"NET-BOND-SLAVE-DOWN", func(n string) (*inventory.Inventory, *Config) {
		bond := ifc("bond0", "bond", 9000)
		bond.Bond = &inventory.Bond{Mode: "active-backup", Slaves: []inventory.BondSlave{{Name: n, MIIStatus: "down"}}}
		return quoteInv(bond), &Config{}
	}, []fixWord{{"(ethtool ", []string{"{}"}}}, nil},
	{"NET-MTU-PERSIST", func(n string) (*inventory.Inventory, *Config) {
		inv := quoteInv(ifc(n, "physical", 9000))
		inv.Persisted = []inventory.PersistedConfig{{Interface: n, MTU: 1500, File: "/etc/sysconfig/network-scripts/ifcfg-" + n, Format: "ifcfg", OnBoot: true}}
		return inv, &Config{}
	}, []fixWord{{"MTU=9000 in ", []string{"/etc/sysconfig/network-scripts/ifcfg-{}"}}}, nil},
	{"NET-MTU-PERSIST", func(n string) (*inventory.Inventory, *Config) {
		// eth1's file names the hostile bond as master; the bond's file
		// persists 1500: the fix is for the bond's file.
		inv := quoteInv(ifc(n, "bond", 1500), ifc("eth1", "physical", 9000))
		inv.Persisted = []inventory.PersistedConfig{{Interface: "eth1", Master: n, File: "/etc/sysconfig/network-scripts/ifcfg-eth1", Format: "ifcfg", OnBoot: true},
			{Interface: n, MTU: 1500, File: "/etc/sysconfig/network-scripts/ifcfg-x", Format: "ifcfg", OnBoot: true}}
		return inv, &Config{}
	}, []fixWord{{"MTU=9000 in ", []string{"ifcfg-{}"}}}, nil},
	{"NET-MTU-PERSIST", func(n string) (*inventory.Inventory, *Config) {
		inv := quoteInv(ifc(n, "physical", 9000))
		inv.Persisted = []inventory.PersistedConfig{{Interface: n, MTU: 1500, File: "/etc/NetworkManager/system-connections/" + n + ".nmconnection",
			Format: "networkmanager", OnBoot: true, Connection: "System " + n}}
		return inv, &Config{}
	}, []fixWord{{"nmcli connection modify ", []string{"System {}", "802-3-ethernet.mtu", "9000"}}, {"(writes ", []string{"/etc/NetworkManager/system-connections/{}.nmconnection"}}}, nil},
	{"NET-MTU-PERSIST", func(n string) (*inventory.Inventory, *Config) {
		inv := quoteInv(ifc(n, "physical", 9000))
		inv.Persisted = []inventory.PersistedConfig{{Interface: n, MTU: 1500, File: "/etc/netplan/" + n + ".yaml", Format: "netplan", OnBoot: true}}
		return inv, &Config{}
	}, []fixWord{{"for ", []string{"{}", "in", "/etc/netplan/{}.yaml"}}}, nil},
	{"NET-MTU-PERSIST", func(n string) (*inventory.Inventory, *Config) {
		inv := quoteInv(ifc(n, "physical", 9000))
		inv.Persisted = []inventory.PersistedConfig{{Interface: n, MTU: 1500, File: "/etc/network/interfaces.d/" + n, Format: "interfaces", OnBoot: true}}
		return inv, &Config{}
	}, []fixWord{{"stanza of ", []string{"{}", "in", "/etc/network/interfaces.d/{}"}}}, nil},
	{"NET-IC-MISSING", func(n string) (*inventory.Inventory, *Config) {
		return quoteInv(ifc("eth0", "physical", 1500)), &Config{Interconnect: []string{n}}
	}, []fixWord{{"create and persist ", []string{"{}"}}}, nil},
	{"NET-IC-DOWN", func(n string) (*inventory.Inventory, *Config) {
		i := ifc(n, "physical", 9000)
		i.OperState = "down"
		return quoteInv(i), &Config{Interconnect: []string{n}}
	}, []fixWord{{"ip link set dev ", []string{"{}", "up"}}, {"(ethtool ", []string{"{}"}}}, nil},
	{"NET-IC-NOT-PERSISTED", func(n string) (*inventory.Inventory, *Config) {
		return quoteInv(ifc(n, "physical", 9000)), &Config{Interconnect: []string{n}}
	}, []fixWord{{"configuration for ", []string{"{}"}}, {"(", []string{"ifcfg-{}"}}}, nil},
	{"NET-IC-NOT-PERSISTED", func(n string) (*inventory.Inventory, *Config) {
		inv := quoteInv(ifc(n, "physical", 9000))
		inv.Persisted = []inventory.PersistedConfig{{Interface: n, MTU: 9000, File: "/etc/network/interfaces", Format: "interfaces"}}
		return inv, &Config{Interconnect: []string{n}}
	}, []fixWord{{"auto line for ", []string{"{}"}}}, nil},
	{"NET-IC-MTU", func(n string) (*inventory.Inventory, *Config) {
		return quoteInv(ifc(n, "physical", 1500)), &Config{Interconnect: []string{n}}
	}, []fixWord{{"MTU 9000 on ", []string{"{}"}}}, nil},
	{"NET-IC-MULTICAST", func(n string) (*inventory.Inventory, *Config) {
		i := ifc(n, "physical", 9000)
		i.Flags = inventory.FlagUp
		return quoteInv(i), &Config{Interconnect: []string{n}}
	}, []fixWord{{"ip link set dev ", []string{"{}", "multicast", "on"}}}, nil},
	{"NET-RP-FILTER", func(n string) (*inventory.Inventory, *Config) {
		inv := quoteInv(ifc(n, "physical", 9000), ifc("eth2", "physical", 9000))
		inv.Sysctls = map[string]string{"net.ipv4.conf.all.rp_filter": "1", inventory.SysctlName("net.ipv4.conf", n, "rp_filter"): "1",
			"net.ipv4.conf.eth2.rp_filter": "1"}
		return inv, &Config{Interconnect: []string{n, "eth2"}}
	}, []fixWord{{"sysctl -w ", []string{"net.ipv4.conf.{}.rp_filter=2", "net.ipv4.conf.eth2.rp_filter=2"}}}, nil},
	{"NET-HAIP", func(n string) (*inventory.Inventory, *Config) {
		i := ifc(n, "physical", 1500)
		i.Addresses = []string{"169.254.7.7/16"}
		return quoteInv(i, ifc("bond1", "bond", 9000)), &Config{Interconnect: []string{"bond1"}}
	}, []fixWord{{"ip address del ", []string{"169.254.7.7/16", "dev", "{}"}}}, nil},
	{"NET-GPNP-SUBNET", func(n string) (*inventory.Inventory, *Config) {
		i := ifc(n, "bond", 9000)
		i.Addresses = []string{"192.168.10.11/24"}
		inv := quoteInv(i)
		inv.Cluster = &inventory.Cluster{GPnPProfile: "/u01/app/19.0.0/grid/gpnp/profiles/peer/profile.xml",
			Networks: []inventory.ClusterNetwork{{Adapter: n, Subnet: "192.168.30.0", Use: "asm,cluster_interconnect"}}}
		return inv, &Config{Interconnect: []string{n}}
	}, []fixWord{{"give ", []string{"{}"}}, {"oifcfg setif -global ", []string{"{}/192.168.10.0:asm,cluster_interconnect"}},
		{"oifcfg delif -global ", []string{"{}/192.168.30.0"}}}, nil},
	{"NET-IF-ERRORS", func(n string) (*inventory.Inventory, *Config) {
		inv := quoteInv(ifc(n, "physical", 9000))
		d, r := int64(50), 5.0
		inv.Counters = &inventory.Counters{IntervalNs: 10 * time.Second, Interfaces: []inventory.IfCounters{{Interface: n,
			Counters: []inventory.Counter{{Group: n, Name: "rx_errors", Total: 90, Delta: &d, PerSec: &r}}}}}
		return inv, &Config{}
	}, []fixWord{{"(ethtool -S ", []string{"{}"}}, {"(ethtool -g ", []string{"{}"}}}, nil},
	{"NFS-SOFT", func(n string) (*inventory.Inventory, *Config) {
		m := nfsMountOf("/u02/"+n, "soft", true, true)
		return withMounts(quoteInv(), m), &Config{Platform: Linux}
	}, []fixWord{{"(umount ", []string{"/u02/{}"}}, {"; mount ", []string{"/u02/{}"}}}, &fstabLine{"nas01:/vol/ora", "/u02/{}"}},
	{"NFS-BG", func(n string) (*inventory.Inventory, *Config) {
		m := nfsMountOf("/u02/"+n, "hard", true, true)
		m.Static = mountOpts("rw,hard,nointr,proto=tcp,vers=3,rsize=65536,wsize=65536,timeo=600,actimeo=0", inventory.FstabFile, m.Device)
		return withMounts(quoteInv(), m), &Config{Platform: Linux, MountRoles: map[string]Role{"/u02/" + n: RoleDatafiles}}
	}, nil, &fstabLine{"nas01:/vol/ora", "/u02/{}"}},
	{"NFS-RUNTIME-VS-FSTAB", func(n string) (*inventory.Inventory, *Config) {
		m := nfsMountOf("/u02/"+n, "hard", true, true)
		m.Runtime = mountOpts("soft,proto=tcp,vers=3,rsize=65536,wsize=65536,timeo=600", inventory.MountinfoFile, m.Device)
		return withMounts(quoteInv(), m), &Config{Platform: Linux}
	}, []fixWord{{"(umount ", []string{"/u02/{}"}}, {"; mount ", []string{"/u02/{}"}}}, nil},
	{"NFS-NOT-MOUNTED", func(n string) (*inventory.Inventory, *Config) {
		m := nfsMountOf("/u02/"+n, "hard", false, true)
		return withMounts(quoteInv(), m), &Config{Platform: Linux}
	}, []fixWord{{"mount ", []string{"/u02/{}"}}}, nil},
	{"NFS-NOT-PERSISTED", func(n string) (*inventory.Inventory, *Config) {
		m := nfsMountOf("/u02/"+n, "hard", true, false)
		m.Device, m.Export = "nas01:/vol/"+n, "/vol/"+n
		m.Runtime.Device = m.Device
		return withMounts(quoteInv(), m), &Config{Platform: Linux, MountRoles: map[string]Role{"/u02/" + n: RoleBackup}}
	}, nil, &fstabLine{"nas01:/vol/{}", "/u02/{}"}},
	{"DNFS-MOUNT", func(n string) (*inventory.Inventory, *Config) {
		inv := quoteInv()
		inv.DNFS = &inventory.DNFS{Files: []*inventory.Oranfstab{{File: "/etc/oranfstab", Servers: []inventory.DNFSServer{{Name: "nas01", Line: 1,
			Exports: []inventory.DNFSExport{{Export: "/vol/" + n, Mount: "/u05/" + n, Line: 3}}}}}}}
		return inv, &Config{}
	}, []fixWord{{"mount ", []string{"nas01:/vol/{}", "on", "/u05/{}"}}, {"then: mount ", []string{"/u05/{}"}}}, nil},
	{"DNFS-OFF", func(n string) (*inventory.Inventory, *Config) {
		inv := quoteInv()
		home := "/u01/app/oracle/" + n
		inv.DNFS = &inventory.DNFS{Homes: []inventory.OracleHome{{Path: home, DNFS: inventory.DNFSOff, Oranfstab: home + "/dbs/oranfstab"}}}
		return inv, &Config{}
	}, []fixWord{{"cd ", []string{"/u01/app/oracle/{}/rdbms/lib"}}}, nil},
}

// TestFixQuotesNames renders the fix line of every rule that names
// something from the node, for hostile names, and proves with a shell
// parser and with bash and sh that each name stays one word with its value;
// a name in an fstab line stays one field. Outside those words the raw name
// must not appear in the fix at all.
func TestFixQuotesNames(t *testing.T) {
	shellqtest.ShareDir(t) // one directory for the shells of all subtests
	for _, c := range quoteCases {
		for _, name := range hostileNames {
			t.Run(c.rule+"/"+strconv.Quote(name), func(t *testing.T) {
				inv, cfg := c.build(name)
				var fs []Finding
				for _, f := range Evaluate(inv, cfg) {
					if f.Rule == c.rule {
						fs = append(fs, f)
					}
				}
				if len(fs) == 0 && c.rule == "NET-GPNP-SUBNET" && strings.ContainsAny(name, "*?[") {
					t.Skip("an Adapter with glob characters is a pattern, not judged")
				}
				if len(fs) != 1 {
					t.Fatalf("%d %s findings, want 1: %+v", len(fs), c.rule, fs)
				}
				fix := fs[0].Fix
				rest, at := "", 0
				for _, w := range c.want {
					words := make([]string, len(w.words))
					for i, x := range w.words {
						words[i] = strings.ReplaceAll(x, "{}", name)
					}
					end := shellqtest.Check(t, fix, at, w.anchor, words...)
					if end < 0 {
						t.Fatalf("fix: %q", fix)
					}
					rest += fix[at:strings.Index(fix[at:], w.anchor)+at+len(w.anchor)] + " "
					at = end
				}
				rest += fix[at:]
				if c.fstab != nil {
					rest = checkFstabLine(t, rest, strings.ReplaceAll(c.fstab.dev, "{}", name), strings.ReplaceAll(c.fstab.mountPoint, "{}", name))
				}
				if shellq.Quote(name) != name && strings.Contains(rest, name) {
					t.Errorf("the raw name %q is in the fix outside its quoted words: %q", name, fix)
				}
			})
		}
	}
}

// checkFstabLine finds the fstab line in fix (device, mount point, "nfs",
// options, "0 0"), checks that its first two fields unescape to dev and
// mountPoint, and returns fix without the line.
func checkFstabLine(t *testing.T, fix, dev, mountPoint string) string {
	t.Helper()
	start := strings.Index(fix, "use: ")
	if start < 0 {
		start = strings.Index(fix, "/etc/fstab: ")
	}
	if start < 0 {
		t.Fatalf("no fstab line in %q", fix)
	}
	start = strings.Index(fix[start:], " ") + start + 1
	end := strings.Index(fix[start:], " 0 0")
	if end < 0 {
		t.Fatalf("no fstab line in %q", fix)
	}
	end += start + len(" 0 0")
	f := strings.Fields(fix[start:end])
	if len(f) != 6 || unescapeFstab(f[0]) != dev || unescapeFstab(f[1]) != mountPoint || f[2] != "nfs" {
		t.Errorf("fstab line %q: fields %q, want %q and %q as the first two", fix[start:end], f, dev, mountPoint)
	}
	return fix[:start] + fix[end:]
}

// unescapeFstab undoes fstab(5)'s octal escapes, as libmount reads them.
func unescapeFstab(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// quoteInv is an inventory of ifcs whose sections all read.
func quoteInv(ifcs ...inventory.Interface) *inventory.Inventory {
	inv := &inventory.Inventory{Interfaces: ifcs, Sysctls: map[string]string{}, Node: inventory.Node{Hostname: "rac1"}}
	for _, s := range []string{"interfaces", "addresses", "persisted", "sysctls", "mounts"} {
		inv.Sections = append(inv.Sections, inventory.Section{Name: s, Status: "ok"})
	}
	return inv
}

func withMounts(inv *inventory.Inventory, ms ...inventory.Mount) *inventory.Inventory {
	inv.Mounts = ms
	return inv
}

func ifc(name, typ string, mtu int) inventory.Interface {
	return inventory.Interface{Name: name, Kind: typ, Type: typ, MTU: mtu, OperState: "up", Carrier: ptrInt(1),
		Flags: inventory.FlagUp | inventory.FlagMulticast, SysfsPath: "/sys/class/net/" + name}
}

func ptrInt(v int) *int { return &v }

func slave(name, master string, mtu int) inventory.Interface {
	i := ifc(name, "physical", mtu)
	i.Kind, i.Master = "bond-slave", master
	return i
}

// nfsMountOf is an NFS mount of nas01:/vol/ora at mp with options that
// satisfy every rule but hard (or soft), mounted and in fstab as asked.
func nfsMountOf(mp, hard string, mounted, static bool) inventory.Mount {
	const dev = "nas01:/vol/ora"
	opts := "rw,bg," + hard + ",proto=tcp,vers=3,rsize=65536,wsize=65536,timeo=600"
	m := inventory.Mount{Device: dev, Server: "nas01", Export: "/vol/ora", MountPoint: mp, FSType: "nfs", Mounted: mounted, RuntimeTable: inventory.MountinfoFile}
	if mounted {
		m.Runtime = mountOpts(opts, inventory.MountinfoFile, dev)
	}
	if static {
		m.Static = mountOpts(opts, inventory.FstabFile, dev)
	}
	return m
}

func mountOpts(raw, file, dev string) *inventory.MountOptions {
	o, err := inventory.ParseMountOptions(raw)
	if err != nil {
		panic(err)
	}
	o.File, o.Line, o.Device, o.FSType = file, 1, dev, "nfs"
	return o
}
