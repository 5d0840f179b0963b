package labtest

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/lab"
	"github.com/interlink/interlink/internal/lab/service"
	"github.com/interlink/interlink/internal/labuptest"
	"github.com/interlink/interlink/internal/storage"
)

func topo(mtu int, rate string) string {
	r := ""
	if rate != "" {
		r = ", rate: " + rate
	}
	return fmt.Sprintf(`name: nfsb
switches:
  ic: {mtu: %d}
nodes:
  filer:
    links:
      - {name: eth1, switch: ic, addresses: [198.18.31.1/24]%s}
  db1:
    links:
      - {name: eth1, switch: ic, addresses: [198.18.31.2/24]%s}
`, mtu, r, r)
}

func up(t testing.TB, mtu int, rate string) (*lab.Node, *service.NFSServer) {
	t.Helper()
	tp, err := lab.Parse("nfsb.yaml", []byte(topo(mtu, rate)))
	if err != nil {
		t.Fatal(err)
	}
	l := labuptest.Up(t, tp)
	srv := labuptest.NFS(t, labuptest.Node(t, l, "filer"), netip.MustParseAddr("198.18.31.1"))
	return labuptest.Node(t, l, "db1"), srv
}

// run runs spec from inside node n (the client's sockets are the node's).
func run(t testing.TB, n *lab.Node, spec storage.Spec) *storage.Result {
	t.Helper()
	var res *storage.Result
	err := n.Do(func() error {
		var err error
		res, err = storage.Run(context.Background(), spec)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func calls(r *storage.Result, proc string) uint64 {
	for _, p := range r.Emulation.RPC {
		if p.Proc == proc {
			return p.Calls
		}
	}
	return 0
}

func opCount(r *storage.Result, name string) uint64 {
	for _, o := range r.Steps[0].Ops {
		if o.Name == name {
			return uint64(o.Count)
		}
	}
	return 0
}

// storage bench nfs:// against ganesha: the profile's operations become
// the emulated option set's RPCs, and nothing is left on the server.
func TestBenchNFSEmulated(t *testing.T) {
	n, srv := up(t, 9000, "")
	url := "nfs://" + srv.Addr.String() + srv.Path
	for _, tc := range []struct {
		profile storage.Profile
		emulate string
		check   func(r *storage.Result) error
	}{
		{storage.Install, "rw,hard,vers=3,actimeo=0", func(r *storage.Result) error {
			files := opCount(r, "create")
			// Per file: the directory revalidated before the create, the file at stat.
			if files < 20 || calls(r, "GETATTR") != 2*files+2*opCount(r, "mkdir") || calls(r, "COMMIT") != files || calls(r, "CREATE") != files {
				return fmt.Errorf("files %d, RPCs %+v", files, r.Emulation.RPC)
			}
			return nil
		}},
		{storage.Install, "rw,hard,vers=3,noac", func(r *storage.Result) error {
			files, writes := opCount(r, "create"), opCount(r, "write")
			// noac: also before each write, close and utime; FILE_SYNC writes, no COMMIT.
			if files < 20 || calls(r, "COMMIT") != 0 || calls(r, "WRITE") != writes ||
				calls(r, "GETATTR") != 4*files+writes+2*opCount(r, "mkdir") {
				return fmt.Errorf("files %d writes %d, RPCs %+v", files, writes, r.Emulation.RPC)
			}
			return nil
		}},
		{storage.Mkfile, "defaults,wsize=65536", func(r *storage.Result) error {
			// 4 MiB in 8 KiB writes: 64 WRITEs of 64 KiB (write-behind), one COMMIT.
			if calls(r, "WRITE") != 64 || calls(r, "COMMIT") != 1 || calls(r, "GETATTR") != 0 || r.Emulation.Wsize != 65536 {
				return fmt.Errorf("RPCs %+v wsize %d", r.Emulation.RPC, r.Emulation.Wsize)
			}
			return nil
		}},
		{storage.Backup, "forcedirectio", func(r *storage.Result) error {
			// 4 MiB in 1 MiB FILE_SYNC writes, then 1 MiB READs back.
			if calls(r, "WRITE") != 4 || calls(r, "COMMIT") != 0 || calls(r, "READ") != 4 || r.Steps[1].Ops[0].Bytes != 4<<20 {
				return fmt.Errorf("RPCs %+v", r.Emulation.RPC)
			}
			return nil
		}},
	} {
		t.Run(string(tc.profile)+" "+tc.emulate, func(t *testing.T) {
			size := int64(4 << 20)
			r := run(t, n, storage.Spec{Profile: tc.profile, Path: url, Emulate: tc.emulate, SizeBytes: size, Time: 20 * time.Second})
			if r.Emulation == nil || r.Emulation.Note == "" || len(r.LimitedBy) > 0 {
				t.Fatalf("result %+v", r)
			}
			if err := tc.check(r); err != nil {
				t.Error(err)
			}
			if ents, err := os.ReadDir(srv.Export); err != nil || len(ents) != 0 {
				t.Errorf("left on the server: %v %v", ents, err)
			}
		})
	}
}
