//go:build linux

package vmtest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/interlink/interlink/internal/cluster"
	"github.com/interlink/interlink/internal/inventory"
	"github.com/interlink/interlink/internal/lab"
)

// clusterFromOps runs `interlink cluster --collect` in the lab's ops node
// (a namespace node on the public network) over SSH to the three VM nodes,
// as it reaches real hosts: the guests' own sshd, host keys checked. Each
// node's bundle must show the guest's kernel and eth1's driver virtio_net,
// and the mesh exactly node2's paths as problems.
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
	// The guest's kernel must be told apart from this host's, or a bundle
	// of the host would pass.
	host, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil || strings.TrimSpace(string(host)) == release {
		t.Fatalf("host kernel %q (%v): the same release as the guests' %s, so a bundle cannot tell them apart", host, err, release)
	}
	for _, n := range res.Nodes {
		if n.Status != cluster.StatusOK || n.Check == nil || n.Bundle == "" || !n.Cleanup.Done {
			t.Errorf("%s: status %s, check %v, bundle %q, cleanup %+v: %s", n.Name, n.Status, n.Check != nil, n.Bundle, n.Cleanup, n.Error)
			continue
		}
		if got := strings.TrimSpace(n.Check.Node.Kernel); got != release {
			t.Errorf("%s: check says kernel %q, want the guest's %s", n.Name, got, release)
		}
		kernel, driver := readBundle(t, n.Bundle)
		if kernel != release || driver != "virtio_net" {
			t.Errorf("%s: bundle %s: kernel %q (want the guest's %s), eth1's driver %q (want virtio_net)", n.Name, n.Bundle, kernel, release, driver)
		}
		t.Logf("%s: bundle: kernel %s, eth1 driver %s", n.Name, kernel, driver)
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

// readBundle audits a check bundle as `check --root BUNDLE` does and
// returns the kernel release it recorded and eth1's driver (from the
// device/driver link the bundle keeps).
func readBundle(t *testing.T, path string) (kernel, driver string) {
	t.Helper()
	src, err := inventory.Open(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	defer src.Close()
	inv, err := inventory.Gather(context.Background(), src, inventory.Options{})
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if ifc := inv.Interface("eth1"); ifc != nil {
		driver = ifc.Driver
	}
	return inv.Node.Kernel, driver
}
