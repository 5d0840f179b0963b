package inventory

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/fixturetest"
)

const fixtures = "../../testdata/nodes/"

var fixedNow = func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }

func gatherFixture(t testing.TB, root string) (*Inventory, *Source) {
	t.Helper()
	src, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	inv, err := Gather(context.Background(), src, Options{Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	return inv, src
}

func TestGatherBondFixture(t *testing.T) {
	inv, _ := gatherFixture(t, fixtures+"ol8-rac-bond-jumbo")
	bond := inv.Interface("bond1")
	if bond == nil || bond.Kind != "bond" || bond.MTU != 9000 || bond.Bond == nil || bond.Bond.Mode != "active-backup" ||
		strings.Join(bond.Ports, ",") != "eth1,eth2" || bond.Bond.File != "/proc/net/bonding/bond1" {
		t.Fatalf("bond1: %+v", bond)
	}
	if e := inv.Interface("eth1"); e.Kind != "bond-slave" || e.Type != "physical" || e.Master != "bond1" || e.SpeedBitsPerSec != 10e9 {
		t.Errorf("eth1: %+v", e)
	}
	if lo := inv.Interface("lo"); lo.Type != "loopback" {
		t.Errorf("lo: %+v", lo)
	}
	if got := strings.Join(inv.Interface("bond1").Addresses, " "); got != "169.254.12.45/19 192.168.10.11/24 fe80::210:e0ff:fe5a:3c11/64" {
		t.Errorf("bond1 addresses %q", got)
	}
	if inv.Cluster == nil || inv.Cluster.GPnPProfile != "/u01/app/19.0.0/grid/gpnp/profiles/peer/profile.xml" {
		t.Errorf("cluster %+v", inv.Cluster)
	}
	if inv.Sysctls["net.ipv4.ip_local_port_range"] != "9000 65500" || inv.Sysctls["net.ipv4.conf.bond1.rp_filter"] != "2" {
		t.Errorf("sysctls %v", inv.Sysctls)
	}
	if inv.Counters == nil || inv.Counters.IntervalNs != 0 || len(inv.Counters.Kernel) == 0 || inv.Counters.Kernel[0].Delta != nil {
		t.Errorf("counters without interval: %+v", inv.Counters)
	}
	if inv.Node.Hostname != "rac1" || inv.Node.OS != "Oracle Linux Server 8.9" || !inv.Node.Time.Equal(fixedNow()) {
		t.Errorf("node %+v", inv.Node)
	}
	for _, s := range inv.Sections {
		if s.Status != "ok" && s.Name != "mounts" && !(s.Name == "dnfs" && s.Status == "absent") {
			t.Errorf("section %+v", s)
		}
	}
}

func TestGatherNetplanFixture(t *testing.T) {
	inv, _ := gatherFixture(t, fixtures+"debian12-netplan")
	ps := inv.PersistedFor("eth1")
	if len(ps) != 1 || ps[0].MTU != 9000 || ps[0].Format != "netplan" || ps[0].File != "/etc/netplan/01-netcfg.yaml" {
		t.Errorf("eth1 persisted %+v", ps)
	}
}

// TestGatherEmptyTree: a tree with nothing readable still gathers, with
// every section saying why.
// TestGatherEmptyTree: a tree in which no file check reads exists is not
// an OK node: Gather says nothing could be read, and still fills the
// sections.
func TestGatherEmptyTree(t *testing.T) {
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "etc"), 0o755)
	src, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	inv, err := Gather(context.Background(), src, Options{Now: fixedNow})
	if !errors.Is(err, ErrNothingRead) || !strings.Contains(err.Error(), "none of the files check reads is there") {
		t.Fatalf("Gather of an empty tree: %v, want ErrNothingRead", err)
	}
	want := map[string]string{"interfaces": "absent", "addresses": "absent", "persisted": "absent",
		"sysctls": "absent", "counters": "absent", "cluster": "absent"}
	for _, s := range inv.Sections {
		if w, ok := want[s.Name]; ok && s.Status != w {
			t.Errorf("section %s: %s (%s), want %s", s.Name, s.Status, s.Detail, w)
		}
	}
	if a := inv.Section("addresses"); !strings.Contains(a.Detail, "IPv4 addresses not read") {
		t.Errorf("addresses detail %q", a.Detail)
	}
}

func TestInterfacesFile(t *testing.T) {
	dir := t.TempDir()
	fixturetest.Write(t, dir, "etc/network/interfaces", "auto lo\niface lo inet loopback\n\nsource-directory interfaces.d\n")
	fixturetest.Write(t, dir, "etc/network/interfaces.d/ic", "auto bond0\niface bond0 inet static\n    address 192.168.30.2/24\n    bond-slaves eth1 eth2\n    bond-mode active-backup\n    post-up ip link set dev bond0 mtu 9000\n\niface eth1 inet manual\n    bond-master bond0\n\nauto br0\niface br0 inet manual\n  bridge_ports vif1.0 \\\n    vif2.0\n  mtu 9000\n")
	fixturetest.Write(t, dir, "etc/network/interfaces.d/skip.bak", "iface eth9 inet manual\n")
	inv, _ := gatherFixture(t, dir)
	got := map[string]PersistedConfig{}
	for _, c := range inv.Persisted {
		got[c.Interface] = c
	}
	if c := got["bond0"]; c.MTU != 9000 || c.MTULine != 6 || c.Type != "bond" || !c.OnBoot || c.File != "/etc/network/interfaces.d/ic" {
		t.Errorf("bond0: %+v", c)
	}
	if c := got["eth1"]; c.Master != "bond0" || c.OnBoot {
		t.Errorf("eth1: %+v", c)
	}
	if c := got["br0"]; c.MTU != 9000 || c.MTULine != 15 || c.Type != "bridge" {
		t.Errorf("br0: %+v", c)
	}
	if _, ok := got["eth9"]; ok {
		t.Error("source-directory read a file run-parts would skip")
	}
}

func TestOpenBadRoots(t *testing.T) {
	dir := t.TempDir()
	notTar := filepath.Join(dir, "x.tar.gz")
	os.WriteFile(notTar, []byte("not gzip"), 0o644)
	empty := filepath.Join(dir, "empty")
	os.Mkdir(empty, 0o755)
	for _, root := range []string{filepath.Join(dir, "missing"), notTar, empty} {
		if _, err := Open(root); !errors.Is(err, ErrBadRoot) {
			t.Errorf("Open(%s) = %v, want ErrBadRoot", root, err)
		}
	}
}

// TestTreeCannotEscape: a captured tree whose link points outside it must
// not make check read this machine's files.
func TestTreeCannotEscape(t *testing.T) {
	dir := t.TempDir()
	fixturetest.Write(t, dir, "proc/sys/kernel/hostname", "inside\n")
	os.Symlink("/etc/hostname", filepath.Join(dir, "etc"))
	os.MkdirAll(filepath.Join(dir, "sys"), 0o755)
	os.Symlink("../../../../../../etc/os-release", filepath.Join(dir, "sys", "escape"))
	src, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if _, err := src.ReadFile("/etc"); err == nil {
		t.Error("absolute link followed out of the tree")
	}
	if _, err := src.ReadFile("/sys/escape"); err == nil {
		t.Error("relative link followed out of the tree")
	}
}

func TestCollectRoundTrip(t *testing.T) {
	inv, src := gatherFixture(t, fixtures+"ol7-everything-wrong")
	var buf bytes.Buffer
	if err := src.Collect(&buf, fixedNow()); err != nil {
		t.Fatal(err)
	}
	// The bundle keeps sysfs's links: class/net entries and masters.
	links := tarLinks(t, buf.Bytes())
	for name, target := range map[string]string{
		"sys/class/net/eth1": "../../devices/pci0000:00/0000:00:04.0/net/eth1",
		"sys/devices/pci0000:00/0000:00:04.0/net/eth1/master": "../../../../virtual/net/bond0",
		"proc/net": "self/net",
	} {
		if links[name] != target {
			t.Errorf("bundle link %s -> %q, want %q", name, links[name], target)
		}
	}
	file := filepath.Join(t.TempDir(), "b.tar.gz")
	os.WriteFile(file, buf.Bytes(), 0o644)
	inv2, src2 := gatherFixture(t, file)
	if src2.Origin() != file {
		t.Errorf("origin %s", src2.Origin())
	}
	inv.Node.Root, inv2.Node.Root = "", ""
	a, _ := json.Marshal(inv)
	b, _ := json.Marshal(inv2)
	if !bytes.Equal(a, b) {
		t.Errorf("inventory differs after the round trip:\n%s\n%s", a, b)
	}
	tmp := src2.Root()
	src2.Close()
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Errorf("unpacked bundle %s not removed: %v", tmp, err)
	}
}

// TestUnpackRejectsHostileBundles: each malformed bundle is refused, and
// its half-unpacked temporary directory is removed (TMPDIR is a directory
// of the test's own, which must be empty afterwards).
func TestUnpackRejectsHostileBundles(t *testing.T) {
	bundles := t.TempDir()
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	cases := map[string]*tar.Header{
		"parent entry":  {Name: "../evil", Typeflag: tar.TypeReg, Size: 0, Mode: 0o644},
		"absolute link": {Name: "etc/x", Typeflag: tar.TypeSymlink, Linkname: "/etc/shadow"},
		"escaping link": {Name: "etc/x", Typeflag: tar.TypeSymlink, Linkname: "../../etc/shadow"},
		"device":        {Name: "dev/sda", Typeflag: tar.TypeBlock},
	}
	for name, h := range cases {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		tw := tar.NewWriter(zw)
		tw.WriteHeader(h)
		tw.Close()
		zw.Close()
		file := filepath.Join(bundles, "b.tar.gz")
		os.WriteFile(file, buf.Bytes(), 0o644)
		if _, err := Open(file); !errors.Is(err, ErrBadRoot) {
			t.Errorf("%s: Open = %v, want ErrBadRoot", name, err)
		}
	}
	assertEmpty(t, tmp)
}

func TestRelativeTarget(t *testing.T) {
	for _, c := range [][3]string{
		{"/sys/class/net/eth0", "/sys/devices/virtual/net/eth0", "../../devices/virtual/net/eth0"},
		{"/proc/net", "self/net", "self/net"},
		{"/a/b", "/a/c", "c"},
	} {
		if got := relativeTarget(c[0], c[1]); got != c[2] {
			t.Errorf("relativeTarget(%s, %s) = %s, want %s", c[0], c[1], got, c[2])
		}
	}
}

// TestInterfaceKinds builds a sysfs tree with one device of each kind, laid
// out as the kernel does, and checks how each is classified.
func TestInterfaceKinds(t *testing.T) {
	dir := t.TempDir()
	dev := func(name, devpath, uevent string, idx, iflink int, extra map[string]string) string {
		attrs := map[string]string{"mtu": "1500", "operstate": "up", "type": "1", "ifindex": itoa(idx),
			"iflink": itoa(iflink), "uevent": uevent + "INTERFACE=" + name + "\nIFINDEX=" + itoa(idx)}
		for k, v := range extra {
			attrs[k] = v
		}
		return fixturetest.Interface(t, dir, name, devpath, attrs)
	}
	dev("eth1", "pci0000:00/0000:00:04.0", "", 2, 2, nil)
	dev("eth1.100", "virtual", "DEVTYPE=vlan\n", 3, 2, nil)
	fixturetest.Write(t, dir, "proc/net/vlan/eth1.100", "eth1.100  VID: 100\t REORDER_HDR: 1  dev->priv_flags: 1001\n         total frames received            0\n\nDevice: eth1\nINGRESS priority mappings: 0:0  1:0\n")
	br := dev("br0", "virtual", "DEVTYPE=bridge\n", 4, 4, nil)
	os.MkdirAll(filepath.Join(dir, br, "brif"), 0o755)
	os.Symlink("../../vnet0/brport", filepath.Join(dir, br, "brif", "vnet0"))
	vnet := dev("vnet0", "virtual", "", 5, 5, map[string]string{"tun_flags": "0x1002"})
	os.Symlink("../br0", filepath.Join(dir, vnet, "master"))
	dev("veth-t1a", "virtual", "", 6, 7, nil)
	dev("dummy0", "virtual", "", 8, 8, nil)
	inv, src := gatherFixture(t, dir)
	// A bundle of what was read gives the same kinds: every file the
	// classification looked at was recorded.
	var buf bytes.Buffer
	if err := src.Collect(&buf, fixedNow()); err != nil {
		t.Fatal(err)
	}
	bundle := filepath.Join(t.TempDir(), "kinds.tar.gz")
	os.WriteFile(bundle, buf.Bytes(), 0o644)
	again, _ := gatherFixture(t, bundle)
	want := map[string][2]string{
		"eth1": {"physical", "physical"}, "eth1.100": {"vlan", "vlan"}, "br0": {"bridge", "bridge"},
		"vnet0": {"bridge-port", "tun"}, "veth-t1a": {"veth", "veth"}, "dummy0": {"virtual", "virtual"},
	}
	for name, w := range want {
		if ifc := again.Interface(name); ifc == nil || ifc.Kind != w[0] || ifc.Type != w[1] {
			t.Errorf("%s from the bundle: %+v, want kind %s type %s", name, ifc, w[0], w[1])
		}
		ifc := inv.Interface(name)
		if ifc == nil || ifc.Kind != w[0] || ifc.Type != w[1] {
			t.Errorf("%s: %+v, want kind %s type %s", name, ifc, w[0], w[1])
		}
	}
	if v := inv.Interface("eth1.100"); v.Parent != "eth1" || v.VLANID != 100 {
		t.Errorf("vlan %+v", v)
	}
	if b := inv.Interface("br0"); strings.Join(b.Ports, ",") != "vnet0" {
		t.Errorf("bridge ports %v", b.Ports)
	}
	if _, ok := inv.Sysctls["net.ipv4.conf.eth1/100.rp_filter"]; ok {
		t.Error("sysctl of a file that does not exist")
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// TestBondFromSysfs: without /proc/net/bonding (unreadable, or a bundle
// from a system that hides it) the bond comes from sysfs.
func TestBondFromSysfs(t *testing.T) {
	dir := t.TempDir()
	fixturetest.Copy(t, fixtures+"ol8-rac-bond-jumbo", dir)
	os.Remove(filepath.Join(dir, "proc/self/net/bonding/bond1"))
	inv, _ := gatherFixture(t, dir)
	b := inv.Interface("bond1").Bond
	if b == nil || b.Mode != "active-backup" || b.ActiveSlave != "eth1" || len(b.Slaves) != 2 || b.File != "/sys/class/net/bond1/bonding" {
		t.Errorf("bond from sysfs: %+v", b)
	}
}

// TestKeyfileBoundToMAC: NetworkManager profiles that name no interface are
// matched by MAC, a bond slave by its permanent address.
func TestKeyfileBoundToMAC(t *testing.T) {
	dir := t.TempDir()
	fixturetest.Copy(t, fixtures+"ol8-rac-bond-jumbo", dir)
	fixturetest.Write(t, dir, "etc/NetworkManager/system-connections/Wired connection 1.nmconnection",
		"[connection]\nid=Wired connection 1\ntype=ethernet\n\n[ethernet]\nmac-address=00:10:E0:5A:3C:12\n")
	fixturetest.Write(t, dir, "etc/NetworkManager/system-connections/public.nmconnection",
		"[connection]\nid=public\ntype=ethernet\n\n[ethernet]\nmac-address=00:10:e0:5a:3c:10\nmtu=1500\n")
	inv, _ := gatherFixture(t, dir)
	got := map[string]string{}
	for _, c := range inv.Persisted {
		if c.Format == "networkmanager" {
			got[c.File] = c.Interface
		}
	}
	if got["/etc/NetworkManager/system-connections/Wired connection 1.nmconnection"] != "eth2" ||
		got["/etc/NetworkManager/system-connections/public.nmconnection"] != "eth0" {
		t.Errorf("MAC-bound profiles matched to %v", got)
	}
}

// assertEmpty fails the test for every entry left in dir.
func assertEmpty(t *testing.T, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		t.Errorf("left behind in the temporary directory: %s", e.Name())
	}
}
