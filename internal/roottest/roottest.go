// Package roottest holds the one root check of the tests: a test that needs
// root skips under -short (the quick loop, which a non-root user runs) and
// fails, naming why, without it otherwise (go test ./..., which CI runs as
// root), so that a run that should cover it never passes by skipping.
package roottest

import (
	"os"
	"testing"
)

// Require skips t under -short and fails it without root otherwise; why
// says what the test does that needs root ("it mounts a tmpfs").
func Require(t testing.TB, why string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("-short: needs root (%s)", why)
	}
	if os.Geteuid() != 0 {
		t.Fatalf("needs root (%s): run the tests as root, as CI does", why)
	}
}
