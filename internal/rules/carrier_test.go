package rules

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/interlink/interlink/internal/fixturetest"
	"github.com/interlink/interlink/internal/inventory"
)

// TestICDownCarrier: NET-IC-DOWN from the RAC node's files, with the
// interconnect bond1's carrier unreadable (the kernel refuses the read
// while the link is down: here the file is gone), 0, or 1. A carrier not
// known is no evidence and no finding by itself; one the kernel says is 0
// is, even with the interface up.
func TestICDownCarrier(t *testing.T) {
	const bond1 = "/sys/devices/virtual/net/bond1/"
	cases := []struct {
		name      string
		operstate string
		carrier   string // "": unreadable
		want      bool
		evidence  string // the carrier evidence's value; "": none
	}{
		{"down, carrier unreadable", "down", "", true, ""},
		{"down, carrier 0", "down", "0", true, "0"},
		{"up, carrier 0", "up", "0", true, "0"},
		{"up, carrier unreadable", "up", "", false, ""},
		{"up, carrier 1", "up", "1", false, ""},
	}
	// One copy, restored to the fixture before each case, as TestTargeted.
	const node = fixtures + "ol8-rac-bond-jumbo"
	root := t.TempDir()
	fixturetest.Copy(t, node, root)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fixturetest.Restore(t, node, root)
			fixturetest.Edit(t, root, bond1+"operstate", "up", c.operstate)
			if c.carrier == "" {
				if err := os.Remove(filepath.Join(root, bond1+"carrier")); err != nil {
					t.Fatal(err)
				}
			} else {
				fixturetest.Write(t, root, bond1+"carrier", c.carrier+"\n")
			}
			// Check, as an audit runs it: it finds the interconnect in the
			// node's GPnP profile.
			fs := netFindings(Check(gather(t, root, inventory.Options{}), Config{}))["NET-IC-DOWN"]
			if got := len(fs) == 1 && fs[0].Object == "interface bond1"; got != c.want || len(fs) > 1 {
				t.Fatalf("findings %+v, want one about bond1: %v", fs, c.want)
			}
			if !c.want {
				return
			}
			var carrier string
			for _, e := range fs[0].Evidence {
				if e.What == "bond1 carrier" {
					carrier = e.Value
				}
			}
			if carrier != c.evidence {
				t.Errorf("carrier evidence %q, want %q (evidence %+v)", carrier, c.evidence, fs[0].Evidence)
			}
		})
	}
}
