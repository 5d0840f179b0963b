// Package mesh proves the path MTU of every path between N nodes: every
// agent probes every other one, on every interconnect network, in both
// directions. There are no rounds: a pair starts as soon as both of its nodes
// have room (Options.PerNode working pairs per node at once; a pair that
// mostly waits out probe timeouts counts for its working share), the pairs
// of the node with the most work left first (sched.go), so a node whose
// paths are slow holds back only its own pairs.
//
// The orchestrator (this package, in `interlink mesh`) only talks to the
// agents' control ports: for each pair (A, B) and network i it asks A's
// agent for a "pmtu.peer" test to B's agent, probing B's i-th address from
// A's i-th address; A's agent reports both directions.
package mesh

import (
	"cmp"
	"slices"
	"strconv"
	"time"

	"github.com/interlink/interlink/internal/pmtu"
)

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
	// Skipped says why the path was not tried at all: SkipUnreachable or
	// SkipStopped (Error then says the same in words). Empty: it was tried.
	Skipped string `json:"skipped,omitempty"`
}

// Reasons a path was not tried (Path.Skipped).
const (
	SkipUnreachable = "unreachable" // the agent of one end could not be reached
	SkipStopped     = "stopped"     // the run ended (timeout, interrupt) first
)

// Problem reports whether the path needs attention: an error, a verdict
// other than ok, or a path MTU below the expected one.
func (p Path) Problem() bool {
	return p.Error != "" || p.Verdict != pmtu.OK || (p.MeetsExpect != nil && !*p.MeetsExpect)
}

// Cell is the matrix entry for the path from one node to another on a
// network (1-based): "-" on the diagonal, the path MTU with "!" when the
// path is a problem, "error!" when it could not be measured, "down!" when
// an end's agent was unreachable, "n/m" when the run stopped before it,
// " " when the result holds no such path. The first call indexes the paths,
// so a whole matrix costs one pass over them; do not change Paths after.
func (r *Result) Cell(network int, from, to string) string {
	if from == to {
		return "-"
	}
	p, ok := r.path(network, from, to)
	if !ok {
		return " "
	}
	switch {
	case p.Skipped == SkipUnreachable:
		return "down!"
	case p.Skipped == SkipStopped:
		return "n/m"
	case p.Error != "":
		return "error!"
	}
	s := strconv.Itoa(p.PathMTU)
	if p.Problem() {
		s += "!"
	}
	return s
}

// path finds the path from one node to another on a network (1-based);
// the first call indexes the paths.
func (r *Result) path(network int, from, to string) (Path, bool) {
	if r.cells == nil {
		r.cells = make(map[cellKey]int, len(r.Paths))
		for i, p := range r.Paths {
			r.cells[cellKey{p.Network, p.From, p.To}] = i
		}
	}
	i, ok := r.cells[cellKey{network, from, to}]
	if !ok {
		return Path{}, false
	}
	return r.Paths[i], true
}

type cellKey struct {
	network  int
	from, to string
}

// Result is the outcome of a mesh run (schema interlink.mesh/v1).
type Result struct {
	Schema   string `json:"schema"`
	Nodes    []Node `json:"nodes"`
	Networks int    `json:"networks"`
	Expect   int    `json:"expect,omitempty"`
	PerNode  int    `json:"per_node"` // working pairs a node took part in at once, at most
	// MaxPerNode is the most pairs a node took part in at once, working or
	// only waiting out probe timeouts.
	MaxPerNode int `json:"max_per_node"`
	// Slowest is the node whose pairs took the most time in all: with
	// PerNode, the run's floor.
	Slowest *NodeTime `json:"slowest,omitempty"`
	// Paths holds every path of the mesh: measured, failed, or not tried
	// (Skipped), sorted by network, then from and to in node order.
	Paths []Path `json:"paths"`
	// Unreachable lists each node whose agent could not be reached, once.
	Unreachable []Unreachable `json:"unreachable,omitempty"`
	// Stopped says why the run ended before every path was tried (e.g.
	// "--timeout 1m0s reached"); empty when it ran to the end.
	Stopped string        `json:"stopped,omitempty"`
	Elapsed time.Duration `json:"elapsed_ns"`

	cells map[cellKey]int // index of Paths for Cell, built on first use
}

// NodeTime is the time one node's pairs took, summed, and of it the time
// their searches only waited out probe timeouts.
type NodeTime struct {
	Node   string        `json:"node"`
	Pairs  int           `json:"pairs"`
	Spent  time.Duration `json:"spent_ns"`
	Waited time.Duration `json:"waited_ns"`
}

// Unreachable is a node whose agent could not be reached from here (or,
// with During set, stopped answering during the run).
type Unreachable struct {
	Node   string `json:"node"`
	Agent  string `json:"agent"`
	Cause  string `json:"cause"` // short class of Error, shared by nodes that failed alike
	Error  string `json:"error"`
	During bool   `json:"during_run,omitempty"`
}

// Counts tallies a result's paths.
func (r *Result) Counts() (tried, measured, skippedUnreachable, skippedStopped int) {
	for _, p := range r.Paths {
		switch p.Skipped {
		case SkipUnreachable:
			skippedUnreachable++
		case SkipStopped:
			skippedStopped++
		default:
			tried++
			if p.Error == "" {
				measured++
			}
		}
	}
	return
}

// sortPaths orders paths by network, then from and to in node order:
// O(P log P), where the insertion sort it replaced was O(P^2) and took most
// of a 200-node run's CPU.
func sortPaths(ps []Path, nodes []Node) {
	order := make(map[string]int, len(nodes))
	for i, n := range nodes {
		order[n.Name] = i
	}
	type keyed struct {
		net, from, to int
		p             Path
	}
	ks := make([]keyed, len(ps))
	for i, p := range ps {
		ks[i] = keyed{p.Network, order[p.From], order[p.To], p}
	}
	slices.SortFunc(ks, func(a, b keyed) int {
		return cmp.Or(cmp.Compare(a.net, b.net), cmp.Compare(a.from, b.from), cmp.Compare(a.to, b.to))
	})
	for i := range ks {
		ps[i] = ks[i].p
	}
}

// Matrix is network's path-MTU matrix as text cells: a header row ("from \\
// to" and the node names) and one row per sending node, each cell as Cell
// gives it. Renderers (text, demo, HTML) lay it out; names are as the
// nodes were given (clean them for a terminal).
func (r *Result) Matrix(network int) [][]string { return r.matrix(network, r.Cell) }

// matrix is the table of cell(network, from, to) with the node names as
// its first row and column.
func (r *Result) matrix(network int, cell func(network int, from, to string) string) [][]string {
	head := []string{"from \\ to"}
	for _, n := range r.Nodes {
		head = append(head, n.Name)
	}
	cells := [][]string{head}
	for _, from := range r.Nodes {
		row := []string{from.Name}
		for _, to := range r.Nodes {
			row = append(row, cell(network, from.Name, to.Name))
		}
		cells = append(cells, row)
	}
	return cells
}
