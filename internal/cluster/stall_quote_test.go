package cluster

import (
	"strings"
	"testing"
)

// TestStallCommandQuoted: the pmtu command a stall suggests is pasted
// into a shell; an address that is not a plain word (an IPv6 link-local
// address with a zone taken from the peer's interface name) is quoted.
func TestStallCommandQuoted(t *testing.T) {
	for to, want := range map[string]string{
		"192.0.2.7":           "(interlink pmtu --icmp 192.0.2.7)",
		"fe80::1%eth0;reboot": "(interlink pmtu --icmp 'fe80::1%eth0;reboot')",
	} {
		e := &stallError{Stall: Stall{Bytes: 10, Likely: LikelyBlackhole, To: to}}
		if msg := e.Error(); !strings.HasSuffix(msg, want) {
			t.Errorf("to %q: %q, want it to end %q", to, msg, want)
		}
	}
}
