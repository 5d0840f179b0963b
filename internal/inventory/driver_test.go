package inventory

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"testing"

	"github.com/interlink/interlink/internal/fixturetest"
)

// bundleOf collects what src read and gathers the bundle again.
func bundleOf(t *testing.T, src *Source) (*Inventory, []byte) {
	t.Helper()
	var buf bytes.Buffer
	if err := src.Collect(&buf, fixedNow()); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "b.tar.gz")
	if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	inv, _ := gatherFixture(t, file)
	return inv, buf.Bytes()
}

// drivers maps each interface to its driver, and each bond slave (as
// "bond/slave") to the driver its bond lists.
func drivers(inv *Inventory) map[string]string {
	m := map[string]string{}
	for _, ifc := range inv.Interfaces {
		m[ifc.Name] = ifc.Driver
		if ifc.Bond != nil {
			for _, s := range ifc.Bond.Slaves {
				m[ifc.Name+"/"+s.Name] = s.Driver
			}
		}
	}
	return m
}

func sameDrivers(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	for k, w := range want {
		if g, ok := got[k]; !ok || g != w {
			t.Errorf("%s: %s driver %q (listed %v), want %q", what, k, g, ok, w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%s: drivers %v, want %v", what, got, want)
	}
}

// TestDriverRACFixture: the RAC node's NICs name their drivers (the PCI
// device's driver link), the bond lists its slaves' drivers from
// /proc/net/bonding and from sysfs alike, software links have none, and
// the node's bundle gives the same.
func TestDriverRACFixture(t *testing.T) {
	want := map[string]string{"bond1": "", "eth0": "ixgbe", "eth1": "mlx5_core", "eth2": "mlx5_core", "lo": "",
		"bond1/eth1": "mlx5_core", "bond1/eth2": "mlx5_core"}
	inv, src := gatherFixture(t, fixtures+"ol8-rac-bond-jumbo")
	sameDrivers(t, "tree", drivers(inv), want)
	again, raw := bundleOf(t, src)
	sameDrivers(t, "bundle", drivers(again), want)
	links := tarLinks(t, raw)
	if got := links["sys/devices/pci0000:00/0000:00:04.0/driver"]; got != "../../../bus/pci/drivers/mlx5_core" {
		t.Errorf("bundle keeps eth1's driver link as %q", got)
	}

	dir := t.TempDir()
	fixturetest.Copy(t, fixtures+"ol8-rac-bond-jumbo", dir)
	os.Remove(filepath.Join(dir, "proc/self/net/bonding/bond1"))
	inv, _ = gatherFixture(t, dir)
	if b := inv.Interface("bond1").Bond; b == nil || b.File != "/sys/class/net/bond1/bonding" {
		t.Fatalf("bond not from sysfs: %+v", b)
	}
	sameDrivers(t, "bond from sysfs", drivers(inv), want)
}

// TestDriverVirtio: a virtio NIC as a guest's sysfs has it (the driver
// belongs to the virtioN device under the PCI function), a device with no
// driver bound, a link captured with an absolute target, and a veth.
func TestDriverVirtio(t *testing.T) {
	dir := t.TempDir()
	attrs := func(idx, iflink string) map[string]string {
		return map[string]string{"mtu": "9000", "operstate": "up", "type": "1", "ifindex": idx, "iflink": iflink}
	}
	eth1 := fixturetest.Interface(t, dir, "eth1", "pci0000:00/0000:00:04.0/virtio1", attrs("2", "2"))
	fixturetest.Symlink(t, dir, eth1+"/device", "../../../virtio1")
	fixturetest.Symlink(t, dir, "/sys/devices/pci0000:00/0000:00:04.0/virtio1/driver", "../../../../bus/virtio/drivers/virtio_net")
	eth2 := fixturetest.Interface(t, dir, "eth2", "pci0000:00/0000:00:05.0", attrs("3", "3"))
	fixturetest.Symlink(t, dir, eth2+"/device", "../../../0000:00:05.0") // unbound: no driver link
	eth3 := fixturetest.Interface(t, dir, "eth3", "pci0000:00/0000:00:06.0", attrs("4", "4"))
	fixturetest.Symlink(t, dir, eth3+"/device", "../../../0000:00:06.0")
	fixturetest.Symlink(t, dir, "/sys/devices/pci0000:00/0000:00:06.0/driver", "/sys/bus/pci/drivers/e1000e")
	fixturetest.Interface(t, dir, "veth-a", "virtual", attrs("5", "6"))
	want := map[string]string{"eth1": "virtio_net", "eth2": "", "eth3": "e1000e", "veth-a": ""}
	inv, src := gatherFixture(t, dir)
	sameDrivers(t, "tree", drivers(inv), want)
	if e := inv.Interface("eth2"); e.Type != "physical" {
		t.Errorf("eth2 without a driver: %+v", e)
	}
	again, raw := bundleOf(t, src)
	sameDrivers(t, "bundle", drivers(again), want)
	// The absolute target is kept relative, inside the bundle.
	if got := tarLinks(t, raw)["sys/devices/pci0000:00/0000:00:06.0/driver"]; got != "../../../bus/pci/drivers/e1000e" {
		t.Errorf("bundle keeps eth3's driver link as %q", got)
	}
}

// TestDriverLive: on this machine each interface's driver is what its
// device/driver link names, and a bundle of the live audit gives the same.
func TestDriverLive(t *testing.T) {
	inv, src := gatherFixture(t, "/")
	want := map[string]string{}
	nics := 0
	for _, ifc := range inv.Interfaces {
		d := ""
		if l, err := os.Readlink("/sys/class/net/" + ifc.Name + "/device/driver"); err == nil {
			d = filepath.Base(l)
			nics++
		}
		if ifc.Driver != d {
			t.Errorf("%s: driver %q, the link says %q", ifc.Name, ifc.Driver, d)
		}
		want[ifc.Name] = d
	}
	again, _ := bundleOf(t, src)
	got := map[string]string{}
	for _, ifc := range again.Interfaces {
		got[ifc.Name] = ifc.Driver
	}
	sameDrivers(t, "live bundle", got, want)
	t.Logf("%d interfaces, %d with a driver: %v", len(want), nics, want)
}

// tarLinks maps each symbolic link of a bundle to its target.
func tarLinks(t *testing.T, raw []byte) map[string]string {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	links := map[string]string{}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err != nil {
			break
		}
		if h.Typeflag == tar.TypeSymlink {
			links[h.Name] = h.Linkname
		}
	}
	return links
}
