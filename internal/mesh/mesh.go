// Package mesh proves the path MTU of every path between N nodes: every
// agent probes every other one, on every interconnect network, in both
// directions. Pairs are scheduled in rounds of disjoint pairs (the circle
// method of round-robin tournaments: N-1 rounds for even N, N rounds with
// one node resting each round for odd N), so the probes of one pair never
// share a node with another pair's.
//
// The orchestrator (this package, in `interlink mesh`) only talks to the
// agents' control ports: for each pair (A, B) and network i it asks A's
// agent for a "pmtu.peer" test to B's agent, probing B's i-th address from
// A's i-th address; A's agent reports both directions.
package mesh

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/interlink/interlink/internal/agent"
	"github.com/interlink/interlink/internal/pmtu"
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
			return nil, fmt.Errorf("%s:%d: want NAME AGENT[:PORT] [ADDR ...], got %q", file, line, strings.TrimSpace(text))
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
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return nodes, Check(nodes)
}

// ParseNode reads a node from the command line: [NAME=]AGENT[:PORT][@ADDR,ADDR...].
func ParseNode(s string) (Node, error) {
	var n Node
	if name, rest, ok := strings.Cut(s, "="); ok {
		n.Name, s = name, rest
	}
	agentAddr, addrs, _ := strings.Cut(s, "@")
	n.Agent = agentAddr
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

// Check validates a node list and fills in defaults: names are unique, and
// a node without interconnect addresses uses its agent's address.
func Check(nodes []Node) error {
	if len(nodes) < 2 {
		return fmt.Errorf("a mesh needs at least 2 nodes, got %d", len(nodes))
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

// Rounds returns the pairs (indexes into a list of n nodes) of each round:
// every unordered pair exactly once, no node twice in a round.
func Rounds(n int) [][][2]int {
	if n < 2 {
		return nil
	}
	m := n
	if m%2 == 1 {
		m++ // a ghost node: its partner rests that round
	}
	ring := make([]int, m)
	for i := range ring {
		ring[i] = i
	}
	var rounds [][][2]int
	for r := 0; r < m-1; r++ {
		var pairs [][2]int
		for i := 0; i < m/2; i++ {
			a, b := ring[i], ring[m-1-i]
			if a < n && b < n {
				pairs = append(pairs, [2]int{min(a, b), max(a, b)})
			}
		}
		rounds = append(rounds, pairs)
		// Keep ring[0] fixed, rotate the rest by one.
		last := ring[m-1]
		copy(ring[2:], ring[1:m-1])
		ring[1] = last
	}
	return rounds
}

// Path is one directed path of the mesh on one network.
type Path struct {
	From     string `json:"from"`
	To       string `json:"to"`
	Network  int    `json:"network"` // 1-based index of the interconnect address
	FromAddr string `json:"from_addr"`
	ToAddr   string `json:"to_addr"`
	pmtu.Result
	MeetsExpect *bool  `json:"meets_expect,omitempty"`
	Error       string `json:"error,omitempty"`
}

// Problem reports whether the path needs attention: an error, a verdict
// other than ok, or a path MTU below the expected one.
func (p Path) Problem() bool {
	return p.Error != "" || p.Verdict != pmtu.OK || (p.MeetsExpect != nil && !*p.MeetsExpect)
}

// Cell is the matrix entry for the path from one node to another on a
// network (1-based): "-" on the diagonal, the path MTU with "!" when the
// path is a problem, "error!" when it could not be measured, " " when the
// result holds no such path.
func (r *Result) Cell(network int, from, to string) string {
	if from == to {
		return "-"
	}
	for _, p := range r.Paths {
		if p.Network == network && p.From == from && p.To == to {
			if p.Error != "" {
				return "error!"
			}
			s := strconv.Itoa(p.PathMTU)
			if p.Problem() {
				s += "!"
			}
			return s
		}
	}
	return " "
}

// Result is the outcome of a mesh run (schema interlink.mesh/v1).
type Result struct {
	Schema   string        `json:"schema"`
	Nodes    []Node        `json:"nodes"`
	Networks int           `json:"networks"`
	Expect   int           `json:"expect,omitempty"`
	Rounds   int           `json:"rounds"`
	Paths    []Path        `json:"paths"`
	Elapsed  time.Duration `json:"elapsed_ns"`
}

// Options tune Run.
type Options struct {
	Token    []byte
	Probe    agent.ProbeOptions
	Software string
	// Progress, when set, is told about each finished round.
	Progress func(round, rounds int)
}

// Run tests every path. It returns a Result with every path that was
// attempted (failures carry Error), and an error only when ctx ended.
func Run(ctx context.Context, nodes []Node, opt Options) (*Result, error) {
	if err := Check(nodes); err != nil {
		return nil, err
	}
	start := time.Now()
	res := &Result{Schema: "interlink.mesh/v1", Nodes: nodes, Expect: opt.Probe.Expect}
	for _, n := range nodes {
		res.Networks = max(res.Networks, len(n.Addrs))
	}
	rounds := Rounds(len(nodes))
	res.Rounds = len(rounds)
	var mu sync.Mutex
	for ri, pairs := range rounds {
		var wg sync.WaitGroup
		for _, pr := range pairs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				paths := runPair(ctx, nodes[pr[0]], nodes[pr[1]], res.Networks, opt)
				mu.Lock()
				res.Paths = append(res.Paths, paths...)
				mu.Unlock()
			}()
		}
		wg.Wait()
		if opt.Progress != nil {
			opt.Progress(ri+1, len(rounds))
		}
		if err := ctx.Err(); err != nil {
			res.Elapsed = time.Since(start)
			return res, err
		}
	}
	order := map[string]int{}
	for i, n := range nodes {
		order[n.Name] = i
	}
	sortPaths(res.Paths, order)
	res.Elapsed = time.Since(start)
	return res, nil
}

func sortPaths(ps []Path, order map[string]int) {
	less := func(a, b Path) bool {
		if a.Network != b.Network {
			return a.Network < b.Network
		}
		if order[a.From] != order[b.From] {
			return order[a.From] < order[b.From]
		}
		return order[a.To] < order[b.To]
	}
	for i := 1; i < len(ps); i++ {
		for j := i; j > 0 && less(ps[j], ps[j-1]); j-- {
			ps[j], ps[j-1] = ps[j-1], ps[j]
		}
	}
}

// runPair asks a's agent to test the paths to b on every network both have.
func runPair(ctx context.Context, a, b Node, networks int, opt Options) []Path {
	var out []Path
	for i := 0; i < networks; i++ {
		if i >= len(a.Addrs) || i >= len(b.Addrs) {
			continue
		}
		fwd := Path{From: a.Name, To: b.Name, Network: i + 1, FromAddr: a.Addrs[i].String(), ToAddr: b.Addrs[i].String()}
		rev := Path{From: b.Name, To: a.Name, Network: i + 1, FromAddr: b.Addrs[i].String(), ToAddr: a.Addrs[i].String()}
		var results []pmtu.Result
		err := call(ctx, a.Agent, opt, func(c *agent.Client) error {
			return c.Call(ctx, agent.KindPMTUPeer, agent.PMTUPeer{
				Agent: b.Agent, Target: b.Addrs[i].String(), Source: a.Addrs[i].String(), Options: opt.Probe,
			}, &results)
		})
		for _, r := range results {
			switch r.Direction {
			case pmtu.Forward:
				fwd.Result = r
			case pmtu.Reverse:
				rev.Result = r
			}
		}
		for _, p := range []*Path{&fwd, &rev} {
			if p.Verdict == "" {
				msg := "not measured"
				if err != nil {
					msg = err.Error()
				}
				p.Error = msg
			}
			if opt.Probe.Expect > 0 {
				ok := p.Error == "" && p.PathMTU >= opt.Probe.Expect
				p.MeetsExpect = &ok
			}
		}
		out = append(out, fwd, rev)
	}
	return out
}

func call(ctx context.Context, addr string, opt Options, fn func(*agent.Client) error) error {
	c, err := agent.Dial(ctx, addr, opt.Token, agent.DialOptions{Software: opt.Software})
	if err != nil {
		return err
	}
	defer c.Close()
	return fn(c)
}
