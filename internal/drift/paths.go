package drift

import (
	"fmt"
	"strings"

	"github.com/interlink/interlink/internal/mesh"
	"github.com/interlink/interlink/internal/pmtu"
	"github.com/interlink/interlink/internal/rules"
)

// pathState is what is compared of a path: its verdict (or why it was not
// measured) and its path MTU.
type pathState struct {
	verdict string
	mtu     int
	meets   *bool
	order   int
}

func (p pathState) String() string {
	if p.mtu == 0 {
		return p.verdict
	}
	return fmt.Sprintf("%s %d", p.verdict, p.mtu)
}

func meshPaths(r *mesh.Result) map[string]pathState {
	out := map[string]pathState{}
	for i, p := range r.Paths {
		st := pathState{verdict: string(p.Verdict), mtu: p.PathMTU, meets: p.MeetsExpect, order: i}
		switch {
		case p.Skipped != "":
			st = pathState{verdict: "not measured (" + p.Skipped + ")", order: i}
		case p.Error != "":
			st = pathState{verdict: "error", order: i}
		}
		out[fmt.Sprintf("mesh path %s -> %s, network %d", p.From, p.To, p.Network)] = st
	}
	return out
}

func pmtuPaths(r *pmtu.Report) map[string]pathState {
	out := map[string]pathState{}
	for i, d := range r.Directions {
		out[fmt.Sprintf("pmtu %s %s -> %s", d.Direction, d.From, d.To)] = pathState{verdict: string(d.Verdict), mtu: d.PathMTU, meets: d.MeetsExpect, order: i}
	}
	return out
}

// comparePaths lists the paths whose verdict or MTU changed, and those in
// only one of the two results. A path is worse when its MTU fell, it lost
// its ok verdict, or it no longer meets the expected MTU.
func comparePaths(d *Diff, prefix string, base, cur map[string]pathState) {
	keys := sortedKeys(cur)
	for _, k := range sortedKeys(base) {
		if _, ok := cur[k]; !ok {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		b, inBase := base[k]
		c, inCur := cur[k]
		d.Compared++
		switch {
		case !inBase:
			d.add(Change{What: prefix + k, Before: "absent", After: c.String(), Worse: c.verdict != string(pmtu.OK)})
		case !inCur:
			d.add(Change{What: prefix + k, Before: b.String(), After: "absent", Worse: true, Detail: "the result has no such path"})
		case b.verdict != c.verdict || b.mtu != c.mtu:
			worse := c.mtu < b.mtu || (b.verdict == string(pmtu.OK) && c.verdict != string(pmtu.OK)) ||
				(b.meets != nil && *b.meets && c.meets != nil && !*c.meets)
			d.add(Change{What: prefix + k, Before: b.String(), After: c.String(), Worse: worse})
		}
	}
}

// compareFindings lists findings that appeared, went away, or changed
// severity (a finding is its rule on its object).
func compareFindings(d *Diff, prefix string, base, cur *rules.Result) {
	key := func(f rules.Finding) string { return f.Rule + " " + f.Object }
	bm, cm := map[string]rules.Finding{}, map[string]rules.Finding{}
	for _, f := range base.Findings {
		bm[key(f)] = f
	}
	for _, f := range cur.Findings {
		cm[key(f)] = f
	}
	for _, k := range sortedKeys(cm) {
		c := cm[k]
		d.Compared++
		b, ok := bm[k]
		switch {
		case !ok:
			d.add(Change{What: prefix + "new finding " + k, Before: "absent", After: c.Severity.String(), Worse: true, Detail: c.Message + evidence(c)})
		case b.Severity != c.Severity:
			d.add(Change{What: prefix + "finding " + k, Before: b.Severity.String(), After: c.Severity.String(), Worse: c.Severity > b.Severity, Detail: c.Message})
		}
	}
	for _, k := range sortedKeys(bm) {
		if _, ok := cm[k]; !ok {
			d.Compared++
			d.add(Change{What: prefix + "finding gone " + k, Before: bm[k].Severity.String(), After: "absent", Detail: bm[k].Message})
		}
	}
}

func evidence(f rules.Finding) string {
	var ev []string
	for _, e := range f.Evidence {
		ev = append(ev, e.What+" = "+e.Value)
	}
	if len(ev) == 0 {
		return ""
	}
	return " (" + strings.Join(ev, ", ") + ")"
}
