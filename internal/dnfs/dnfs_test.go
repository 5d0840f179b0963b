package dnfs

import (
	"context"
	"errors"
	"net/netip"
	"os"
	"strings"
	"testing"

	"github.com/interlink/interlink/internal/roottest"

	"github.com/interlink/interlink/internal/inventory"
	"github.com/interlink/interlink/internal/pmtu"
)

const tab = `server: filer
local: 127.0.0.1 path: 127.0.0.2
path: filer-stor2
dontroute
server: other
path: 127.0.0.3
`

func TestPairs(t *testing.T) {
	ot, err := inventory.ParseOranfstab(strings.NewReader(tab), "/etc/oranfstab")
	if err != nil {
		t.Fatal(err)
	}
	ps := Pairs([]*inventory.Oranfstab{ot})
	want := []Pair{
		{Server: "filer", File: "/etc/oranfstab", Line: 2, Local: "127.0.0.1", Path: "127.0.0.2", Dontroute: true},
		{Server: "filer", File: "/etc/oranfstab", Line: 3, Path: "filer-stor2", Dontroute: true},
		{Server: "other", File: "/etc/oranfstab", Line: 6, Path: "127.0.0.3"},
	}
	if len(ps) != len(want) {
		t.Fatalf("pairs %+v", ps)
	}
	for i := range want {
		if ps[i] != want[i] {
			t.Errorf("pair %d = %+v, want %+v", i, ps[i], want[i])
		}
	}
}

// Loopback paths are proved to the interface's MTU; a name that does not
// resolve is reported on its pair and does not stop the others. (The
// resolver is replaced: no query leaves the machine.)
func TestProveLoopback(t *testing.T) {
	if p, err := pmtu.NewICMPProber(netip.Addr{}, netip.MustParseAddr("127.0.0.1")); err == nil {
		p.Close()
	} else if os.Geteuid() != 0 {
		roottest.Require(t, "ICMP echo: a raw socket, or a ping socket that net.ipv4.ping_group_range allows")
	}
	pairs := []Pair{
		{Server: "lo", Line: 1, Local: "127.0.0.1", Path: "127.0.0.2"},
		{Server: "lo", Line: 2, Path: "filer-stor2"},
	}
	res := Prove(context.Background(), pairs, Options{Max: 9000, Expect: 9000, Resolve: func(_ context.Context, h string) (netip.Addr, error) {
		if a, err := netip.ParseAddr(h); err == nil {
			return a, nil
		}
		return netip.Addr{}, errors.New("cannot resolve: no such host")
	}})
	if r := res[0].Result; r == nil || r.Verdict != pmtu.OK || r.PathMTU != 9000 || res[0].MeetsExpect == nil || !*res[0].MeetsExpect {
		t.Errorf("loopback pair: %+v %+v", res[0], r)
	}
	if res[1].Result != nil || !strings.Contains(res[1].Error, "path filer-stor2: cannot resolve") {
		t.Errorf("unresolvable pair: %+v", res[1])
	}
}
