package inventory

import (
	"context"
	"testing"
)

// TestFacilitiesProbedOnlyLive: the kernel is probed when check audits
// this machine, never for a captured tree (its kernel is not this one).
func TestFacilitiesProbedOnlyLive(t *testing.T) {
	src, err := OpenDir(fixtures + "ol7-everything-wrong")
	if err != nil {
		t.Fatal(err)
	}
	inv, err := Gather(context.Background(), src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if inv.Node.Facilities != nil {
		t.Errorf("a captured tree got probes of this kernel: %v", inv.Node.Facilities)
	}
	live, err := Open("/")
	if err != nil {
		t.Fatal(err)
	}
	inv, err = Gather(context.Background(), live, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(inv.Node.Facilities) == 0 || !inv.Node.Facilities["thread-self"] {
		t.Errorf("live gather probed %v", inv.Node.Facilities)
	}
}
