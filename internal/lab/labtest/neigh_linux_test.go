package labtest

import (
	"net/netip"
	"slices"
	"testing"

	"github.com/vishvananda/netlink"
)

// Every node knows the addresses of the other links on its switches as
// permanent neighbours (the kernel's neighbour table limits are shared by
// all namespaces; neigh_linux.go), with the MAC of the link that holds
// them, and nothing of a switch it is not on.
func TestNeighboursPermanent(t *testing.T) {
	l := up(t, "routed", "neigh")
	perm := func(name string) map[netip.Addr]string {
		out := map[netip.Addr]string{}
		err := node(t, l, name).Do(func() error {
			ns, err := netlink.NeighList(0, netlink.FAMILY_ALL)
			for _, n := range ns {
				if n.State&netlink.NUD_PERMANENT != 0 {
					a, _ := netip.AddrFromSlice(n.IP)
					out[a.Unmap()] = n.HardwareAddr.String()
				}
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	mac := func(name, link string) string {
		var m string
		err := node(t, l, name).Do(func() error {
			li, err := netlink.LinkByName(link)
			if err == nil {
				m = li.Attrs().HardwareAddr.String()
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	n1 := perm("node1")
	want := map[netip.Addr]string{}
	for _, s := range []string{"198.18.10.2", "fd00:10::2"} {
		want[netip.MustParseAddr(s)] = mac("node2", "eth1")
	}
	for _, s := range []string{"198.18.10.254", "fd00:10::fe"} {
		want[netip.MustParseAddr(s)] = mac("r1", "eth1")
	}
	if len(n1) != len(want) {
		t.Errorf("node1's permanent neighbours %v, want %v", n1, want)
	}
	for a, m := range want {
		if n1[a] != m {
			t.Errorf("node1: neighbour %s at %q, want %q", a, n1[a], m)
		}
	}
	// r1 is on both switches: it knows both sides, each on its own link.
	r1 := perm("r1")
	keys := make([]string, 0, len(r1))
	for a := range r1 {
		keys = append(keys, a.String())
	}
	slices.Sort(keys)
	if !slices.Equal(keys, []string{"198.18.10.1", "198.18.10.2", "198.18.20.3", "fd00:10::1", "fd00:10::2", "fd00:20::3"}) {
		t.Errorf("r1's permanent neighbours: %v", keys)
	}
}
