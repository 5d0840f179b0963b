package inventory

import (
	"context"
	"testing"

	"github.com/interlink/interlink/internal/kernel"
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

// TestFacilitiesFakedForLive: a test can make a live gather see another
// kernel's probes (kernel.SetProbe), and live gathers ask the probes once
// per process, not once per gather.
func TestFacilitiesFakedForLive(t *testing.T) {
	calls := 0
	t.Cleanup(kernel.SetProbe(func() map[string]bool {
		calls++
		return map[string]bool{"thread-self": false, "udp-gso": false}
	}))
	for range 3 {
		live, err := Open("/")
		if err != nil {
			t.Fatal(err)
		}
		inv, err := Gather(context.Background(), live, Options{})
		live.Close()
		if err != nil {
			t.Fatal(err)
		}
		if f := inv.Node.Facilities; len(f) != 2 || f["thread-self"] || f["udp-gso"] {
			t.Errorf("live gather with faked probes: %v", f)
		}
	}
	if calls != 1 {
		t.Errorf("3 live gathers ran the probes %d times, want 1", calls)
	}
}
