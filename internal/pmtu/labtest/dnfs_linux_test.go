//go:build linux

package labtest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/interlink/interlink/internal/dnfs"
	"github.com/interlink/interlink/internal/lab"
	"github.com/interlink/interlink/internal/pmtu"
)

// The built-in dnfs lab: db1 has two storage paths to the filer, and the
// filer's switch port on the second is at 1500 with no ICMP. pmtu
// --storage proves the first at 9000 and finds the second a blackhole at
// 1500, for that pair only, from each local address.
func TestPMTUStorageBlackholeSecondPath(t *testing.T) {
	l := up(t, "dnfs", "", "dnfs")
	db1 := node(t, l, "db1")
	tab := filepath.Join(t.TempDir(), "oranfstab")
	err := os.WriteFile(tab, []byte(`# two storage networks to the lab filer
server: filer
local: 198.18.21.1 path: 198.18.21.10
local: 198.18.22.1 path: 198.18.22.10
dontroute
export: /vol/oradata mount: /u02/oradata
`), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	out, errOut, code := run(t, db1, "pmtu", "--storage", "--oranfstab", tab, "--expect", "9000", "--json")
	var res dnfs.Result
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("--json: %v (stderr %s)", err, errOut)
	}
	if code != 2 || res.Schema != dnfs.Schema || len(res.Proofs) != 2 {
		t.Fatalf("exit %d, %d proofs", code, len(res.Proofs))
	}
	first, second := res.Proofs[0], res.Proofs[1]
	if first.Result == nil || first.Result.Verdict != pmtu.OK || first.Result.PathMTU != 9000 || first.Result.LocalIface != "eth1" || !*first.MeetsExpect {
		t.Errorf("first path: %+v %+v", first, first.Result)
	}
	if second.Result == nil || second.Result.Verdict != pmtu.Blackhole || second.Result.PathMTU != 1500 || second.Result.LocalIface != "eth2" || *second.MeetsExpect {
		t.Errorf("second path: %+v %+v", second, second.Result)
	}
	if first.Line != 3 || second.Line != 4 || second.Local != "198.18.22.1" {
		t.Errorf("pairs: %+v / %+v", first.Pair, second.Pair)
	}

	// The filer's NFS server answers over the first path: Direct NFS's
	// traffic there works whatever the second path does.
	st, err := lab.Inspect(l.Name())
	if err != nil {
		t.Fatal(err)
	}
	url := ""
	for _, n := range st.Nodes {
		for _, sv := range n.Services {
			if sv.Kind == lab.KindNFS {
				url = strings.Replace(sv.URL, "198.18.22.10", "198.18.21.10", 1)
			}
		}
	}
	if out, errOut, code := run(t, db1, "storage", "bench", url, "--profile", "mkfile", "--size", "8M"); code != 0 || !strings.Contains(out, "WRITE") {
		t.Errorf("storage bench %s over the first path: exit %d: %s%s", url, code, out, errOut)
	}

	// The text names the pair and the verdict on one line each.
	out, _, code = run(t, db1, "pmtu", "--storage", "--oranfstab", tab, "--expect", "9000")
	var rows []string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "198.18.2") {
			rows = append(rows, l)
		}
	}
	if code != 2 || len(rows) != 2 || !strings.Contains(rows[0], " ok ") || !strings.Contains(rows[1], "blackhole BELOW --expect 9000") {
		t.Errorf("exit %d, rows:\n%s", code, strings.Join(rows, "\n"))
	}
}
