package awr

import (
	"fmt"

	"github.com/interlink/interlink/internal/stats"
)

// DiffSchema names the JSON document of `interlink awr diff --json`.
const DiffSchema = "interlink.awr-diff/v1"

// Diff is the comparison of reports taken before a change with reports
// taken after it, instance by instance, metric by metric.
type Diff struct {
	Schema     string   `json:"schema"`
	Before     []string `json:"before"` // the files
	After      []string `json:"after"`
	Confidence float64  `json:"confidence"`
	// OneSample: one report per side, so each figure is one sample and
	// the comparison is a ratio without an interval. Note says so.
	OneSample bool   `json:"one_sample"`
	Note      string `json:"note"`
	// Databases lists the databases of the reports, one per DB id, in
	// the order they came; instances are matched within one database
	// only (awr diff refuses more than one unless --any-db).
	Databases []Database     `json:"databases"`
	Instances []InstanceDiff `json:"instances"`
	// Improved and Worsened count the metrics judged better or worse
	// (significantly, with several reports per side; by any change
	// beyond Threshold with one).
	Improved int `json:"improved"`
	Worsened int `json:"worsened"`
	// HolmFamily is the number of metrics with statistics, across whose
	// p-values each is Holm-adjusted: a metric differs only when its
	// adjusted p is at most 1 - Confidence.
	HolmFamily int `json:"holm_family,omitempty"`
}

// InstanceDiff is one instance's metrics side by side.
type InstanceDiff struct {
	DBID    string       `json:"db_id"`
	DBName  string       `json:"db_name"`
	Number  int          `json:"number"`
	Name    string       `json:"name"`
	Metrics []MetricDiff `json:"metrics"`
}

// MetricDiff is one metric before and after.
type MetricDiff struct {
	Metric string `json:"metric"`
	Unit   string `json:"unit"`
	// Better is "lower", "higher" or "" (neither: a load figure).
	Better string    `json:"better,omitempty"`
	Before []float64 `json:"before"` // one value per report holding it
	After  []float64 `json:"after"`
	// MedianBefore and MedianAfter are the values themselves with one
	// report per side.
	MedianBefore float64 `json:"median_before"`
	MedianAfter  float64 `json:"median_after"`
	// Ratio is MedianAfter / MedianBefore (absent when before is 0).
	Ratio *float64 `json:"ratio"`
	// Shift and RatioCI are the Hodges-Lehmann shift after - before and
	// ratio with their intervals, P the Mann-Whitney p-value: with two
	// or more reports per side, as interlink ab computes them.
	Shift   *stats.Shift `json:"shift,omitempty"`
	RatioCI *stats.Shift `json:"ratio_ci,omitempty"`
	P       *float64     `json:"p_value,omitempty"`
	// PHolm is P Holm-adjusted across the metrics of the diff that have
	// statistics (Diff.HolmFamily).
	PHolm *float64 `json:"p_holm,omitempty"`
	// Verdict: better, worse, changed (no direction), unchanged, "no
	// detectable difference" (the interval includes 0, or its p-value
	// does not survive Holm's correction: the text says which), or "no
	// verdict: too few reports for 95 % (need 4 a side)" (the interval
	// did not reach the level; Shift.Achieved says the level it has), or
	// "no verdict: N report(s) before and M after have this figure; ..."
	// (a diff of several reports a side where one side has the figure
	// once: no statistics).
	Verdict string `json:"verdict"`
}

// metric is one figure this package compares.
type metric struct {
	name, unit, better string
	get                func(in *Instance) []namedValue
}

type namedValue struct {
	suffix string
	v      *float64
}

func one(p func(in *Instance) *float64) func(in *Instance) []namedValue {
	return func(in *Instance) []namedValue { return []namedValue{{"", p(in)}} }
}

// metrics are the figures compared, in order.
var metrics = []metric{
	{"db_time_per_sec", "s/s", "", one(func(in *Instance) *float64 {
		return loadField(in, func(l *LoadProfile) *float64 { return l.DBTimePerSec })
	})},
	{"db_cpu_per_sec", "s/s", "", one(func(in *Instance) *float64 {
		return loadField(in, func(l *LoadProfile) *float64 { return l.DBCPUPerSec })
	})},
	{"transactions_per_sec", "/s", "higher", one(func(in *Instance) *float64 {
		return loadField(in, func(l *LoadProfile) *float64 { return l.TransactionsPerSec })
	})},
	{"executes_per_sec", "/s", "higher", one(func(in *Instance) *float64 {
		return loadField(in, func(l *LoadProfile) *float64 { return l.ExecutesPerSec })
	})},
	{"db_time_per_txn", "s", "lower", one(dbTimePerTxn)},
	{"gc_blocks_received_per_sec", "/s", "", one(func(in *Instance) *float64 {
		return gcField(in, func(g *GCLoad) *float64 { return g.BlocksReceivedPerSec })
	})},
	{"gc_blocks_served_per_sec", "/s", "", one(func(in *Instance) *float64 {
		return gcField(in, func(g *GCLoad) *float64 { return g.BlocksServedPerSec })
	})},
	{"estd_interconnect_kb_per_sec", "KB/s", "", one(func(in *Instance) *float64 { return gcField(in, func(g *GCLoad) *float64 { return g.TrafficKBPerSec }) })},
	{"gc_cr_receive_ms", "ms", "lower", one(func(in *Instance) *float64 {
		return workField2(in, func(w *GCWorkload) *float64 { return w.CRReceiveMs })
	})},
	{"gc_current_receive_ms", "ms", "lower", one(func(in *Instance) *float64 {
		return workField2(in, func(w *GCWorkload) *float64 { return w.CurrentReceiveMs })
	})},
	{"gc_remote_cache_pct", "%", "", one(func(in *Instance) *float64 {
		if in.GCEfficiency == nil {
			return nil
		}
		return in.GCEfficiency.RemotePct
	})},
	{"gc_lost_blocks", "count", "lower", one(func(in *Instance) *float64 { return in.GCBlocksLost })},
	{"gc_lost_block_waits", "count", "lower", one(func(in *Instance) *float64 { return in.GCLostBlockWaits })},
	{"gc_buffer_busy_pct_db_time", "%", "lower", one(func(in *Instance) *float64 { return pctDB(in, "gc buffer busy acquire", "gc buffer busy release") })},
	{"ping_8k_ms", "ms", "lower", func(in *Instance) []namedValue {
		var out []namedValue
		for _, p := range in.Pings {
			out = append(out, namedValue{fmt.Sprintf(" to %d", p.Target), p.Avg8KMs})
		}
		return out
	}},
	{"ping_500b_ms", "ms", "lower", func(in *Instance) []namedValue {
		var out []namedValue
		for _, p := range in.Pings {
			out = append(out, namedValue{fmt.Sprintf(" to %d", p.Target), p.Avg500BMs})
		}
		return out
	}},
	{"device_receive_dropped", "count", "lower", func(in *Instance) []namedValue {
		var out []namedValue
		for _, d := range in.Devices {
			out = append(out, namedValue{" " + d.Name, d.ReceiveDropped})
		}
		return out
	}},
}

func loadField(in *Instance, f func(*LoadProfile) *float64) *float64 {
	if in.Load == nil {
		return nil
	}
	return f(in.Load)
}

func gcField(in *Instance, f func(*GCLoad) *float64) *float64 {
	if in.GCLoad == nil {
		return nil
	}
	return f(in.GCLoad)
}

func workField2(in *Instance, f func(*GCWorkload) *float64) *float64 {
	if in.GCWorkload == nil {
		return nil
	}
	return f(in.GCWorkload)
}

// dbTimePerTxn is DB time per second over transactions per second: the
// seconds of database time one transaction costs.
func dbTimePerTxn(in *Instance) *float64 {
	if in.Load == nil || in.Load.DBTimePerSec == nil || in.Load.TransactionsPerSec == nil || *in.Load.TransactionsPerSec <= 0 {
		return nil
	}
	return f(*in.Load.DBTimePerSec / *in.Load.TransactionsPerSec)
}

func pctDB(in *Instance, names ...string) *float64 {
	if in.Waits == nil {
		return nil
	}
	s := 0.0
	for _, n := range names {
		if w := in.Wait(n); w != nil && w.PctDBTime != nil {
			s += *w.PctDBTime
		}
	}
	return &s
}

// Compare compares the reports after a change with those before it, at
// confidence conf (0.95): instances are matched by number (and for
// awrrpt reports of one instance, by being the one).
func Compare(before, after []Report, conf float64) *Diff {
	d := &Diff{Schema: DiffSchema, Confidence: conf, Instances: []InstanceDiff{}}
	for _, r := range before {
		d.Before = append(d.Before, r.File)
	}
	for _, r := range after {
		d.After = append(d.After, r.File)
	}
	d.Databases = databases(before, after)
	d.OneSample = oneEach(d.Databases)
	if d.OneSample {
		d.Note = "one report per side: each figure is one sample, so the ratios below say how the two intervals differed, not whether the change caused it; compare several reports per side (e.g. the same hour on several days) for intervals and a verdict"
	} else {
		d.Note = fmt.Sprintf("%d report(s) before, %d after: medians, Hodges-Lehmann shift and ratio with their %[3]s intervals and the Mann-Whitney p-value, as interlink ab computes them; a metric differs when its interval reaches %[3]s and excludes 0 and its p-value, Holm-adjusted across the metrics, is at most %.3[4]g", len(before), len(after), stats.Pct(conf), 1-conf)
	}
	type side struct{ before, after []*Instance }
	byNum := map[instKey]*side{}
	var nums []instKey
	names := map[instKey]string{}
	collect := func(reps []Report, after bool) {
		for i := range reps {
			for j := range reps[i].Instances {
				in := &reps[i].Instances[j]
				k := instKey{db: reps[i].DBID, n: in.Number}
				s := byNum[k]
				if s == nil {
					s = &side{}
					byNum[k] = s
					nums = append(nums, k)
				}
				if names[k] == "" {
					names[k] = in.Name
				}
				if after {
					s.after = append(s.after, in)
				} else {
					s.before = append(s.before, in)
				}
			}
		}
	}
	collect(before, false)
	collect(after, true)
	sortKeys(nums, d.Databases)
	for _, n := range nums {
		s := byNum[n]
		if len(s.before) == 0 || len(s.after) == 0 {
			continue
		}
		id := InstanceDiff{DBID: n.db, DBName: dbName(d.Databases, n.db), Number: n.n, Name: names[n], Metrics: []MetricDiff{}}
		for _, m := range metrics {
			id.Metrics = append(id.Metrics, compareMetric(m, s.before, s.after, conf, d.OneSample)...)
		}
		d.Instances = append(d.Instances, id)
	}
	judgeFamily(d, conf)
	return d
}

// compareMetric compares one metric (one per ping target or device).
func compareMetric(m metric, before, after []*Instance, conf float64, oneSample bool) []MetricDiff {
	type vals struct{ b, a []float64 }
	by := map[string]*vals{}
	var order []string
	gather := func(ins []*Instance, after bool) {
		for _, in := range ins {
			for _, nv := range m.get(in) {
				if nv.v == nil {
					continue
				}
				v := by[nv.suffix]
				if v == nil {
					v = &vals{}
					by[nv.suffix] = v
					order = append(order, nv.suffix)
				}
				if after {
					v.a = append(v.a, *nv.v)
				} else {
					v.b = append(v.b, *nv.v)
				}
			}
		}
	}
	gather(before, false)
	gather(after, true)
	var out []MetricDiff
	for _, sfx := range order {
		v := by[sfx]
		if len(v.b) == 0 || len(v.a) == 0 {
			continue
		}
		md := MetricDiff{Metric: m.name + sfx, Unit: m.unit, Better: m.better, Before: v.b, After: v.a,
			MedianBefore: stats.Median(v.b), MedianAfter: stats.Median(v.a)}
		if md.MedianBefore != 0 {
			md.Ratio = f(md.MedianAfter / md.MedianBefore)
		}
		md.Verdict = verdict(&md, conf, oneSample)
		out = append(out, md)
	}
	return out
}

// verdict judges one metric with one sample per side by the size of the
// change alone (and says so in the document's note); with more it makes
// the statistics and leaves the verdict pending, for judgeFamily. In a
// diff of several reports a side, a metric that only one report of a side
// has (the others lack the figure or have no samples for it: an idle
// instance's ping or receive time) has no statistics and gets no
// verdict: judged by the size of the change, as a one-report diff is, it
// would be a better or worse at no stated level among metrics judged at
// 95 %, and would set the exit code.
func verdict(md *MetricDiff, conf float64, oneSample bool) string {
	changed := false
	up := md.MedianAfter > md.MedianBefore
	if !oneSample && (len(md.Before) < 2 || len(md.After) < 2) {
		if sameEverywhere(md) {
			return "unchanged"
		}
		return fmt.Sprintf("no verdict: %d report(s) before and %d after have this figure; %s", len(md.Before), len(md.After), stats.TooFew("reports", conf))
	}
	if oneSample {
		changed = stats.OneSampleChanged(md.MedianBefore, md.MedianAfter)
		if !changed {
			return "unchanged"
		}
	} else {
		c, err := stats.Compare(md.Before, md.After, conf)
		if err != nil {
			return "no statistics: " + err.Error()
		}
		sh := c.Shift
		md.Shift, md.P = &sh, f(c.P)
		if c.Ratio.Level != 0 {
			rc := c.Ratio
			md.RatioCI = &rc
		}
		return pending
	}
	return direction(md, changed, up)
}

// direction names a change of a metric: "unchanged", "changed" for a
// figure without a better direction, else "better" or "worse".
func direction(md *MetricDiff, changed, up bool) string {
	switch {
	case !changed:
		return "unchanged"
	case md.Better == "":
		return "changed"
	case up == (md.Better == "higher"):
		return "better"
	}
	return "worse"
}
