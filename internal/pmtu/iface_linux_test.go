package pmtu

import (
	"net"
	"net/netip"
	"testing"
)

// Iface agrees with the standard library's view of this host's interfaces
// for every address they hold, finds lo for an address inside its prefix,
// and refuses an address no interface holds.
func TestIfaceAgreesWithNet(t *testing.T) {
	ifs, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ifc := range ifs {
		addrs, err := ifc.Addrs()
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range addrs {
			p, err := netip.ParsePrefix(a.String())
			if err != nil {
				t.Fatal(err)
			}
			name, mtu, err := Iface(p.Addr())
			if err != nil || name != ifc.Name || mtu != ifc.MTU {
				t.Errorf("Iface(%s) = %q %d %v, want %q %d", p.Addr(), name, mtu, err, ifc.Name, ifc.MTU)
			}
			n++
		}
	}
	if n == 0 {
		t.Fatal("no interface addresses on this host")
	}
	if name, _, err := Iface(netip.MustParseAddr("127.0.0.2")); err != nil || name != "lo" {
		t.Errorf("Iface(127.0.0.2) = %q %v, want lo", name, err)
	}
	if name, _, err := Iface(netip.MustParseAddr("::ffff:127.0.0.1")); err != nil || name != "lo" {
		t.Errorf("Iface(::ffff:127.0.0.1) = %q %v, want lo", name, err)
	}
	if _, _, err := Iface(netip.MustParseAddr("192.0.2.77")); err == nil {
		t.Error("Iface(192.0.2.77): no error for an address no interface holds")
	}
}

func BenchmarkIface(b *testing.B) {
	a := netip.MustParseAddr("127.0.0.1")
	for b.Loop() {
		if _, _, err := Iface(a); err != nil {
			b.Fatal(err)
		}
	}
}
