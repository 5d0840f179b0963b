package report

import (
	"fmt"
	"strings"
	"time"

	"github.com/interlink/interlink/internal/demo"
	"github.com/interlink/interlink/internal/traffic"
	"github.com/interlink/interlink/internal/units"
)

// demoSections tells the demo's story as sections: the lab, the audits
// (the hosts look fine), the mesh (the paths say otherwise), blocks and a
// TCP stream over a 9000 and a 1500 path, Cache Fusion across every node,
// and what to do.
func demoSections(r *demo.Result) []section {
	out := []section{demoLabSection(r), demoCheckSection(r)}
	if r.Mesh != nil {
		ms := meshSection(r.Mesh, fmt.Sprintf("The paths say otherwise: mesh --expect %d", demo.ExpectMTU))
		if d := r.Diagnosis; d != nil {
			for _, p := range d.Ports {
				ms.para("Every path to and from %s (%d of %d) is a %s at %d: its %s says MTU %d, but its switch port %s drops larger frames without an ICMP error.",
					p.Node, p.Paths, d.Paths, p.Verdict, p.PathMTU, p.Interface, p.InterfaceMTU, p.SwitchPort)
			}
			if d.TracepathMTU > 0 {
				ms.para("No ICMP error came back on any problem path, so tracepath (which learns only from ICMP) would have said \"pmtu %d\".", d.TracepathMTU)
			}
		}
		out = append(out, ms)
	}
	if len(r.Blocks) > 0 {
		out = append(out, demoBenchSection("What jumbo frames change for blocks: bench --mode blocks, one block in flight", r.Blocks, true))
	}
	if len(r.Loaded) > 0 {
		out = append(out, demoBenchSection(fmt.Sprintf("The same blocks under load: %d in flight", demo.LoadedOutstanding), r.Loaded, true))
	}
	if len(r.TCP) > 0 {
		out = append(out, demoBenchSection("For contrast, one TCP stream: bench --mode tcp", r.TCP, false))
	}
	if g := r.GC; g != nil && g.Result != nil {
		gs := gcSection(g.Result)
		gs.Title = "What the database feels: Cache Fusion across every node (bench --mode gc)"
		for _, l := range g.Story(r.Diagnosis).Lines() {
			gs.para("%s", l)
		}
		out = append(out, gs)
	}
	adv := section{Kind: "demo", Title: "What to do"}
	adv.list(r.Advice)
	if len(r.Advice) == 0 {
		adv.para("No advice: the run did not get that far.")
	}
	return append(out, adv)
}

// demoLabSection shows the lab the demo built: each node's links with
// the host's and the switch port's MTU, and the agents it started.
func demoLabSection(r *demo.Result) section {
	lab := section{Kind: "demo", Title: "lab demo: the lab"}
	if r.Interrupted {
		lab.Status, lab.Badge = "unknown", "interrupted"
	}
	lab.para("Lab %s built in %s; demo run took %s. Every figure below was measured in this run.", r.Lab, r.LabUp.Round(10*time.Millisecond), r.Elapsed.Round(100*time.Millisecond))
	if r.Topology != nil {
		t := &table{Head: []string{"node", "link", "switch", "addresses", "host MTU", "switch port MTU"}}
		for _, n := range r.Topology.Nodes {
			for _, l := range n.Links {
				var addrs []string
				for _, a := range l.Addresses {
					addrs = append(addrs, a.String())
				}
				port := cell{Text: fmt.Sprint(l.PortMTU), Class: "num"}
				if l.PortMTU != l.MTU {
					port.Class = "num critical"
				}
				t.Rows = append(t.Rows, []cell{{Text: n.Name}, {Text: l.Name}, {Text: l.Switch}, {Text: strings.Join(addrs, " ")}, {Text: fmt.Sprint(l.MTU), Class: "num"}, port})
			}
		}
		lab.table(t)
	}
	var agents []string
	for _, a := range r.Agents {
		agents = append(agents, fmt.Sprintf("%s: interlink agent at %s (pid %d)", a.Node, a.Address, a.PID))
	}
	lab.list(agents)
	lab.list(r.Errors)
	return lab
}

// demoCheckSection shows every node's audit and the findings of warning
// or worse with the nodes they were found on.
func demoCheckSection(r *demo.Result) section {
	chk := section{Kind: "check", Title: "Every host looks fine: check --interconnect on each node"}
	t := &table{Head: []string{"node", "interconnect", "status", "critical", "warning", "info"}}
	for _, c := range r.Checks {
		if c.Result == nil {
			t.Rows = append(t.Rows, row(c.Node, c.Interconnect, "not run: "+c.Error, "-", "-", "-"))
			continue
		}
		sm := c.Result.Summary
		t.Rows = append(t.Rows, []cell{{Text: c.Node}, {Text: c.Interconnect}, {Text: sm.Status, Class: statusClass(sm.Status)},
			{Text: fmt.Sprint(sm.Critical), Class: "num"}, {Text: fmt.Sprint(sm.Warning), Class: "num"}, {Text: fmt.Sprint(sm.Info), Class: "num"}})
	}
	chk.table(t)
	fs := demo.Findings(r.Checks)
	if len(fs) == 0 {
		chk.para("No warning or critical finding on any node.")
	} else {
		chk.heading("Findings of warning or worse, with the nodes they were found on")
	}
	for _, f := range fs {
		fd := f.Finding
		fd.Object += " (on " + strings.Join(f.Nodes, ", ") + ")"
		chk.Blocks = append(chk.Blocks, block{Finding: &fd})
	}
	return chk
}

// demoBenchSection compares the demo's runs (the same pair of nodes over a
// 9000 and a 1500 path) figure by figure.
func demoBenchSection(title string, runs []demo.Bench, blocks bool) section {
	s := section{Kind: "bench", Title: title}
	var names []string
	var sums []*traffic.Summary
	for _, b := range runs {
		if b.Error != "" {
			s.note("%s: %s", b.Label, b.Error)
		}
		if sm := b.Summary(); sm != nil {
			names = append(names, fmt.Sprintf("%s (%s -> %s)", b.Label, b.From, b.To))
			sums = append(sums, sm)
		}
	}
	if len(sums) == 0 {
		return s
	}
	fig := func(f func(*traffic.Summary) float64) []float64 {
		v := make([]float64, len(sums))
		for i, sm := range sums {
			v[i] = f(sm)
		}
		return v
	}
	if !blocks {
		s.chart("Throughput of one TCP stream.", compareBars("bars demo-tcp", "throughput", names, fig(func(sm *traffic.Summary) float64 { return sm.BitsPerSec }), rateText))
		s.chart("Retransmitted segments.", compareBars("bars demo-retrans", "retransmits", names, fig(func(sm *traffic.Summary) float64 { return float64(sm.Retransmits) }), func(v float64) string { return fmt.Sprintf("%.0f", v) }))
		return s
	}
	s.chart("Blocks per second.", compareBars("bars demo-rate", "blocks per second", names, fig(func(sm *traffic.Summary) float64 { return sm.PerSec }), func(v float64) string { return fmt.Sprintf("%.0f/s", v) }))
	s.chart("IP packets each block travels in (1 = not fragmented).", compareBars("bars demo-fragments", "fragments per block", names,
		fig(func(sm *traffic.Summary) float64 { return sm.FragmentsPerMessage }), traffic.FormatRatio))
	s.chart("CPU per block at the requester (user + system of its threads).", compareBars("bars demo-cpu", "cpu per block", names,
		fig(func(sm *traffic.Summary) float64 { return sm.ClientCost.CPUNsPerMsg }), usText))
	var cdf []series
	for i, sm := range sums {
		if c, ok := rttCDF(names[i], sm.RTT, palette[i%len(palette)]); ok {
			cdf = append(cdf, c)
		}
	}
	if len(cdf) > 0 {
		s.chart("Round-trip distribution (CDF) through the measured percentiles.",
			cdfChart("cdf demo-cdf", cdf))
	}
	t := &table{Head: append([]string{""}, names...)}
	add := func(name string, f func(*traffic.Summary) string) {
		r := []cell{{Text: name}}
		for _, sm := range sums {
			r = append(r, cell{Text: f(sm), Class: "num"})
		}
		t.Rows = append(t.Rows, r)
	}
	add("delivered", func(sm *traffic.Summary) string { return units.FormatBytes(float64(sm.Bytes)) })
	add("blocks lost", func(sm *traffic.Summary) string { return fmt.Sprintf("%d of %d", sm.Lost, sm.Sent) })
	add("packets per block, both ways", func(sm *traffic.Summary) string { return traffic.FormatRatio(sm.PacketsPerMessage) })
	add("fragments reassembled", func(sm *traffic.Summary) string { return units.FormatCount(sm.ReasmReqds) })
	add("softirq per block (host)", func(sm *traffic.Summary) string { return usText(sm.ClientCost.SoftIRQNsPerMsg) })
	s.table(t)
	s.note("One run each on a shared machine (veth instead of NICs): rates and times vary between runs, packets and fragments per block do not.")
	return s
}
