package inventory

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/interlink/interlink/internal/fixturetest"
)

// TestCarrierUnreadableAbsent: an interface whose carrier the kernel will
// not give (down: the read fails) has none, and its JSON has no "carrier"
// at all; a carrier of 0 is a value and stays, in the tree and its bundle.
func TestCarrierUnreadableAbsent(t *testing.T) {
	dir := t.TempDir()
	fixturetest.Copy(t, fixtures+"ol8-rac-bond-jumbo", dir)
	eth0 := "/sys/devices/pci0000:00/0000:00:03.0/net/eth0/"
	fixturetest.Edit(t, dir, eth0+"operstate", "up", "down")
	if err := os.Remove(filepath.Join(dir, eth0+"carrier")); err != nil {
		t.Fatal(err)
	}
	fixturetest.Edit(t, dir, "/sys/devices/virtual/net/bond1/carrier", "1", "0")
	inv, src := gatherFixture(t, dir)
	again, _ := bundleOf(t, src)
	for what, inv := range map[string]*Inventory{"tree": inv, "bundle": again} {
		e, b := inv.Interface("eth0"), inv.Interface("bond1")
		if e == nil || b == nil {
			t.Fatalf("%s: eth0 %v, bond1 %v", what, e, b)
		}
		if e.Carrier != nil {
			t.Errorf("%s: eth0 carrier %d, want none", what, *e.Carrier)
		}
		if b.Carrier == nil || *b.Carrier != 0 {
			t.Errorf("%s: bond1 carrier %v, want 0", what, b.Carrier)
		}
		ej, _ := json.Marshal(e)
		if strings.Contains(string(ej), `"carrier"`) {
			t.Errorf("%s: eth0 JSON has a carrier: %s", what, ej)
		}
		bj, _ := json.Marshal(b)
		if !strings.Contains(string(bj), `"carrier":0`) {
			t.Errorf("%s: bond1 JSON lacks carrier 0: %s", what, bj)
		}
	}
}

// TestCarrierOldJSON: results written before the carrier could be absent
// said -1 for an unreadable one; that reads as not known, the others as
// they were, and a JSON written now reads back the same.
func TestCarrierOldJSON(t *testing.T) {
	cases := []struct {
		in   string
		want *int
	}{
		{`{"name":"eth0","carrier":-1}`, nil},
		{`{"name":"eth0"}`, nil},
		{`{"name":"eth0","carrier":0}`, intp(0)},
		{`{"name":"eth0","carrier":1}`, intp(1)},
	}
	for _, c := range cases {
		var ifc Interface
		if err := json.Unmarshal([]byte(c.in), &ifc); err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		if ifc.Name != "eth0" {
			t.Errorf("%s: name %q", c.in, ifc.Name)
		}
		switch {
		case c.want == nil && ifc.Carrier != nil:
			t.Errorf("%s: carrier %d, want none", c.in, *ifc.Carrier)
		case c.want != nil && (ifc.Carrier == nil || *ifc.Carrier != *c.want):
			t.Errorf("%s: carrier %v, want %d", c.in, ifc.Carrier, *c.want)
		}
		out, _ := json.Marshal(&ifc)
		var back Interface
		if err := json.Unmarshal(out, &back); err != nil || (back.Carrier == nil) != (c.want == nil) {
			t.Errorf("%s: written %s, read back %v, %v", c.in, out, back.Carrier, err)
		}
	}
	var inv Inventory
	if err := json.Unmarshal([]byte(`{"interfaces":[{"name":"eth1","carrier":-1},{"name":"eth2","carrier":1}]}`), &inv); err != nil {
		t.Fatal(err)
	}
	if inv.Interfaces[0].Carrier != nil || inv.Interfaces[1].Carrier == nil {
		t.Errorf("inventory's interfaces: carriers %v, %v; want none, 1", inv.Interfaces[0].Carrier, inv.Interfaces[1].Carrier)
	}
	var bad Interface
	if err := json.Unmarshal([]byte(`{"name":"eth0","carrier":"up"}`), &bad); err == nil {
		t.Error("a carrier that is no number read without an error")
	}
}

func intp(v int) *int { return &v }
