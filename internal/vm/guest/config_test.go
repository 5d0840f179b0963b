package guest

import (
	"errors"
	"testing"
)

// TestCheckNonce: the nonce counts only as a whole word of the command
// line with its parameter's name; no nonce never matches.
func TestCheckNonce(t *testing.T) {
	for _, c := range []struct {
		cmdline, nonce string
		ok             bool
	}{
		{"console=ttyS0 panic=-1 interlink.guest=ab12", "ab12", true},
		{"interlink.guest=ab12 quiet\n", "ab12", true},
		{"console=ttyS0 interlink.guest=ab123", "ab12", false},
		{"console=ttyS0 xinterlink.guest=ab12", "ab12", false},
		{"console=ttyS0 interlink.guest=", "", false},
		{"console=ttyS0", "", false},
		{"BOOT_IMAGE=/vmlinuz root=/dev/sda1", "ab12", false},
	} {
		err := CheckNonce(c.cmdline, c.nonce)
		if (err == nil) != c.ok || (err != nil && !errors.Is(err, ErrNotGuest)) {
			t.Errorf("CheckNonce(%q, %q) = %v, want ok %v", c.cmdline, c.nonce, err, c.ok)
		}
	}
}
