package gc

import (
	"net/netip"
	"testing"
)

// An agent on 127.0.0.2 (lo holds only 127.0.0.1/8, but the kernel routes
// the whole prefix to it) has lo's MTU; an address no interface holds has
// none.
func TestMTUOfLoopbackPrefix(t *testing.T) {
	lo := mtuOf(netip.MustParseAddr("127.0.0.1"))
	if lo <= 0 {
		t.Fatalf("127.0.0.1: MTU %d", lo)
	}
	if got := mtuOf(netip.MustParseAddr("127.0.0.2")); got != lo {
		t.Errorf("127.0.0.2: MTU %d, want lo's %d", got, lo)
	}
	if got := mtuOf(netip.MustParseAddr("198.51.100.77")); got != 0 {
		t.Errorf("198.51.100.77 (held by no interface): MTU %d, want 0", got)
	}
}
