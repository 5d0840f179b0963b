// Package drift compares a result with a baseline of the same kind and
// lists what changed: mesh and pmtu paths whose verdict or path MTU
// differs, check findings that appeared or went away, bench and A/B
// metrics that moved beyond their noise, the metrics of AWR reports as
// awr diff judges them, and the pairs of two bench --mode gc runs. Noise
// is judged by the statistics of internal/stats on the samples each
// result carries (a bench's intervals, an experiment's runs): a move
// counts when the confidence interval of the shift reaches 95 % and
// excludes zero, so two runs of an unchanged system do not differ by luck;
// samples too few to reach it are listed as not judged. Figures with one
// sample per side (a gc run's pairs) are judged as awr diff judges one
// report per side, and each such change says so.
package drift

import (
	"fmt"
	"slices"
	"strings"

	"github.com/interlink/interlink/internal/ab"
	"github.com/interlink/interlink/internal/awr"
	"github.com/interlink/interlink/internal/cluster"
	"github.com/interlink/interlink/internal/demo"
	"github.com/interlink/interlink/internal/gc"
	"github.com/interlink/interlink/internal/mesh"
	"github.com/interlink/interlink/internal/pmtu"
	"github.com/interlink/interlink/internal/rules"
	"github.com/interlink/interlink/internal/traffic"
)

// Schema is the schema of `interlink diff --json`.
const Schema = "interlink.diff/v1"

// Confidence is the level at which metrics are judged.
const Confidence = 0.95

// Change is one difference between the baseline and the result.
type Change struct {
	What   string `json:"what"` // "mesh path node1 -> node3, network 1"
	Before string `json:"before"`
	After  string `json:"after"`
	// Worse is true when the result is worse than the baseline here (a
	// lower path MTU, a new finding, a slower metric).
	Worse  bool   `json:"worse"`
	Detail string `json:"detail,omitempty"`
}

// Verdicts of a comparison.
const (
	NoChange = "no change"
	Changed  = "changed"
	Worse    = "worse"
)

// Diff is what changed from a baseline to a result.
type Diff struct {
	Kind    string   `json:"kind"` // the results' schema
	Changes []Change `json:"changes"`
	// Compared counts the items (paths, findings, metrics, verdicts)
	// compared and judged, changed or not; the text's "among N compared".
	Compared int `json:"compared"`
	// NotJudged names metrics with too few samples to judge their noise:
	// they are counted neither as changes nor in Compared.
	NotJudged []string `json:"not_judged,omitempty"`
	Verdict   string   `json:"verdict"`
}

func (d *Diff) add(c Change) { d.Changes = append(d.Changes, c) }

// Compare compares result cur with baseline base, two typed results of
// the same kind (as report.Decode returns them). A cluster run compared
// with a mesh result is its mesh; two cluster runs compare their meshes
// and each node's findings.
func Compare(base, cur any) (*Diff, error) {
	d := &Diff{Changes: []Change{}}
	base, cur = asMesh(base, cur)
	if err := compareKind(d, base, cur); err != nil {
		return nil, err
	}
	d.Verdict = NoChange
	for _, c := range d.Changes {
		d.Verdict = Changed
		if c.Worse {
			d.Verdict = Worse
			break
		}
	}
	return d, nil
}

// compareKind sets d.Kind and adds the changes from base to cur, by
// their kind; it fails when cur is not of base's kind or base is of no
// kind that compares.
func compareKind(d *Diff, base, cur any) error {
	switch b := base.(type) {
	case *mesh.Result:
		return both(d, "interlink.mesh/v1", b, cur, func(b, c *mesh.Result) {
			comparePaths(d, "", meshPaths(b), meshPaths(c))
		})
	case *pmtu.Report:
		return both(d, pmtu.ReportSchema, b, cur, func(b, c *pmtu.Report) {
			comparePaths(d, "", pmtuPaths(b), pmtuPaths(c))
		})
	case *rules.Result:
		return both(d, rules.Schema, b, cur, func(b, c *rules.Result) { compareFindings(d, "", b, c) })
	case *traffic.Report:
		return both(d, traffic.Schema, b, cur, func(b, c *traffic.Report) { compareBench(d, b, c) })
	case *ab.Result:
		return both(d, ab.Schema, b, cur, func(b, c *ab.Result) { compareAB(d, b, c) })
	case *cluster.Result:
		return both(d, cluster.Schema, b, cur, func(b, c *cluster.Result) { compareClusters(d, b, c) })
	case *awr.Result:
		c, ok := cur.(*awr.Result)
		if !ok {
			return mismatch(base, cur)
		}
		if err := awr.Comparable(b.Reports, c.Reports); err != nil {
			// Figures of other databases or releases are no baseline.
			return fmt.Errorf("%w; compare awr results of one database and release ('interlink awr diff --any-db' compares several, each apart)", err)
		}
		d.Kind = awr.Schema
		compareAWR(d, b, c)
		return nil
	case *gc.Report:
		return both(d, gc.Schema, b, cur, func(b, c *gc.Report) { compareGC(d, "", b, c) })
	case *awr.Diff:
		return fmt.Errorf("an awr diff result is a comparison already: compare the awr results it came from (saved with 'interlink awr FILE... --save'), or run 'interlink awr diff BEFORE... -- AFTER...'")
	case *demo.Result:
		return both(d, demo.Schema, b, cur, func(b, c *demo.Result) { compareDemo(d, b, c) })
	default:
		return fmt.Errorf("cannot compare a %T", base)
	}
}

// both compares base with cur by compare when cur is of base's type T,
// setting d.Kind to kind; else it is a mismatch.
func both[T any](d *Diff, kind string, base T, cur any, compare func(b, c T)) error {
	c, ok := cur.(T)
	if !ok {
		return mismatch(base, cur)
	}
	d.Kind = kind
	compare(base, c)
	return nil
}

// compareDemo compares two demo runs: their meshes, and each node's
// findings.
func compareDemo(d *Diff, b, c *demo.Result) {
	if b.Mesh != nil && c.Mesh != nil {
		comparePaths(d, "", meshPaths(b.Mesh), meshPaths(c.Mesh))
	}
	for _, bc := range b.Checks {
		for _, cc := range c.Checks {
			if bc.Node == cc.Node && bc.Result != nil && cc.Result != nil {
				compareFindings(d, bc.Node+": ", bc.Result, cc.Result)
			}
		}
	}
}

func mismatch(base, cur any) error {
	return fmt.Errorf("the baseline is %s result and the result %s one: compare results of one command", article(kind(base)), article(kind(cur)))
}

// article puts "a" or "an" before a command's name.
func article(s string) string {
	if s != "" && strings.ContainsRune("aeiou", rune(s[0])) {
		return "an " + s
	}
	return "a " + s
}

func kind(v any) string {
	switch v.(type) {
	case *mesh.Result:
		return "mesh"
	case *pmtu.Report:
		return "pmtu"
	case *rules.Result:
		return "check"
	case *traffic.Report:
		return "bench"
	case *ab.Result:
		return "ab"
	case *gc.Report:
		return "bench --mode gc"
	case *demo.Result:
		return "lab demo"
	case *cluster.Result:
		return "cluster"
	case *awr.Result:
		return "awr"
	case *awr.Diff:
		return "awr diff"
	}
	return fmt.Sprintf("%T", v)
}

// Summary says a result's verdict in a few words, for history listings.
func Summary(v any) string {
	switch r := v.(type) {
	case *mesh.Result:
		problems := 0
		for _, p := range r.Paths {
			if p.Problem() {
				problems++
			}
		}
		s := fmt.Sprintf("%d nodes, %d of %d paths with problems", len(r.Nodes), problems, len(r.Paths))
		if r.Stopped != "" {
			s += ", stopped early"
		}
		return s
	case *pmtu.Report:
		var mtus []int
		for _, d := range r.Directions {
			mtus = append(mtus, d.PathMTU)
		}
		return fmt.Sprintf("%s, path MTU %v", r.Status, mtus)
	case *rules.Result:
		s := r.Summary
		return fmt.Sprintf("%s: %d critical, %d warning, %d info", s.Status, s.Critical, s.Warning, s.Info)
	case *traffic.Report:
		if r.Result == nil || len(r.Flows) == 0 {
			return "no result"
		}
		f := r.Flows[0].Summary
		return fmt.Sprintf("%s %s, %.3g Gbit/s, %.0f msgs/s", r.Spec.Mode, r.Flows[0].Direction, f.BitsPerSec/1e9, f.PerSec)
	case *ab.Result:
		return fmt.Sprintf("%s, %d metrics, %d runs", r.Verdict, len(r.Stats), len(r.Runs))
	case *awr.Result:
		return awrSummary(r)
	case *awr.Diff:
		return awrDiffSummary(r)
	case *gc.Report:
		return fmt.Sprintf("gc %d nodes, %.0f blocks/s, %d lost, %s", len(r.Nodes), r.Total.BlocksPerSec, r.Total.Lost, r.Verdict)
	case *demo.Result:
		if r.Diagnosis == nil {
			return "incomplete"
		}
		return fmt.Sprintf("%d of %d paths with problems", r.Diagnosis.ProblemPaths, r.Diagnosis.Paths)
	}
	return ""
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
