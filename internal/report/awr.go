package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/interlink/interlink/internal/awr"
	"github.com/interlink/interlink/internal/rules"
	"github.com/interlink/interlink/internal/stats"
)

// AWRText writes the human report of `interlink awr`: each report's
// header and cluster sections (a section the report does not have says
// "absent"), then the findings grouped by severity, then the summary.
// Every string from a report goes through termtext.Clean (p.f and cleanf
// clean their arguments): a report is a file from elsewhere.
func AWRText(w io.Writer, r *awr.Result) error {
	p := &printer{w: w}
	p.f("interlink awr: %d report(s)\n", len(r.Reports))
	for i := range r.Reports {
		awrReport(p, &r.Reports[i])
	}
	findingsText(p, r.Findings)
	s := r.Summary
	p.f("\nsummary: %d critical, %d warning, %d info: %s\n", s.Critical, s.Warning, s.Info, s.Status)
	return p.err
}

// val formats a value that may be absent ("n/a": not in the report, or
// no samples behind it).
func val(x *float64) string {
	if x == nil {
		return "n/a"
	}
	return fnum(*x)
}

func awrKind(r *awr.Report) string {
	k := "instance report (awrrpt)"
	if r.Kind == awr.KindGlobal {
		k = "global RAC report (awrgrpt)"
	}
	rac := "RAC not stated"
	if r.RAC != nil {
		rac = map[bool]string{true: "RAC", false: "not RAC"}[*r.RAC]
	}
	return fmt.Sprintf("%s, %s, %s, %s", r.Format, k, orDash(r.Release), rac)
}

func awrReport(p *printer, r *awr.Report) {
	p.f("\n%s (%s)\n", r.File, awrKind(r))
	p.f("  database %s (id %s)", orDash(r.DBName), orDash(r.DBID))
	if r.BeginSnap != nil && r.EndSnap != nil {
		p.f(", snapshots %d", r.BeginSnap.ID)
		if r.BeginSnap.Time != "" {
			p.f(" (%s)", r.BeginSnap.Time)
		}
		p.f(" to %d", r.EndSnap.ID)
		if r.EndSnap.Time != "" {
			p.f(" (%s)", r.EndSnap.Time)
		}
	}
	p.f("\n")
	if r.DecimalComma {
		p.f("  numbers read with a decimal comma\n")
	}
	for i := range r.Instances {
		awrInstance(p, &r.Instances[i])
	}
	for _, n := range r.Notes {
		p.f("  note: %s\n", n)
	}
}

func mins(s *float64) string {
	if s == nil {
		return "n/a"
	}
	return strconv.FormatFloat(*s/60, 'f', 2, 64) + " min"
}

func awrInstance(p *printer, in *awr.Instance) {
	p.f("  instance %d %s on %s: elapsed %s, DB time %s\n", in.Number, orDash(in.Name), orDash(in.Host), mins(in.ElapsedSeconds), mins(in.DBTimeSeconds))
	if l := in.Load; l != nil {
		p.f("    load profile: DB time %s s/s, DB CPU %s s/s, %s transactions/s, %s executes/s, %s user calls/s\n",
			val(l.DBTimePerSec), val(l.DBCPUPerSec), val(l.TransactionsPerSec), val(l.ExecutesPerSec), val(l.UserCallsPerSec))
	}
	if g := in.GCLoad; g != nil {
		computed := ""
		if g.TrafficComputed {
			computed = " (computed by Oracle's formula: awrgrpt does not print it)"
		}
		p.f("    global cache load: %s blocks/s received, %s served; GCS/GES messages %s/s received, %s sent; Estd Interconnect traffic %s KB/s%s\n",
			val(g.BlocksReceivedPerSec), val(g.BlocksServedPerSec), val(g.MessagesReceivedPerSec), val(g.MessagesSentPerSec), val(g.TrafficKBPerSec), computed)
		if g.CRFailures != nil {
			p.f("    in the interval: %s gc cr failures\n", val(g.CRFailures))
		}
	}
	if in.GCBlocksLost != nil || in.GCBlocksCorrupt != nil || in.GCLostBlockWaits != nil {
		from := ""
		if in.GCBlocksLostFrom != "" {
			from = " (" + in.GCBlocksLostFrom + ")"
		}
		p.f("    lost blocks in the interval: %s gc blocks lost%s, %s gc blocks corrupt; %s waits on gc cr/current block lost\n",
			val(in.GCBlocksLost), from, val(in.GCBlocksCorrupt), val(in.GCLostBlockWaits))
	}
	if e := in.GCEfficiency; e != nil {
		p.f("    buffer access: local %s %%, remote %s %%, disk %s %%\n", val(e.LocalPct), val(e.RemotePct), val(e.DiskPct))
	}
	if w := in.GCWorkload; w != nil {
		p.f("    avg receive time: cr %s ms, current %s ms; cr build %s, send %s, flush %s ms; current pin %s, send %s, flush %s ms\n",
			val(w.CRReceiveMs), val(w.CurrentReceiveMs), val(w.CRBuildMs), val(w.CRSendMs), val(w.CRFlushMs), val(w.CurrentPinMs), val(w.CurrentSendMs), val(w.CurrentFlushMs))
	}
	tw := tabwriter.NewWriter(p, 0, 0, 2, ' ', tabwriter.AlignRight)
	if in.Waits != nil && len(in.Waits) == 0 {
		p.f("    gc wait events (from %s): none (the table lists no gc event)\n", in.WaitsFrom)
	}
	if len(in.Waits) > 0 {
		p.f("    gc wait events (from %s):\n", in.WaitsFrom)
		cleanf(tw, "      EVENT\tWAITS\tTOTAL (S)\tAVG (MS)\t%% DB TIME\t\n")
		for _, e := range in.Waits {
			cleanf(tw, "      %s\t%s\t%s\t%s\t%s\t\n", e.Name, val(e.Waits), val(e.TotalSeconds), val(e.AvgMs), val(e.PctDBTime))
		}
		tw.Flush()
	}
	if len(in.Pings) > 0 {
		p.f("    interconnect pings (ms):\n")
		cleanf(tw, "      TARGET\t500B COUNT\tAVG\tSTDDEV\t8K COUNT\tAVG\tSTDDEV\t\n")
		for _, x := range in.Pings {
			cleanf(tw, "      %d\t%s\t%s\t%s\t%s\t%s\t%s\t\n", x.Target, val(x.Count500B), val(x.Avg500BMs), val(x.Stddev500Ms), val(x.Count8K), val(x.Avg8KMs), val(x.Stddev8KMs))
		}
		tw.Flush()
	}
	if len(in.Clients) > 0 {
		var parts []string
		for _, c := range in.Clients {
			parts = append(parts, fmt.Sprintf("%s %s/%s", c.Client, val(c.SendMBPerSec), val(c.ReceiveMBPerSec)))
		}
		p.f("    interconnect by client (MB/s sent/received): %s\n", strings.Join(parts, ", "))
	}
	for _, d := range in.Devices {
		p.f("    device %s %s (public %s, %s): send %s MB/s, %s errors, %s dropped, %s overruns, %s carrier lost; receive %s MB/s, %s errors, %s dropped, %s overruns, %s frame errors\n",
			d.Name, d.Address, orDash(d.Public), orDash(d.Source), val(d.SendMBPerSec), val(d.SendErrors), val(d.SendDropped), val(d.SendOverrun), val(d.SendCarrierLost),
			val(d.ReceiveMBPerSec), val(d.ReceiveErrors), val(d.ReceiveDropped), val(d.ReceiveOverrun), val(d.ReceiveFrameErrs))
	}
	if m := in.Remaster; m != nil && (m.Ops != nil || m.Objects != nil || m.TimeSeconds != nil) {
		p.f("    dynamic remastering: %s ops, %s objects, %s s\n", val(m.Ops), val(m.Objects), val(m.TimeSeconds))
	}
	sectionsText(p, in)
}

// sectionsText names the sections an instance's report lacks or holds
// without rows.
func sectionsText(p *printer, in *awr.Instance) {
	var absent, empty []string
	for _, s := range in.Sections {
		switch s.Status {
		case "absent":
			absent = append(absent, s.Name)
		case "empty":
			empty = append(empty, s.Name)
		}
	}
	if len(absent) > 0 {
		p.f("    absent from this report: %s\n", strings.Join(absent, "; "))
	}
	if len(empty) > 0 {
		p.f("    in the report without rows: %s\n", strings.Join(empty, "; "))
	}
}

// findingsText writes findings grouped by severity, critical first, rule
// ids lined up in one column: check's and awr's text share it.
func findingsText(p *printer, fs []rules.Finding) {
	width := 0
	for _, f := range fs {
		width = max(width, len(f.Rule))
	}
	for _, sev := range []rules.Severity{rules.Critical, rules.Warning, rules.Info} {
		var group []rules.Finding
		for _, f := range fs {
			if f.Severity == sev {
				group = append(group, f)
			}
		}
		if len(group) == 0 {
			continue
		}
		p.f("\n%s (%d)\n", strings.ToUpper(sev.String()), len(group))
		for _, f := range group {
			p.f("  %-*s  %s: %s\n", width, f.Rule, f.Object, f.Message)
			for i, ev := range f.Evidence {
				label := "evidence:"
				if i > 0 {
					label = ""
				}
				p.f("      %-9s %s\n", label, evidence(ev))
			}
			p.f("      %-9s %s\n", "fix:", f.Fix)
			p.f("      %-9s %s\n", "source:", f.Source)
		}
	}
}

// AWRDiffText writes `interlink awr diff`: per instance, every metric
// before and after with its ratio (and, with several reports per side,
// the interval and p-value) and the verdict.
func AWRDiffText(w io.Writer, d *awr.Diff) error {
	p := &printer{w: w}
	p.f("interlink awr diff: %d report(s) before, %d after\n", len(d.Before), len(d.After))
	for _, f := range d.Before {
		p.f("  before: %s\n", f)
	}
	for _, f := range d.After {
		p.f("  after:  %s\n", f)
	}
	p.f("  %s\n", d.Note)
	mixed := d.Mixed()
	if mixed {
		p.f("  the reports are of %d database(s), compared apart (--any-db):\n", len(d.Databases))
		for _, db := range d.Databases {
			p.f("    %s (DB id %s, release %s): %d report(s) before, %d after\n", orDash(db.Name), orDash(db.ID), orDash(strings.Join(db.Releases, ", ")), db.Before, db.After)
		}
		for _, u := range d.Unmatched() {
			p.f("  note: %s\n", u)
		}
	}
	for _, in := range d.Instances {
		if mixed {
			p.f("\ndatabase %s (DB id %s), instance %d %s\n", orDash(in.DBName), orDash(in.DBID), in.Number, orDash(in.Name))
		} else {
			p.f("\ninstance %d %s\n", in.Number, orDash(in.Name))
		}
		tw := tabwriter.NewWriter(p, 0, 0, 2, ' ', 0)
		if d.OneSample {
			cleanf(tw, "  METRIC\tUNIT\tBEFORE\tAFTER\tRATIO\tCHANGE\tVERDICT\n")
		} else {
			cleanf(tw, "  METRIC\tUNIT\tBEFORE (MEDIAN)\tAFTER (MEDIAN)\tRATIO\t%s CI OF THE RATIO\tP\tVERDICT\n", stats.Pct(d.Confidence))
		}
		for _, m := range in.Metrics {
			ratio, change := "-", "-"
			if m.Ratio != nil {
				ratio = strconv.FormatFloat(*m.Ratio, 'f', 3, 64)
				change = fmt.Sprintf("%+.1f %%", (*m.Ratio-1)*100)
			}
			v := m.Verdict
			if m.Better != "" {
				v += " (" + m.Better + " is better)"
			}
			if d.OneSample {
				cleanf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\n", m.Metric, m.Unit, fnum(m.MedianBefore), fnum(m.MedianAfter), ratio, change, v)
				continue
			}
			ci, pv := "-", "-"
			if m.RatioCI != nil {
				ci = fmt.Sprintf("%.3f to %.3f", m.RatioCI.Low, m.RatioCI.High) + m.RatioCI.LevelNote()
			}
			if m.P != nil {
				pv = fmt.Sprintf("%.3g", *m.P)
				if m.PHolm != nil {
					pv += fmt.Sprintf(" (Holm %.3g)", *m.PHolm)
				}
			}
			cleanf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", m.Metric, m.Unit, fnum(m.MedianBefore), fnum(m.MedianAfter), ratio, ci, pv, v)
		}
		tw.Flush()
	}
	p.f("\nsummary: %d better, %d worse\n", d.Improved, d.Worsened)
	return p.err
}

// fnum formats x with at most six significant digits and no exponent:
// 0.00751333, 1284114.2, 3.8.
func fnum(x float64) string {
	r, err := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 6, 64), 64)
	if err != nil {
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	if r >= 1e6 || r <= -1e6 {
		r = x // keep integers and large rates whole
	}
	return strconv.FormatFloat(r, 'f', -1, 64)
}
