package demo

import (
	"fmt"
	"sort"
	"strings"

	"github.com/interlink/interlink/internal/mesh"
	"github.com/interlink/interlink/internal/pmtu"
	"github.com/interlink/interlink/internal/rules"
)

// diagnose reads the mesh: a node whose every path, to it and from it, is a
// silent blackhole has a switch port smaller than its interface (with one
// bad port, the other nodes' paths among themselves are fine, so only that
// node qualifies).
func (r *run) diagnose(m *mesh.Result) *Diagnosis {
	d := &Diagnosis{Ports: []Port{}, Paths: len(m.Paths)}
	for _, n := range r.nodes {
		paths, holes, pathMTU := 0, 0, 0
		for _, p := range m.Paths {
			if p.From != n.name && p.To != n.name {
				continue
			}
			paths++
			if p.Error == "" && p.Verdict == pmtu.Blackhole {
				holes++
				if pathMTU == 0 || p.PathMTU < pathMTU {
					pathMTU = p.PathMTU
				}
			}
		}
		if paths > 0 && holes == paths {
			d.Ports = append(d.Ports, Port{Node: n.name, Interface: n.icIf, Address: n.ic.String(), Switch: icSwitch,
				SwitchPort: n.icPort, InterfaceMTU: n.icMTU, PathMTU: pathMTU, Verdict: string(pmtu.Blackhole), Paths: paths})
		}
	}
	bad := map[string]bool{}
	for _, p := range d.Ports {
		bad[p.Node] = true
	}
	for _, p := range m.Paths {
		if !p.Problem() {
			continue
		}
		d.ProblemPaths++
		if !bad[p.From] && !bad[p.To] {
			d.Unexplained++
		}
		if p.ICMPFrom != "" {
			d.ICMPErrors++
		}
		if p.Error == "" {
			d.TracepathMTU = max(d.TracepathMTU, p.LocalMTU)
		}
	}
	if d.ICMPErrors > 0 {
		d.TracepathMTU = 0 // tracepath would have seen the ICMP error and said so
	}
	ok := func(from, to string) bool {
		for _, p := range m.Paths {
			if p.From == from && p.To == to {
				return !p.Problem() && p.PathMTU >= ExpectMTU
			}
		}
		return false
	}
	for i, a := range m.Nodes {
		for _, b := range m.Nodes[i+1:] {
			if d.Good[0] == "" && ok(a.Name, b.Name) && ok(b.Name, a.Name) {
				d.Good = [2]string{a.Name, b.Name}
			}
		}
	}
	return d
}

// advise says what an operator should do, from what was measured.
func advise(res *Result) []string {
	var out []string
	if d := res.Diagnosis; d != nil {
		for _, p := range d.Ports {
			out = append(out, fmt.Sprintf("%s: the switch port that %s %s (%s) plugs into passes only %d-byte packets while the host says %d, "+
				"and it drops larger ones silently. Set that port's MTU to %d like the other interconnect ports (in this lab: port %s on switch %s), "+
				"in a maintenance window, then prove it with 'interlink mesh --expect %d'. Lowering the hosts to %d instead would hide the blackhole "+
				"and cost what the blocks comparison shows.",
				p.Node, p.Node, p.Interface, p.Address, p.PathMTU, p.InterfaceMTU, p.InterfaceMTU, p.SwitchPort, p.Switch, ExpectMTU, p.PathMTU))
		}
		if d.Unexplained > 0 {
			out = append(out, fmt.Sprintf("%d problem path(s) involve none of those nodes: read the mesh's problem paths.", d.Unexplained))
		}
		if len(d.Ports) == 0 && d.ProblemPaths == 0 {
			out = append(out, fmt.Sprintf("Every interconnect path meets %d: nothing to do on the switch.", ExpectMTU))
		}
	}
	if line := blocksAdvice(res); line != "" {
		out = append(out, line)
	}
	if ids := hostFindings(res.Checks); len(ids) > 0 {
		out = append(out, fmt.Sprintf("Host settings from check, unrelated to the port but worth fixing on a real node: %s "+
			"(each finding above carries its fix).", strings.Join(ids, ", ")))
	}
	return out
}

// blockSize is the block size of the blocks runs, as text.
func blockSize(res *Result) string {
	for _, b := range res.Blocks {
		if b.Result != nil && b.Result.Spec.Block > 0 {
			if b.Result.Spec.Block%1024 == 0 {
				return fmt.Sprintf("%d KiB", b.Result.Spec.Block/1024)
			}
			return fmt.Sprintf("%d-byte", b.Result.Spec.Block)
		}
	}
	return "8 KiB"
}

// SharedFinding is a finding and the nodes it was found on.
type SharedFinding struct {
	rules.Finding
	Nodes []string
}

// Findings merges the nodes' findings of at least warning severity: the
// same rule on the same object with the same message once, with its nodes.
func Findings(checks []NodeCheck) []SharedFinding {
	var out []SharedFinding
	idx := map[string]int{}
	for _, c := range checks {
		if c.Result == nil {
			continue
		}
		for _, f := range c.Result.Findings {
			if f.Severity < rules.Warning {
				continue
			}
			k := f.Rule + "\x00" + f.Object + "\x00" + f.Message
			i, ok := idx[k]
			if !ok {
				i = len(out)
				idx[k] = i
				out = append(out, SharedFinding{Finding: f})
			}
			out[i].Nodes = append(out[i].Nodes, c.Node)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Severity > out[j].Severity })
	return out
}

// hostFindings lists the distinct rule ids of warning or worse.
func hostFindings(checks []NodeCheck) []string {
	var ids []string
	seen := map[string]bool{}
	for _, f := range Findings(checks) {
		if !seen[f.Rule] {
			seen[f.Rule] = true
			ids = append(ids, f.Rule)
		}
	}
	return ids
}
