package report

import (
	"fmt"
	"html/template"
	"math"
	"time"

	"github.com/interlink/interlink/internal/traffic"
	"github.com/interlink/interlink/internal/units"
)

// usText prints a time in us, or in ms from 10 ms on.
func usText(ns float64) string {
	if math.Abs(ns) >= 1e7 {
		return fmt.Sprintf("%.1f ms", ns/1e6)
	}
	return fmt.Sprintf("%.1f us", ns/1e3)
}

func secText(v float64) string { return fmt.Sprintf("%g s", v) }

func rateText(v float64) string { return units.FormatRate(v) }

// benchSection renders one bench run: the summary per direction, the
// per-interval rate (and round trips) as time series, the round-trip
// distribution, and packets and CPU per message.
func benchSection(r *traffic.Report) section {
	s := section{Kind: "bench", Title: fmt.Sprintf("bench %s: %s to %s", r.Spec.Mode, r.Peer, r.Agent)}
	if r.Result == nil {
		s.Status, s.Badge = "unknown", "no result"
		return s
	}
	s.Status, s.Badge = benchStatus(r)
	if r.Interrupted {
		s.note("Interrupted: the figures cover the time until then.")
	}
	s.para("%s", benchSpecLine(r.Spec))
	cpuLatencyBlock(&s, r.CPULatency)
	if !r.Start.IsZero() {
		s.note("Started %s.", r.Start.Format(time.RFC3339))
	}
	s.table(flowTable(r.Spec.Mode, r.Flows))
	for _, f := range r.Flows {
		if fl := f.Summary.Flow; fl != nil {
			s.note("%s", flowNote(f.Direction, fl))
		}
		if n := f.Summary.PacketsNote(); n != "" && r.Spec.Mode != traffic.ModeTCP { // as in the text
			s.note("%s: %s.", f.Direction, n)
		}
	}
	splitSection(&s, r.Flows)
	benchCharts(&s, r.Spec.Mode, r.Flows, "")
	// What failed the run and the limits that held it back are part of its
	// result, as in the text (FAILED, WARNING: limited by).
	var problems []string
	for _, p := range r.Problems {
		problems = append(problems, fmt.Sprintf("%s %s: %s", p.Direction, p.Problem, p.Detail))
	}
	for _, l := range r.LimitedBy {
		problems = append(problems, fmt.Sprintf("limited by %s: %s", l.Limit, l.Detail))
	}
	if len(problems) > 0 {
		s.heading("Problems")
		s.list(problems)
	}
	return s
}

// benchStatus is the section's status and badge: the run's verdict, or
// why it has none (the same verdict gives the same exit code in text).
func benchStatus(r *traffic.Report) (status, badge string) {
	switch {
	case r.Verdict == traffic.VerdictFailed:
		return "critical", "failed"
	case r.Interrupted:
		return "unknown", "interrupted"
	case r.Verdict == traffic.VerdictLimited:
		return "warning", "limited"
	case r.Verdict == traffic.VerdictOK:
		return "ok", "ok"
	}
	return "", "" // a document from before verdicts: none to show
}

func benchSpecLine(sp traffic.Spec) string {
	n, _ := sp.Normalize()
	switch n.Mode {
	case traffic.ModeTCP:
		return fmt.Sprintf("TCP: %d stream(s) of %s writes for %s.", n.Parallel, units.FormatBytes(float64(n.Len)), n.Duration)
	case traffic.ModeUDP:
		pace := "unpaced, flow-controlled by the receiver"
		switch {
		case n.Paced():
			pace = "paced to " + units.FormatRate(float64(n.RateBitsPerSec))
		case n.NoFlow:
			pace = "unpaced, no flow control"
		}
		return fmt.Sprintf("UDP: %s datagrams, %s, for %s.", units.FormatBytes(float64(n.Len)), pace, n.Duration)
	case traffic.ModeBlocks:
		paced := ""
		if n.RequestsPerSec > 0 {
			paced = fmt.Sprintf(", paced to %g requests/s", n.RequestsPerSec)
		}
		return fmt.Sprintf("Blocks: %d B requests answered by %s blocks, %d outstanding%s, for %s.", n.Request, units.FormatBytes(float64(n.Block)), n.Outstanding, paced, n.Duration)
	}
	return fmt.Sprintf("mode %s", sp.Mode)
}

// flowNote says how flow control held an unpaced UDP flow and which end
// was the bottleneck.
func flowNote(d traffic.Direction, fl *traffic.FlowSummary) string {
	if fl.Abandoned != "" {
		return fmt.Sprintf("%s: flow control abandoned: %s.", d, fl.Abandoned)
	}
	return fmt.Sprintf("%s: flow control window %d datagrams; the sender waited on it %s %% of the run: the %s was the bottleneck.",
		d, fl.Window, units.FormatPercent(fl.WaitPercent, 1), fl.Bottleneck)
}

// flowTable is the summary of each direction, one row per flow.
func flowTable(mode traffic.Mode, flows []traffic.Flow) *table {
	t := &table{Head: []string{"direction", "delivered", "rate", "path MTU", "wire limit"}}
	switch mode {
	case traffic.ModeTCP:
		t.Head = append(t.Head, "retransmits")
	case traffic.ModeUDP:
		t.Head = append(t.Head, "sent / lost", "jitter")
	case traffic.ModeBlocks:
		t.Head = append(t.Head, "blocks/s", "lost", "rtt p50 / p99 / max")
	}
	t.Head = append(t.Head, "fragments/msg", "cpu per msg (client / agent)")
	for _, f := range flows {
		sm := f.Summary
		wire := "-"
		if sm.WireLimitBitsPerSec > 0 {
			wire = fmt.Sprintf("%s %% of %s", units.FormatPercent(sm.PercentOfWireLimit, 1), units.FormatRate(sm.WireLimitBitsPerSec))
		}
		r := []cell{{Text: string(f.Direction)}, {Text: units.FormatBytes(float64(sm.Bytes)), Class: "num"},
			{Text: units.FormatRate(sm.BitsPerSec), Class: "num"}, {Text: fmt.Sprint(sm.MTU), Class: "num"}, {Text: wire}}
		switch mode {
		case traffic.ModeTCP:
			r = append(r, cell{Text: fmt.Sprint(sm.Retransmits), Class: "num"})
		case traffic.ModeUDP:
			r = append(r, cell{Text: fmt.Sprintf("%d / %d (%.3f %%)", sm.Sent, sm.Lost, sm.LossPercent) + readShort(&sm), Class: "num"}, cell{Text: usText(float64(sm.Jitter)), Class: "num"})
		case traffic.ModeBlocks:
			rtt := "-"
			if p := sm.RTT; p != nil {
				rtt = fmt.Sprintf("%s / %s / %s", usText(float64(p.P50)), usText(float64(p.P99)), usText(float64(p.Max)))
			}
			r = append(r, cell{Text: fmt.Sprintf("%.0f", sm.PerSec), Class: "num"}, cell{Text: fmt.Sprintf("%d (%.3f %%)", sm.Lost, sm.LossPercent) + readShort(&sm), Class: "num"}, cell{Text: rtt, Class: "num"})
		}
		frag := "-"
		if mode != traffic.ModeTCP {
			frag = traffic.FormatRatio(sm.FragmentsPerMessage) // n/a where the kernel's counters lack it
		}
		cpu := "-"
		if sm.ClientCost.CPUNsPerMsg > 0 || sm.ServerCost.CPUNsPerMsg > 0 {
			cpu = fmt.Sprintf("%s / %s", usText(sm.ClientCost.CPUNsPerMsg), usText(sm.ServerCost.CPUNsPerMsg))
		}
		r = append(r, cell{Text: frag, Class: "num"}, cell{Text: cpu, Class: "num"})
		t.Rows = append(t.Rows, r)
	}
	return t
}

// benchCharts adds the time series, the round-trip distribution and the
// per-message bars of flows; prefix names the run in legends.
func benchCharts(s *section, mode traffic.Mode, flows []traffic.Flow, prefix string) {
	var rate, rtt []series
	for _, f := range flows {
		for _, sd := range []*traffic.Side{f.Client, f.Server} {
			if sd == nil || len(sd.Intervals) == 0 {
				continue
			}
			name := fmt.Sprintf("%s%s %s", prefix, f.Direction, sd.Role)
			sr := series{Name: name, Color: palette[len(rate)%len(palette)], Dash: sd == f.Server}
			var lat, p99 series
			lat = series{Name: name + " p50", Color: palette[len(rtt)%len(palette)]}
			p99 = series{Name: name + " p99", Color: lat.Color, Dash: true}
			for _, in := range sd.Intervals {
				x := in.End.Seconds()
				sr.X, sr.Y = append(sr.X, x), append(sr.Y, in.BitsPerSec)
				switch {
				case in.RTTPercentiles != nil:
					lat.X, lat.Y = append(lat.X, x), append(lat.Y, float64(in.RTTPercentiles.P50))
					p99.X, p99.Y = append(p99.X, x), append(p99.Y, float64(in.RTTPercentiles.P99))
				case in.RTT > 0:
					lat.Name = name + " smoothed RTT"
					lat.X, lat.Y = append(lat.X, x), append(lat.Y, float64(in.RTT))
				}
			}
			rate = append(rate, sr)
			if len(lat.X) > 0 {
				rtt = append(rtt, lat)
			}
			if len(p99.X) > 0 {
				rtt = append(rtt, p99)
			}
		}
	}
	if len(rate) > 0 {
		s.chart("Rate per interval as each end measured it (solid: this end, dashed: the agent).",
			lineChart("timeseries bench-rate", "rate per interval", rate, "seconds since start", "payload rate", secText, rateText))
	}
	if len(rtt) > 0 {
		s.chart("Round trip per interval.",
			lineChart("timeseries bench-rtt", "round trip per interval", rtt, "seconds since start", "round trip", secText, usText))
	}
	var cdf []series
	for _, f := range flows {
		if c, ok := rttCDF(prefix+string(f.Direction), f.Summary.RTT, palette[len(cdf)%len(palette)]); ok {
			cdf = append(cdf, c)
		}
	}
	if len(cdf) > 0 {
		s.chart("Round-trip distribution (CDF) through the measured percentiles: min, p50, p90, p99, p99.9, max.",
			cdfChart("cdf bench-cdf", cdf))
	}
	if mode != traffic.ModeTCP {
		var bars []bar
		for _, f := range flows {
			sm := f.Summary
			bars = append(bars, bar{Label: prefix + string(f.Direction) + " fragments/msg", Value: sm.FragmentsPerMessage, Text: traffic.FormatRatio(sm.FragmentsPerMessage), Color: palette[0]})
		}
		s.chart("IP packets each message travels in (1 = not fragmented).", barChart("bars bench-fragments", "fragments per message", bars))
	}
	if cpu := cpuBars(flows, prefix); len(cpu) > 0 {
		s.chart("CPU per message delivered (user + system of the test's threads), each end.", barChart("bars bench-cpu", "cpu per message", cpu))
	}
}

func cpuBars(flows []traffic.Flow, prefix string) []bar {
	var bars []bar
	for _, f := range flows {
		for i, c := range []traffic.Cost{f.Summary.ClientCost, f.Summary.ServerCost} {
			if c.CPUNsPerMsg <= 0 {
				continue
			}
			end := [2]string{"client", "agent"}[i]
			bars = append(bars, bar{Label: fmt.Sprintf("%s%s %s", prefix, f.Direction, end), Value: c.CPUNsPerMsg, Text: usText(c.CPUNsPerMsg), Color: palette[1+i]})
		}
	}
	return bars
}

// rttCDF turns the percentiles of a latency summary into CDF points, x
// as log10 of nanoseconds: a tail a hundred times the median stays
// readable (cdfChart labels the axis in time).
func rttCDF(name string, l *traffic.Latency, color string) (series, bool) {
	if l == nil || l.Count == 0 || l.Min <= 0 {
		return series{}, false
	}
	lg := func(ns int64) float64 { return math.Log10(float64(max(ns, 1))) }
	return series{Name: name, Color: color,
		X:     []float64{lg(l.Min), lg(l.P50), lg(l.P90), lg(l.P99), lg(l.P999), lg(l.Max)},
		Y:     []float64{0, 0.5, 0.9, 0.99, 0.999, 1},
		Marks: []string{"min", "p50", "p90", "p99", "p99.9", "max"}}, true
}

// cdfChart draws round-trip CDFs made by rttCDF, the time axis logarithmic.
func cdfChart(class string, cdf []series) template.HTML {
	return lineChart(class, "round-trip distribution", cdf, "round trip (logarithmic)", "fraction of messages",
		func(v float64) string { return usText(math.Pow(10, v)) }, func(v float64) string { return fmt.Sprintf("%.2f", v) })
}

// compareBars is a bar chart of one figure across labelled runs (the demo's
// 9000 and 1500 paths side by side).
func compareBars(class, label string, names []string, vals []float64, text func(float64) string) template.HTML {
	bars := make([]bar, len(names))
	for i := range names {
		bars[i] = bar{Label: names[i], Value: vals[i], Text: text(vals[i]), Color: palette[i%len(palette)]}
	}
	return barChart(class, label, bars)
}

// readShort says, after a flow's loss, how many datagrams an end read short
// (MSG_TRUNC): a UDP run counts them neither delivered nor lost, a blocks
// run's blocks lost to them are placed at the end, not in the network.
func readShort(sm *traffic.Summary) string {
	switch {
	case sm.Truncated > 0:
		return fmt.Sprintf("; %d read short (holding %d sent), not network loss", sm.Truncated, sm.Joined)
	case sm.LossBy != nil && sm.LossBy.Truncated > 0:
		return fmt.Sprintf("; %d read short at an end, not network loss", sm.LossBy.Truncated)
	}
	return ""
}
