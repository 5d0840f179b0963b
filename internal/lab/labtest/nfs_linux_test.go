//go:build linux

package labtest

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/interlink/interlink/internal/lab"
)

// TestNFSLab brings up the built-in nfs lab as users do, writes through
// its filer's nfs-ganesha from the database node with `storage bench
// nfs://`, and takes it down: nothing of the server is left.
func TestNFSLab(t *testing.T) {
	dir := privateDir(t)
	name := prefix + "-nfs"
	t.Cleanup(func() { run(t, "lab", "down", name) })
	r := run(t, "lab", "up", "nfs", "--name", name, "--json")
	if r.code != 0 {
		t.Fatalf("lab up nfs: exit %d: %s%s", r.code, r.stdout, r.stderr)
	}
	var doc labDoc
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || len(doc.Labs) != 1 {
		t.Fatalf("lab up --json: %v: %s", err, r.stdout)
	}
	nfs := service(t, doc.Labs[0], "filer", "nfs")
	if nfs.State != lab.ServiceRunning || nfs.PID == 0 || nfs.Address != "198.18.30.10:2049" ||
		!strings.HasPrefix(nfs.URL, "nfs://198.18.30.10/") || !strings.HasSuffix(nfs.URL, "/filer/nfs/export") {
		t.Fatalf("nfs service: %+v", nfs)
	}
	if r := run(t, "lab", "status", name); r.code != 0 || !strings.Contains(r.stdout, "nfs filer: "+nfs.URL) {
		t.Errorf("lab status: exit %d:\n%s", r.code, r.stdout)
	}

	r = run(t, "lab", "exec", name, "db1", "--", binary, "storage", "bench", nfs.URL, "--profile", "mkfile", "--size", "16M", "--emulate", "defaults", "--json")
	var res struct {
		Schema    string `json:"schema"`
		Emulation struct {
			Calls map[string]int `json:"calls"`
		} `json:"emulation"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil || r.code != 0 {
		t.Fatalf("storage bench over the lab's nfs: exit %d, %v: %s%s", r.code, err, r.stdout, r.stderr)
	}
	if c := res.Emulation.Calls; c["WRITE"] == 0 || c["COMMIT"] == 0 {
		t.Errorf("RPC calls %v: want WRITEs and a COMMIT", c)
	}

	if r := run(t, "lab", "down", name); r.code != 0 {
		t.Fatalf("lab down: exit %d: %s", r.code, r.stderr)
	}
	if left := processesUnder(dir); len(left) != 0 {
		t.Errorf("left running: %v", left)
	}
	nothingLeft(t, name, dir)
}
