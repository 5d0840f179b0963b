package inventory

import (
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"
)

const bondingActiveBackup = `Ethernet Channel Bonding Driver: v5.15.0-200.131.27.el8uek.x86_64

Bonding Mode: fault-tolerance (active-backup)
Primary Slave: None
Currently Active Slave: eth1
MII Status: up
MII Polling Interval (ms): 100
Up Delay (ms): 0
Down Delay (ms): 0
Peer Notification Delay (ms): 0

Slave Interface: eth1
MII Status: up
Speed: 10000 Mbps
Duplex: full
Link Failure Count: 0
Permanent HW addr: 00:10:e0:5a:3c:11
Slave queue ID: 0

Slave Interface: eth2
MII Status: down
Speed: Unknown
Duplex: Unknown
Link Failure Count: 3
Permanent HW addr: 00:10:e0:5a:3c:12
Slave queue ID: 0
`

func TestParseBonding(t *testing.T) {
	b, err := ParseBonding(strings.NewReader(bondingActiveBackup))
	if err != nil {
		t.Fatal(err)
	}
	want := &Bond{Mode: "active-backup", MIIStatus: "up", ActiveSlave: "eth1", MIIPolling: 100 * time.Millisecond, Slaves: []BondSlave{
		{Name: "eth1", MIIStatus: "up", SpeedBitsPerSec: 10e9, PermanentAddr: "00:10:e0:5a:3c:11"},
		{Name: "eth2", MIIStatus: "down", LinkFailures: 3, PermanentAddr: "00:10:e0:5a:3c:12"},
	}}
	if !reflect.DeepEqual(b, want) {
		t.Errorf("got %+v\nwant %+v", b, want)
	}
	lacp := strings.Replace(bondingActiveBackup, "fault-tolerance (active-backup)", "IEEE 802.3ad Dynamic link aggregation", 1)
	if b, _ := ParseBonding(strings.NewReader(lacp)); b.Mode != "802.3ad" {
		t.Errorf("802.3ad mode parsed as %q", b.Mode)
	}
	if _, err := ParseBonding(strings.NewReader("garbage\n")); err == nil {
		t.Error("a file without Bonding Mode parsed")
	}
}

// TestParseSpeed: a speed the kernel does not know, however it prints it
// (-1 since 4.6, 4294967295 on 3.10, "Unknown" in /proc/net/bonding), or
// a value that is no speed, is 0: absent in JSON, never -1.
func TestParseSpeed(t *testing.T) {
	for in, want := range map[string]int64{
		"10000\n": 10e9, "1000": 1e9, "25000 Mbps": 25e9, " 100 Mbps ": 100e6, "400000": 400e9,
		"-1\n": 0, "4294967295\n": 0, "Unknown": 0, "0": 0, "": 0, "10G": 0, "4000000": 0,
	} {
		if got := ParseSpeed(in); got != want {
			t.Errorf("ParseSpeed(%q) = %d, want %d", in, got, want)
		}
	}
}

func TestParseIfcfg(t *testing.T) {
	c := ParseIfcfg(strings.NewReader(`# bond
DEVICE="bond1"
TYPE=Bond
BONDING_OPTS="mode=active-backup miimon=100"
ONBOOT=yes
MTU=9000
`), "/etc/sysconfig/network-scripts/ifcfg-bond1")
	if c.Interface != "bond1" || c.MTU != 9000 || c.MTULine != 6 || c.Type != "bond" || !c.OnBoot {
		t.Errorf("bond: %+v", c)
	}
	s := ParseIfcfg(strings.NewReader("NAME=eth1\nMASTER=bond1\nSLAVE=yes\nONBOOT=no\n"), "/x/ifcfg-eth1")
	if s.Interface != "eth1" || s.Master != "bond1" || s.MTU != 0 || s.OnBoot {
		t.Errorf("slave named by file: %+v", s)
	}
}

func TestParseKeyfile(t *testing.T) {
	c, ok := ParseKeyfile(strings.NewReader(`[connection]
id=bond1
uuid=4b8f0f6a-3a3e-4c4f-9d7e-7d0b5b1c2e3f
type=bond
interface-name=bond1
autoconnect=true

[ethernet]
mtu=9000

[bond]
miimon=100
mode=active-backup
`), "/etc/NetworkManager/system-connections/bond1.nmconnection")
	if !ok || c.Interface != "bond1" || c.MTU != 9000 || c.MTULine != 9 || c.Type != "bond" || !c.OnBoot || c.Connection != "bond1" {
		t.Errorf("bond keyfile: %+v", c)
	}
	m, ok := ParseKeyfile(strings.NewReader("[connection]\nid=Wired connection 2\ntype=ethernet\n\n[ethernet]\nmac-address=52:54:00:6B:21:0B\nmtu=9000\n"), "/x/Wired connection 2.nmconnection")
	if !ok || m.Interface != "" || m.MAC != "52:54:00:6b:21:0b" || m.MTU != 9000 || m.Connection != "Wired connection 2" {
		t.Errorf("keyfile bound to a MAC: %+v", m)
	}
	p, _ := ParseKeyfile(strings.NewReader("[connection]\nid=bond-slave-eth1\ntype=802-3-ethernet\ninterface-name=eth1\nmaster=bond1\nslave-type=bond\nautoconnect=false\n"), "/x/eth1.nmconnection")
	if p.Interface != "eth1" || p.Master != "bond1" || p.Type != "ethernet" || p.OnBoot || p.MTU != 0 || p.Connection != "bond-slave-eth1" {
		t.Errorf("port keyfile: %+v", p)
	}
}

func TestParseNetplan(t *testing.T) {
	cfgs, err := ParseNetplan([]byte(`network:
  version: 2
  ethernets:
    eno1: {dhcp4: true}
    ic0:
      match: {macaddress: "52:54:00:6b:21:0b"}
      set-name: eth1
      mtu: 9000
    eth2: {}
    eth3: {}
  bonds:
    bond0:
      interfaces: [eth2, eth3]
      mtu: 9000
      parameters: {mode: active-backup}
`), "/etc/netplan/01.yaml")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]PersistedConfig{}
	for _, c := range cfgs {
		got[c.Interface] = c
	}
	if c := got["eth1"]; c.MTU != 9000 || c.MTULine != 8 || c.Type != "ethernet" {
		t.Errorf("set-name device: %+v", c)
	}
	if c := got["bond0"]; c.MTU != 9000 || c.Type != "bond" {
		t.Errorf("bond: %+v", c)
	}
	if c := got["eth2"]; c.Master != "bond0" || c.MTU != 0 {
		t.Errorf("bond member: %+v", c)
	}
	if _, err := ParseNetplan([]byte("network: [unclosed"), "/etc/netplan/bad.yaml"); err == nil || !strings.Contains(err.Error(), "bad.yaml") {
		t.Errorf("bad YAML: %v", err)
	}
}

func TestParseFibTrieAndRoutes(t *testing.T) {
	local, connected := ParseFibTrie(strings.NewReader(`Main:
  +-- 0.0.0.0/0 3 0 5
     |-- 0.0.0.0
        /0 universe UNICAST
     +-- 192.168.10.0/24 2 0 2
        +-- 192.168.10.0/28 2 0 2
           |-- 192.168.10.0
              /24 link UNICAST
           |-- 192.168.10.11
              /32 host LOCAL
        |-- 192.168.10.255
           /32 link BROADCAST
Local:
     +-- 127.0.0.0/8 2 0 2
           |-- 127.0.0.1
              /32 host LOCAL
           |-- 10.9.9.9
              /32 host LOCAL
`))
	wantLocal := []netip.Addr{netip.MustParseAddr("10.9.9.9"), netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("192.168.10.11")}
	if !reflect.DeepEqual(local, wantLocal) {
		t.Errorf("local %v", local)
	}
	if len(connected) != 1 || connected[0].String() != "192.168.10.0/24" {
		t.Errorf("connected %v", connected)
	}
	routes, err := ParseRoutes(strings.NewReader("Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n" +
		"eth0\t00000000\t0101000A\t0003\t0\t0\t0\t00000000\t0\t0\t0\n" +
		"bond1\t000AA8C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n"))
	if err != nil {
		t.Fatal(err)
	}
	if routes[0].Gateway.String() != "10.0.1.1" || routes[1].Destination.String() != "192.168.10.0/24" {
		t.Errorf("routes %+v", routes)
	}
	if ifc, bits := matchAddress(netip.MustParseAddr("192.168.10.11"), routes, connected); ifc != "bond1" || bits != 24 {
		t.Errorf("192.168.10.11 matched %s/%d", ifc, bits)
	}
	if ifc, _ := matchAddress(netip.MustParseAddr("10.9.9.9"), routes, connected); ifc != "" {
		t.Errorf("an address without a connected route was matched to %q (the default route names no owner)", ifc)
	}
	if _, err := ParseRoutes(strings.NewReader("h\nbad line\n")); err == nil {
		t.Error("malformed route parsed")
	}
}

func TestParseIfInet6(t *testing.T) {
	got := ParseIfInet6(strings.NewReader("fe8000000000000000fc00fffe000001 04 40 20 80     eth0\n00000000000000000000000000000001 01 80 10 80       lo\n"))
	if !reflect.DeepEqual(got, map[string][]string{"eth0": {"fe80::fc:ff:fe00:1/64"}, "lo": {"::1/128"}}) {
		t.Errorf("%v", got)
	}
}

func TestParseGPnP(t *testing.T) {
	nets, err := ParseGPnP(strings.NewReader(`<?xml version="1.0" encoding="UTF-8"?><gpnp:GPnP-Profile Version="1.0" xmlns:gpnp="http://www.grid-pnp.org/2005/11/gpnp-profile"><gpnp:Network-Profile><gpnp:HostNetwork id="gen" HostName="*"><gpnp:Network id="net1" IP="10.0.1.0" Adapter="eth0" Use="public"/><gpnp:Network id="net2" IP="192.168.10.0" Adapter="bond1" Use="asm,cluster_interconnect"/></gpnp:HostNetwork></gpnp:Network-Profile></gpnp:GPnP-Profile>`))
	if err != nil {
		t.Fatal(err)
	}
	if len(nets) != 2 || nets[0].Interconnect() || !nets[1].Interconnect() || nets[1].Adapter != "bond1" || nets[1].Subnet != "192.168.10.0" {
		t.Errorf("%+v", nets)
	}
	if _, err := ParseGPnP(strings.NewReader("<html></html>")); err == nil {
		t.Error("a non-profile parsed")
	}
}

func TestSysctlFile(t *testing.T) {
	n := SysctlName("net.ipv4.conf", "eth1.100", "rp_filter")
	if n != "net.ipv4.conf.eth1/100.rp_filter" || SysctlFile(n) != "/proc/sys/net/ipv4/conf/eth1.100/rp_filter" {
		t.Errorf("%s -> %s", n, SysctlFile(n))
	}
}

func FuzzParsers(f *testing.F) {
	f.Add(bondingActiveBackup)
	f.Add("network:\n  ethernets:\n    eth1: {mtu: 9000}\n")
	f.Add("DEVICE=eth1\nMTU=9000\n")
	f.Add("[connection]\ninterface-name=eth1\n[ethernet]\nmtu=9000\n")
	f.Add("Main:\n     |-- 10.0.0.1\n        /32 host LOCAL\n")
	// Invariants: a parser that fails returns no result; what parses names
	// its objects (no empty interface names) and keeps addresses valid.
	f.Fuzz(func(t *testing.T, s string) {
		if b, err := ParseBonding(strings.NewReader(s)); err != nil && b != nil {
			t.Fatalf("ParseBonding: error %v and a result %+v", err, b)
		}
		if cs, err := ParseNetplan([]byte(s), "/f"); err != nil && len(cs) > 0 {
			t.Fatalf("ParseNetplan: error %v and %d results", err, len(cs))
		}
		ParseIfcfg(strings.NewReader(s), "/f")
		if c, ok := ParseKeyfile(strings.NewReader(s), "/f"); ok && c.File != "/f" {
			t.Fatalf("ParseKeyfile: file %q", c.File)
		}
		local, connected := ParseFibTrie(strings.NewReader(s))
		for _, a := range local {
			if !a.IsValid() {
				t.Fatal("ParseFibTrie: an invalid local address")
			}
		}
		for _, p := range connected {
			if !p.IsValid() {
				t.Fatal("ParseFibTrie: an invalid prefix")
			}
		}
		if rs, err := ParseRoutes(strings.NewReader(s)); err == nil {
			for _, r := range rs {
				if r.Interface == "" || !r.Destination.IsValid() {
					t.Fatalf("ParseRoutes: route %+v", r)
				}
			}
		} else if len(rs) > 0 {
			t.Fatalf("ParseRoutes: error %v and %d routes", err, len(rs))
		}
		for name := range ParseIfInet6(strings.NewReader(s)) {
			if name == "" {
				t.Fatal("ParseIfInet6: an empty interface name")
			}
		}
		if ns, err := ParseGPnP(strings.NewReader(s)); err != nil && len(ns) > 0 {
			t.Fatalf("ParseGPnP: error %v and %d networks", err, len(ns))
		}
	})
}
