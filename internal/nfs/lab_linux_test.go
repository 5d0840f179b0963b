package nfs

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/interlink/interlink/internal/lab"
	"github.com/interlink/interlink/internal/lab/service"
	"github.com/interlink/interlink/internal/labuptest"
)

const nfsTopo = `name: nfst
switches:
  ic: {mtu: 9000}
nodes:
  filer:
    links:
      - {name: eth1, switch: ic, addresses: [198.18.30.1/24]}
  db1:
    links:
      - {name: eth1, switch: ic, addresses: [198.18.30.2/24]}
`

// labServer brings up a two-node lab with nfs-ganesha on "filer" and
// returns the client node and the server.
func labServer(t *testing.T) (*lab.Node, *service.NFSServer) {
	t.Helper()
	topo, err := lab.Parse("nfst.yaml", []byte(nfsTopo))
	if err != nil {
		t.Fatal(err)
	}
	l := labuptest.Up(t, topo)
	srv := labuptest.NFS(t, labuptest.Node(t, l, "filer"), netip.MustParseAddr("198.18.30.1"))
	return labuptest.Node(t, l, "db1"), srv
}

// dialIn mounts the lab export from the client node (sockets made inside
// the node stay there).
func dialIn(t *testing.T, n *lab.Node, srv *service.NFSServer) *Client {
	t.Helper()
	var c *Client
	err := n.Do(func() error {
		var err error
		c, err = Dial(context.Background(), srv.Addr.String(), srv.Path)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// The emulated option sets against ganesha: a small install-like tree
// (files of 3 x 64 KiB application writes, closed, utime'd, stat'ed), the
// RPCs per procedure counted by the client, the files checked on the
// server's disk.
func TestEmulationPatterns(t *testing.T) {
	node, srv := labServer(t)
	const files = 20
	data := make([]byte, 64<<10)
	for i := range data {
		data[i] = byte(i * 7)
	}
	stamp := time.Date(2024, 1, 16, 0, 0, 0, 0, time.UTC)
	type want struct{ getattr, write, commit, setattr, create, lookup uint64 }
	for _, tc := range []struct {
		opts string
		want want
	}{
		// Write-behind: each file's 192 KiB is one wsize (1 MiB) WRITE at
		// close, one COMMIT; attributes from the replies stay valid (the
		// new directory's came with MKDIR, acdirmin is 30 s): no GETATTR.
		{"rw,hard,vers=3", want{getattr: 0, write: files, commit: files, setattr: files, create: files, lookup: files}},
		// actimeo=0: the same writes and COMMITs, but the directory before
		// each create and the file at each stat: 2 GETATTRs per file.
		{"rw,hard,vers=3,actimeo=0", want{getattr: 2 * files, write: files, commit: files, setattr: files, create: files, lookup: files}},
		// noac: also a GETATTR before every write, the close and the utime
		// (2 + 3 + 1 + 1 per file), and each 64 KiB write is its own
		// FILE_SYNC WRITE: 3 per file, no COMMIT.
		{"rw,hard,vers=3,noac", want{getattr: 7 * files, write: 3 * files, commit: 0, setattr: files, create: files, lookup: files}},
		// forcedirectio with default caching: stable writes at the
		// application's size, no COMMIT, attributes cached.
		{"rw,hard,vers=3,forcedirectio", want{getattr: 0, write: 3 * files, commit: 0, setattr: files, create: files, lookup: files}},
		// rsize/wsize honoured: 192 KiB per file in 32 KiB WRITEs.
		{"rw,hard,vers=3,actimeo=0,wsize=32768", want{getattr: 2 * files, write: 6 * files, commit: files, setattr: files, create: files, lookup: files}},
	} {
		t.Run(tc.opts, func(t *testing.T) {
			o, err := ParseOptions(tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			c := dialIn(t, node, srv)
			fs := NewFS(c, o)
			ctx := context.Background()
			dir := fmt.Sprintf("t%d", time.Now().UnixNano())
			dh, err := fs.Mkdir(ctx, fs.Root(), dir)
			if err != nil {
				t.Fatal(err)
			}
			before := map[string]uint64{}
			for _, p := range c.Stats.Snapshot() {
				before[p.Proc] = p.Calls
			}
			for i := range files {
				f, err := fs.Create(ctx, dh, fmt.Sprintf("f%03d", i))
				if err != nil {
					t.Fatal(err)
				}
				for range 3 {
					if err := f.Write(ctx, data); err != nil {
						t.Fatal(err)
					}
				}
				if err := f.Close(ctx); err != nil {
					t.Fatal(err)
				}
				if err := fs.SetTimes(ctx, f.FH, stamp); err != nil {
					t.Fatal(err)
				}
				if err := fs.Stat(ctx, f.FH); err != nil {
					t.Fatal(err)
				}
			}
			n := func(p string) uint64 { return c.Stats.Calls(p) - before[p] }
			got := want{n("GETATTR"), n("WRITE"), n("COMMIT"), n("SETATTR"), n("CREATE"), n("LOOKUP")}
			if got != tc.want {
				t.Errorf("RPCs %+v, want %+v (all: %+v)", got, tc.want, c.Stats.Snapshot())
			}
			// The server really has the data and the times.
			for i := range files {
				p := filepath.Join(srv.Export, dir, fmt.Sprintf("f%03d", i))
				st, err := os.Stat(p)
				if err != nil || st.Size() != 3*int64(len(data)) || !st.ModTime().Equal(stamp) {
					t.Fatalf("%s on the server: %v, %v", p, st, err)
				}
			}
			b, _ := os.ReadFile(filepath.Join(srv.Export, dir, "f000"))
			if string(b[64<<10:128<<10]) != string(data) {
				t.Errorf("second write's bytes differ on the server")
			}
			// Reading back goes to the server (rsize READs, no cache).
			f := &File{fs: fs, FH: mustLookup(t, c, dh, "f001")}
			buf := make([]byte, 192<<10)
			if m, err := f.ReadAt(ctx, buf, 0); err != nil || m != len(buf) || string(buf[:64<<10]) != string(data) {
				t.Errorf("read back %d bytes, %v", m, err)
			}
			for i := range files {
				if err := fs.Remove(ctx, dh, fmt.Sprintf("f%03d", i), false); err != nil {
					t.Fatal(err)
				}
			}
			if err := fs.Remove(ctx, fs.Root(), dir, true); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(filepath.Join(srv.Export, dir)); !os.IsNotExist(err) {
				t.Errorf("directory left on the server: %v", err)
			}
		})
	}
}

func mustLookup(t *testing.T, c *Client, dir []byte, name string) []byte {
	fh, err := c.Lookup(context.Background(), dir, name)
	if err != nil {
		t.Fatal(err)
	}
	return fh
}
