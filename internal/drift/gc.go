package drift

import (
	"fmt"

	"github.com/interlink/interlink/internal/gc"
	"github.com/interlink/interlink/internal/latency"
	"github.com/interlink/interlink/internal/stats"
)

// Two saved bench --mode gc results compare pair by pair (a pair is its
// requester and server, matched by name): blocks per second, the 2-way
// and 3-way receive times (p50, p99) and lost blocks. A gc result carries
// one summary per pair and no intervals, so each figure is one sample per
// side and is judged as awr diff judges one report per side: a change
// beyond stats.OneSampleThreshold (any change from 0) counts, and says it is
// no statistic. The verdict, a pair that appears or goes away and the IP
// packets per block (which carry no noise) are changes as they are.

// gcOneSample is the Detail of a one-sample change.
var gcOneSample = fmt.Sprintf("one run per side: a change beyond %g %%, not a statistic", stats.OneSampleThreshold*100)

// compareGC compares gc result cur with baseline base.
func compareGC(d *Diff, prefix string, base, cur *gc.Report) {
	d.Compared++
	if b, c := base.Verdict, cur.Verdict; b != c {
		d.add(Change{What: prefix + "gc verdict", Before: b, After: c, Worse: gcRank(c) > gcRank(b)})
	}
	bp := map[[2]string]gc.Pair{}
	for _, p := range base.Pairs {
		bp[[2]string{p.Requester, p.Server}] = p
	}
	seen := map[[2]string]bool{}
	for _, c := range cur.Pairs {
		k := [2]string{c.Requester, c.Server}
		seen[k] = true
		what := fmt.Sprintf("%sgc %s <- %s ", prefix, c.Requester, c.Server)
		b, ok := bp[k]
		if !ok {
			d.Compared++
			d.add(Change{What: what + "pair", Before: "not measured", After: fmt.Sprintf("%.0f blocks/s", c.BlocksPerSec), Detail: "a pair of this run only"})
			continue
		}
		gcFigure(d, what+"blocks/s", b.BlocksPerSec, c.BlocksPerSec, "/s", false)
		for _, l := range []struct {
			name string
			b, c *latency.Summary
		}{{"2-way", b.TwoWay, c.TwoWay}, {"3-way", b.ThreeWay, c.ThreeWay}} {
			if l.b == nil || l.c == nil || l.b.Count == 0 || l.c.Count == 0 {
				continue
			}
			gcFigure(d, what+l.name+" receive time p50", float64(l.b.P50)/1e6, float64(l.c.P50)/1e6, "ms", true)
			gcFigure(d, what+l.name+" receive time p99", float64(l.b.P99)/1e6, float64(l.c.P99)/1e6, "ms", true)
		}
		gcFigure(d, what+"lost blocks", float64(b.Lost), float64(c.Lost), "", true)
	}
	for _, b := range base.Pairs {
		if k := [2]string{b.Requester, b.Server}; !seen[k] {
			d.Compared++
			d.add(Change{What: fmt.Sprintf("%sgc %s <- %s pair", prefix, b.Requester, b.Server), Before: fmt.Sprintf("%.0f blocks/s", b.BlocksPerSec),
				After: "not measured", Worse: true, Detail: "a pair of the baseline only"})
		}
	}
	d.Compared++
	if b, c := base.Total.FragmentsPerBlock, cur.Total.FragmentsPerBlock; fmt.Sprintf("%.2f", b) != fmt.Sprintf("%.2f", c) {
		d.add(Change{What: prefix + "gc IP packets per block shipped", Before: fmt.Sprintf("%.2f", b), After: fmt.Sprintf("%.2f", c), Worse: c > b})
	}
}

// gcFigure judges one figure with one sample per side.
func gcFigure(d *Diff, what string, before, after float64, unit string, lowerBetter bool) {
	d.Compared++
	if !stats.OneSampleChanged(before, after) {
		return
	}
	d.add(Change{What: what, Before: awrValue(before, unit, 1), After: awrValue(after, unit, 1),
		Worse: (after > before) == lowerBetter, Detail: gcOneSample})
}

// gcRank orders gc's verdicts from best to worst.
func gcRank(v string) int {
	switch v {
	case gc.VerdictOK:
		return 0
	case gc.VerdictLimited:
		return 1
	case gc.VerdictWarning:
		return 2
	}
	return 3
}
