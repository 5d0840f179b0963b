package roottest

import (
	"os"
	"testing"
)

// TestRequire: as root, outside -short, Require lets the test go on; under
// -short it skips (the test then stops at Require and this check is moot).
func TestRequire(t *testing.T) {
	if os.Geteuid() != 0 && !testing.Short() {
		t.Skip("not root: Require would fail this test, which is its job")
	}
	Require(t, "nothing: this is the helper's own test")
	if testing.Short() {
		t.Fatal("Require did not skip under -short")
	}
}
