package inventory

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestHostLiveCollect: on this machine the coalescing of each NIC is asked
// of its driver and kept in the bundle as a file of check's own, so an
// audit of the bundle has the same host section, coalescing included.
func TestHostLiveCollect(t *testing.T) {
	live, err := Open("/")
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	inv, err := Gather(context.Background(), live, Options{Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	if inv.Host == nil || len(inv.Host.NICs) == 0 {
		t.Skip("this machine has no NIC with a device driver (nothing to ask ETHTOOL_GCOALESCE of)")
	}
	n := inv.Host.NICs[0]
	if n.CoalesceFile != CoalesceFile(n.Interface) || n.Coalesce == nil && n.CoalesceNote == "" {
		t.Fatalf("%s: coalescing neither read nor refused: %+v", n.Interface, n)
	}
	bundle := filepath.Join(t.TempDir(), "b.tar.gz")
	var buf bytes.Buffer
	if err := live.Collect(&buf, fixedNow()); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bundle, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	again, _ := gatherFixture(t, bundle)
	a, _ := json.Marshal(inv.Host)
	b, _ := json.Marshal(again.Host)
	if !bytes.Equal(a, b) {
		t.Errorf("host section differs after the round trip:\n%s\n%s", a, b)
	}
}
