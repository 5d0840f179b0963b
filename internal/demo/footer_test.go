package demo

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/interlink/interlink/internal/mesh"
	"github.com/interlink/interlink/internal/shellq/shellqtest"
)

// TestFooterQuotes: the commands --keep leaves to explore the lab with are
// whole command lines, even when the binary and the lab directory (the
// token's) sit in paths with a blank and a quote.
func TestFooterQuotes(t *testing.T) {
	const bin, token = "/opt/my tools/interlink", "/run/it's labs/demo.d/token"
	r := &Result{Kept: true, Lab: "demo", Binary: bin, TokenFile: token,
		Mesh:      &mesh.Result{Nodes: []mesh.Node{{Name: "node1", Agent: "198.18.0.1:7471", Addrs: []netip.Addr{netip.MustParseAddr("198.18.10.1")}}}},
		Diagnosis: &Diagnosis{Ports: []Port{{Node: "node3", Address: "198.18.10.3"}}},
		Agents:    []Agent{{Node: "node3", Address: "198.18.0.3:7471"}},
		Blocks:    []Bench{{Address: "198.18.10.2"}}}
	var b strings.Builder
	Footer(&b, r)
	out := b.String()
	exec := []string{bin, "lab", "exec", "demo", "node1", "--", bin}
	at := 0
	for _, c := range []struct {
		anchor string
		argv   []string
	}{
		{"\n  ", []string{bin, "lab", "status", "demo"}},
		{"\n  ", append(exec, "check", "--interconnect", "eth1")},
		{"\n  ", append(exec, "mesh", "--token-file", token, "--expect", "9000", "node1=198.18.0.1:7471@198.18.10.1")},
		{"\n  ", append(exec, "pmtu", "--token-file", token, "--target", "198.18.10.3", "198.18.0.3")},
		{"\n  ", append(exec, "bench", "--token-file", token, "--mode", "blocks", "198.18.10.2")},
		{"Remove it with: ", []string{bin, "lab", "down", "demo"}},
	} {
		if at = shellqtest.Check(t, out, at, c.anchor, c.argv...); at < 0 {
			t.Fatalf("in:\n%s", out)
		}
	}
}
