package mesh

import (
	"cmp"
	"slices"
	"strings"

	"github.com/interlink/interlink/internal/pmtu"
)

// Tally counts the measured paths of one node in one direction.
type Tally struct {
	Measured int // paths with a verdict
	Problems int // of those, paths that need attention
	MinMTU   int // lowest path MTU measured; 0 when none was
}

// NodeSummary is one reachable node's paths: from it (Out) and to it (In).
type NodeSummary struct {
	Name    string
	Out, In Tally
	Failed  int // paths of this node that were tried but not measured
}

// NodeSummaries tallies every node that is not in r.Unreachable, in node
// order: one line each where a matrix would not fit.
func (r *Result) NodeSummaries() []NodeSummary {
	dead := map[string]bool{}
	for _, u := range r.Unreachable {
		dead[u.Node] = true
	}
	idx := map[string]int{}
	var out []NodeSummary
	for _, n := range r.Nodes {
		if !dead[n.Name] {
			idx[n.Name] = len(out)
			out = append(out, NodeSummary{Name: n.Name})
		}
	}
	count := func(t *Tally, p Path) {
		t.Measured++
		if p.Problem() {
			t.Problems++
		}
		if t.MinMTU == 0 || p.PathMTU < t.MinMTU {
			t.MinMTU = p.PathMTU
		}
	}
	for _, p := range r.Paths {
		if p.Skipped != "" {
			continue
		}
		from, okFrom := idx[p.From]
		to, okTo := idx[p.To]
		if p.Error != "" {
			if okFrom {
				out[from].Failed++
			}
			if okTo {
				out[to].Failed++
			}
			continue
		}
		if okFrom {
			count(&out[from].Out, p)
		}
		if okTo {
			count(&out[to].In, p)
		}
	}
	return out
}

// Group is the problem paths that share a verdict: a pmtu verdict,
// "below --expect" for an ok path under the expected MTU, or "error: " and
// the innermost part of the error for paths that could not be measured.
type Group struct {
	Verdict string
	Paths   []Path
}

// ProblemGroups groups the tried problem paths (not the skipped ones, which
// Unreachable and Stopped account for), largest group first.
func (r *Result) ProblemGroups() []Group {
	at := map[string]int{}
	var gs []Group
	for _, p := range r.Paths {
		if p.Skipped != "" || !p.Problem() {
			continue
		}
		key := string(p.Verdict)
		switch {
		case p.Error != "":
			key = "error: " + errorClass(p.Error)
		case p.Verdict == pmtu.OK:
			key = "below --expect"
		}
		i, ok := at[key]
		if !ok {
			i = len(gs)
			at[key] = i
			gs = append(gs, Group{Verdict: key})
		}
		gs[i].Paths = append(gs[i].Paths, p)
	}
	slices.SortStableFunc(gs, func(a, b Group) int {
		return cmp.Or(cmp.Compare(len(b.Paths), len(a.Paths)), strings.Compare(a.Verdict, b.Verdict))
	})
	return gs
}

// errorClass is the innermost part of an error message, without the hint
// the agent package appends, so paths that failed alike share a group.
func errorClass(s string) string {
	s, _, _ = strings.Cut(s, " (is '")
	if i := strings.LastIndex(s, ": "); i >= 0 {
		s = s[i+2:]
	}
	return s
}

// UnreachableGroup is the unreachable nodes that failed alike.
type UnreachableGroup struct {
	Cause string
	Nodes []Unreachable
}

// UnreachableGroups groups r.Unreachable by Cause, largest group first.
func (r *Result) UnreachableGroups() []UnreachableGroup {
	at := map[string]int{}
	var gs []UnreachableGroup
	for _, u := range r.Unreachable {
		i, ok := at[u.Cause]
		if !ok {
			i = len(gs)
			at[u.Cause] = i
			gs = append(gs, UnreachableGroup{Cause: u.Cause})
		}
		gs[i].Nodes = append(gs[i].Nodes, u)
	}
	slices.SortStableFunc(gs, func(a, b UnreachableGroup) int { return cmp.Compare(len(b.Nodes), len(a.Nodes)) })
	return gs
}
