package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/interlink/interlink/internal/fixturetest"
	"github.com/interlink/interlink/internal/rules"
	"github.com/interlink/interlink/internal/shellq/shellqtest"
)

// renameInterface renames eth2, bond1's backup slave in the healthy RAC
// node, to name everywhere the tree has it (sysfs, the bonding driver's
// status, the ifcfg file, the per-interface sysctls), as `ip link set eth2
// name NAME` and an edited ifcfg file would, and sets its MTU to mtu.
func renameInterface(t *testing.T, root, name, mtu string) {
	t.Helper()
	const dev = "/sys/devices/pci0000:00/0000:00:05.0/net/"
	mv := func(from, to string) {
		if err := os.Rename(filepath.Join(root, from), filepath.Join(root, to)); err != nil {
			t.Fatal(err)
		}
	}
	mv(dev+"eth2", dev+name)
	mv("/proc/sys/net/ipv4/conf/eth2", "/proc/sys/net/ipv4/conf/"+name)
	mv("/etc/sysconfig/network-scripts/ifcfg-eth2", "/etc/sysconfig/network-scripts/ifcfg-"+name)
	if err := os.Remove(filepath.Join(root, "/sys/class/net/eth2")); err != nil {
		t.Fatal(err)
	}
	fixturetest.Symlink(t, root, "/sys/class/net/"+name, "../../devices/pci0000:00/0000:00:05.0/net/"+name)
	fixturetest.Edit(t, root, dev+name+"/uevent", "INTERFACE=eth2", "INTERFACE="+name)
	fixturetest.Edit(t, root, dev+name+"/mtu", "9000", mtu)
	fixturetest.Edit(t, root, "/proc/self/net/bonding/bond1", "Slave Interface: eth2", "Slave Interface: "+name)
	fixturetest.Edit(t, root, "/sys/devices/virtual/net/bond1/bonding/slaves", "eth2", name)
	for _, kv := range []string{"NAME=", "DEVICE="} {
		fixturetest.Edit(t, root, "/etc/sysconfig/network-scripts/ifcfg-"+name, kv+"eth2", kv+name)
	}
}

// TestCheckBundleQuotesFix is issue 28 end to end: a node whose bond slave
// is named $(id) (a valid Linux interface name) and left at MTU 1500,
// captured with check --collect (into a path with a blank and a quote) and
// audited with check --root BUNDLE, prints a fix line in which the name is
// one quoted word, in the text and the JSON report alike.
func TestCheckBundleQuotesFix(t *testing.T) {
	fixedClock(t)
	const name = "$(id)"
	root := t.TempDir()
	fixturetest.Copy(t, fixtures+"ol8-rac-bond-jumbo", root)
	renameInterface(t, root, name, "1500")
	dir := filepath.Join(t.TempDir(), "case 28")
	os.Mkdir(dir, 0o755)
	bundle := filepath.Join(dir, "rac1 it's.tar.gz")
	_, errOut, code := run(t, "check", "--root", root, "--collect", bundle)
	if code != ExitCritical {
		t.Fatalf("check --collect: exit %d, want 2 (NET-BOND-MTU): %s", code, errOut)
	}
	// The hint to audit the bundle is a command line too.
	shellqtest.Check(t, errOut, 0, "audit it elsewhere with: ", "interlink", "check", "--root", bundle)

	out, errOut, code := run(t, "check", "--root", bundle)
	if code != ExitCritical {
		t.Fatalf("check --root %s: exit %d: %s", bundle, code, errOut)
	}
	const want = "fix:      ip link set dev '$(id)' mtu 9000 (in a maintenance window)"
	if !strings.Contains(out, want) {
		t.Fatalf("text report lacks %q:\n%s", want, out)
	}
	i := strings.Index(out, "fix:      ip link set dev")
	line := out[i : i+strings.Index(out[i:], "\n")]
	shellqtest.Check(t, line, 0, "ip link set dev ", name, "mtu", "9000")

	out, _, _ = run(t, "check", "--root", bundle, "--json")
	var res rules.Result
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	var fixes []string
	for _, f := range res.Findings {
		if f.Rule == "NET-BOND-MTU" {
			fixes = append(fixes, f.Fix)
		}
	}
	if len(fixes) != 1 {
		t.Fatalf("NET-BOND-MTU findings: %q, want one", fixes)
	}
	shellqtest.Check(t, fixes[0], 0, "ip link set dev ", name, "mtu", "9000")
}
