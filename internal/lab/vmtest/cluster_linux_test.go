//go:build linux

package vmtest

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/interlink/interlink/internal/cluster"
	"github.com/interlink/interlink/internal/lab"
)

// clusterFromOps runs `interlink cluster --collect` in the lab's ops node
// (a namespace node on the public network) over SSH to the three VM nodes,
// as it reaches real hosts: the guests' own sshd, host keys checked. Each
// node's bundle must show the guest's kernel and virtio NIC, and the mesh exactly node2's
// paths as problems.
func clusterFromOps(ctx context.Context, t *testing.T, name, release string) {
	t.Helper()
	dir := t.TempDir()
	var inv strings.Builder
	inv.WriteString("nodes:\n")
	for i := 1; i <= 3; i++ {
		fmt.Fprintf(&inv, "  - {name: node%d, host: 198.18.99.%d, user: root, interconnect: [198.18.10.%d]}\n", i, i, i)
	}
	invFile := filepath.Join(dir, "nodes.yaml")
	if err := os.WriteFile(invFile, []byte(inv.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	// The guests' own agents hold port 7471: cluster starts its own on 7472.
	cmd := exec.CommandContext(ctx, binary, "lab", "exec", name, "ops", "--", binary, "cluster",
		"--inventory", invFile, "--ssh-config", "none", "--known-hosts", lab.SSHKnownHostsFile(name),
		"--identity", lab.SSHIdentityFile(name), "--agent-port", "7472", "--collect", dir, "--json")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); err != nil && (!ok || ee.ExitCode() > 2) {
		t.Fatalf("cluster: %v\n%s", err, stderr.String())
	}
	var res cluster.Result
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("cluster --json: %v\n%s\n%s", err, out, stderr.String())
	}
	if len(res.Nodes) != 3 {
		t.Fatalf("cluster: %d nodes, want 3\n%s", len(res.Nodes), stderr.String())
	}
	for _, n := range res.Nodes {
		if n.Status != cluster.StatusOK || n.Check == nil || n.Bundle == "" || !n.Cleanup.Done {
			t.Errorf("%s: status %s, check %v, bundle %q, cleanup %+v: %s", n.Name, n.Status, n.Check != nil, n.Bundle, n.Cleanup, n.Error)
			continue
		}
		if got := strings.TrimSpace(n.Check.Node.Kernel); got != release {
			t.Errorf("%s: check says kernel %q, want the guest's %s", n.Name, got, release)
		}
		kernel, virtio := readBundle(t, n.Bundle)
		if kernel != release || !virtio {
			t.Errorf("%s: bundle %s: kernel %q (want %s), eth1 a virtio device %v", n.Name, n.Bundle, kernel, release, virtio)
		}
	}
	if res.Mesh == nil {
		t.Fatalf("cluster ran no mesh: %s", res.MeshSkipped)
	}
	var bad []string
	for _, p := range res.Mesh.Paths {
		if p.Verdict != "ok" {
			bad = append(bad, p.From+"->"+p.To)
		}
		if (p.From == "node2" || p.To == "node2") != (p.Verdict != "ok") {
			t.Errorf("cluster mesh %s -> %s: %s %d", p.From, p.To, p.Verdict, p.PathMTU)
		}
	}
	t.Logf("cluster: 3 nodes over SSH, problem paths %v", bad)
}

// readBundle returns the kernel release a check bundle recorded and
// whether its interfaces are virtio devices (/sys/class/net/IF links to
// .../virtioN/net/IF; the driver, virtio_net, the test reads in the guest).
func readBundle(t *testing.T, path string) (kernel string, virtio bool) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return kernel, virtio
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if strings.Contains(h.Name, "class/net/eth1") && strings.Contains(h.Linkname, "/virtio") {
			virtio = true
		}
		if strings.HasSuffix(h.Name, "proc/sys/kernel/osrelease") {
			b, _ := io.ReadAll(tr)
			kernel = strings.TrimSpace(string(b))
		}
	}
}
