package cli

import (
	"encoding/json"
	"regexp"
	"testing"

	"github.com/interlink/interlink/internal/fixturetest"
)

// TestCheckUnknownSpeed: a virtual NIC whose sysfs speed is -1 (SPEED_UNKNOWN)
// and a down NIC of an OL7 node whose speed reads 4294967295 (the same,
// printed unsigned by 3.10) have no speed: absent from the JSON, "-" in the
// text's SPEED column (its not-available mark, as for lo), never -1 or
// 4.29 Pbit/s; a NIC with a speed keeps it.
func TestCheckUnknownSpeed(t *testing.T) {
	dir := t.TempDir()
	fixturetest.Copy(t, fixtures+"ol8-rac-bond-jumbo", dir)
	fixturetest.Interface(t, dir, "vnet0", "virtual", map[string]string{"mtu": "1500", "operstate": "up", "speed": "-1", "flags": "0x1003"})
	fixturetest.Interface(t, dir, "eth9", "pci0000:00/0000:00:09.0", map[string]string{"mtu": "1500", "operstate": "down", "speed": "4294967295", "flags": "0x1002"})

	out, errOut, code := run(t, "check", "--root", dir, "--json")
	if code == ExitUnknown || errOut != "" {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var doc struct {
		Inventory struct {
			Interfaces []map[string]any `json:"interfaces"`
		} `json:"inventory"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, ifc := range doc.Inventory.Interfaces {
		speed, has := ifc["speed_bits_per_sec"]
		switch ifc["name"] {
		case "vnet0", "eth9", "lo":
			seen++
			if has {
				t.Errorf("%s: speed_bits_per_sec %v, want it absent", ifc["name"], speed)
			}
		case "eth1":
			seen++
			if speed != 1e10 {
				t.Errorf("eth1: speed_bits_per_sec %v, want 1e10", speed)
			}
		}
	}
	if seen != 4 {
		t.Fatalf("%d of vnet0, eth9, lo, eth1 in the JSON:\n%s", seen, out)
	}

	out, errOut, code = run(t, "check", "--root", dir)
	if code == ExitUnknown || errOut != "" {
		t.Fatalf("text: exit %d: %s", code, errOut)
	}
	for _, name := range []string{"vnet0", "eth9"} {
		// INTERFACE KIND DRIVER MTU STATE SPEED: the sixth column.
		re := regexp.MustCompile(`(?m)^  ` + name + `\s+\S+\s+\S+\s+1500\s+\S+\s+(\S+)`)
		if m := re.FindStringSubmatch(out); m == nil || m[1] != "-" {
			t.Errorf("%s: speed column %q, want \"-\":\n%s", name, m, out)
		}
	}
}
