package mesh

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"strings"

	"github.com/interlink/interlink/internal/agent"
	"github.com/interlink/interlink/internal/termtext"
)

// Node is one cluster node: its agent's control address and its
// interconnect addresses (the i-th address of every node is on network i).
type Node struct {
	Name  string       `json:"name"`
	Agent string       `json:"agent"`
	Addrs []netip.Addr `json:"addrs"`
}

// ParseNodes reads a nodes file: one node per line, "NAME AGENT[:PORT]
// [ADDR ...]", '#' starts a comment. A node without addresses is probed on
// its agent address.
func ParseNodes(r io.Reader, file string) ([]Node, error) {
	var nodes []Node
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		text, _, _ := strings.Cut(sc.Text(), "#")
		f := strings.Fields(text)
		if len(f) == 0 {
			continue
		}
		if len(f) < 2 {
			return nil, fmt.Errorf("%s:%d: want NAME AGENT[:PORT] [ADDR ...], got %s", file, line, termtext.Short(strings.TrimSpace(text), 60))
		}
		n := Node{Name: f[0], Agent: f[1]}
		for _, s := range f[2:] {
			a, err := netip.ParseAddr(s)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: node %s: %q is not an IP address", file, line, n.Name, s)
			}
			n.Addrs = append(n.Addrs, a)
		}
		nodes = append(nodes, n)
	}
	if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
		return nil, fmt.Errorf("%s:%d: a line longer than %d bytes: not a nodes file", file, line+1, bufio.MaxScanTokenSize)
	} else if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return nodes, Check(nodes)
}

// ParseNode reads a node from the command line: [NAME=]AGENT[:PORT][@ADDR,ADDR...].
func ParseNode(s string) (Node, error) {
	var n Node
	if name, rest, ok := strings.Cut(s, "="); ok {
		if name == "" {
			return n, fmt.Errorf("node %q: empty NAME before '='", s)
		}
		n.Name, s = name, rest
	}
	agentAddr, addrs, at := strings.Cut(s, "@")
	n.Agent = agentAddr
	if at && addrs == "" {
		return n, fmt.Errorf("node %q: no address after '@'", s)
	}
	if addrs != "" {
		for _, a := range strings.Split(addrs, ",") {
			ip, err := netip.ParseAddr(a)
			if err != nil {
				return n, fmt.Errorf("node %q: %q is not an IP address", s, a)
			}
			n.Addrs = append(n.Addrs, ip)
		}
	}
	if n.Name == "" {
		n.Name = agentAddr
	}
	return n, nil
}

// Limits of one mesh. Every path (both directions, every network) is a
// result held in memory and a line of --json: 1000 nodes took 1.6 GB and
// 3000 never finished, --timeout or not. 256 nodes is also the most an
// inventory of interlink cluster takes.
const (
	MaxNodes = 256
	MaxPaths = 2 * MaxNodes * (MaxNodes - 1) // 256 nodes on 2 networks
)

// Check validates a node list and fills in defaults: names are unique, and
// a node without interconnect addresses uses its agent's address.
func Check(nodes []Node) error {
	if len(nodes) < 2 {
		return fmt.Errorf("a mesh needs at least 2 nodes, got %d", len(nodes))
	}
	if len(nodes) > MaxNodes {
		return fmt.Errorf("%d nodes: a mesh takes at most %d (split the cluster)", len(nodes), MaxNodes)
	}
	networks := 1
	for _, n := range nodes {
		networks = max(networks, len(n.Addrs))
	}
	if paths := len(nodes) * (len(nodes) - 1) * networks; paths > MaxPaths {
		return fmt.Errorf("%d nodes on %d networks make %d paths: a mesh proves at most %d (%d nodes on 2 networks)",
			len(nodes), networks, paths, MaxPaths, MaxNodes)
	}
	seen := map[string]bool{}
	for i := range nodes {
		n := &nodes[i]
		if seen[n.Name] {
			return fmt.Errorf("node %s listed twice", n.Name)
		}
		seen[n.Name] = true
		hp, err := agent.HostPort(n.Agent)
		if err != nil {
			return fmt.Errorf("node %s: agent %q: %v", n.Name, n.Agent, err)
		}
		n.Agent = hp
		if len(n.Addrs) == 0 {
			host := hp[:strings.LastIndex(hp, ":")]
			a, err := netip.ParseAddr(strings.Trim(host, "[]"))
			if err != nil {
				return fmt.Errorf("node %s: no interconnect addresses and agent %s is not an IP address", n.Name, hp)
			}
			n.Addrs = []netip.Addr{a}
		}
	}
	return nil
}
