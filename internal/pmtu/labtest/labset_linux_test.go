package labtest

import (
	"context"
	"net/netip"
	"testing"

	"github.com/interlink/interlink/internal/lab"
	"github.com/interlink/interlink/internal/pmtu"
)

// TestLabSet changes a running jumbo lab the way `interlink lab set` does
// and proves each change on the wire: node2's switch port left at 1500 is
// a blackhole at 1500 for node1; the whole switch at 1500 is a local limit;
// back at 9000 the path is whole again.
func TestLabSet(t *testing.T) {
	l := up(t, "jumbo", "", "set")
	n1 := node(t, l, "node1")
	probe := func(want pmtu.Verdict, wantMTU int) {
		t.Helper()
		err := n1.Do(func() error {
			p, err := pmtu.NewICMPProber(netip.Addr{}, netip.MustParseAddr("198.18.10.2"))
			if err != nil {
				return err
			}
			defer p.Close()
			r, err := pmtu.Run(context.Background(), p, pmtu.Options{})
			if err != nil {
				return err
			}
			if r.Verdict != want || r.PathMTU != wantMTU {
				t.Errorf("node1 -> node2: %s at %d, want %s at %d", r.Verdict, r.PathMTU, want, wantMTU)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	set := func(target string, kv ...string) {
		t.Helper()
		s, err := lab.ParseSettings(target, kv)
		if err == nil {
			_, err = lab.Set(l.Name(), s)
		}
		if err != nil {
			t.Fatal(err)
		}
		st, err := lab.Inspect(l.Name())
		if err != nil || st.State != lab.StateUp {
			t.Fatalf("after set %s %v: %v %+v", target, kv, err, st)
		}
	}
	probe(pmtu.OK, 9000)
	set("node2:eth1", "port_mtu=1500")
	probe(pmtu.Blackhole, 1500)
	set("ic", "mtu=1500")
	probe(pmtu.OK, 1500)
	set("ic", "mtu=9000")
	probe(pmtu.OK, 9000)
	if _, err := lab.Set(l.Name(), []lab.Setting{{Target: "ic", Key: "mtu", Value: "70000"}}); err == nil {
		t.Error("an MTU of 70000 was set")
	}
}
