package report

import (
	"fmt"
	"strings"
	"time"

	"github.com/interlink/interlink/internal/pmtu"
	"github.com/interlink/interlink/internal/rules"
	"github.com/interlink/interlink/internal/units"
)

// statusClass maps check's OK/WARNING/CRITICAL to the page's classes.
func statusClass(s string) string {
	switch s {
	case "OK":
		return "ok"
	case "WARNING":
		return "warning"
	case "CRITICAL":
		return "critical"
	}
	return "unknown"
}

// checkSection renders an audit: the node, its interfaces, and the
// findings grouped by severity, each with its evidence, fix and source.
func checkSection(r *rules.Result, title string) section {
	n := r.Node
	if title == "" {
		title = "check: " + orDash(n.Hostname)
	}
	sm := r.Summary
	s := section{Kind: "check", Title: title, Status: statusClass(sm.Status),
		Badge: fmt.Sprintf("%s: %d critical, %d warning, %d info", sm.Status, sm.Critical, sm.Warning, sm.Info)}
	what := orDash(n.Hostname)
	if n.OS != "" {
		what += ", " + n.OS
	}
	if n.Kernel != "" {
		what += ", kernel " + n.Kernel
	}
	s.para("%s; root %s, read %s.", what, n.Root, n.Time.Format(time.RFC3339))
	switch r.Interconnect.From {
	case "flag":
		s.para("Interconnect: %s (--interconnect).", strings.Join(r.Interconnect.Interfaces, ", "))
	case "gpnp":
		s.para("Interconnect: %s (GPnP profile %s).", strings.Join(r.Interconnect.Interfaces, ", "), r.Interconnect.File)
	default:
		s.note("Interconnect unknown (no --interconnect, no readable GPnP profile): interconnect rules were skipped.")
	}
	if len(sm.NotFullyRead) > 0 {
		s.note("Not fully read: %s; rules about them may have stayed silent.", strings.Join(sm.NotFullyRead, ", "))
	}
	if inv := r.Inventory; inv != nil && len(inv.Interfaces) > 0 {
		ic := map[string]bool{}
		for _, x := range r.Interconnect.Interfaces {
			ic[x] = true
		}
		t := &table{Head: []string{"interface", "kind", "driver", "MTU", "state", "speed", "master", "addresses"}}
		for _, ifc := range inv.Interfaces {
			name := ifc.Name
			if ic[name] {
				name += " (interconnect)"
			}
			speed := "-"
			if ifc.SpeedBitsPerSec > 0 {
				speed = units.FormatRate(float64(ifc.SpeedBitsPerSec))
			}
			t.Rows = append(t.Rows, []cell{{Text: name}, {Text: ifc.Kind}, {Text: orDash(ifc.Driver)}, {Text: fmt.Sprint(ifc.MTU), Class: "num"},
				{Text: orDash(ifc.OperState)}, {Text: speed}, {Text: orDash(ifc.Master)}, {Text: strings.Join(ifc.Addresses, " ")}})
		}
		s.heading("Interfaces")
		s.table(t)
	}
	if inv := r.Inventory; inv != nil {
		if lines := hostLines(inv); len(lines) > 0 {
			s.heading("Host: how it wakes for a block")
			s.list(lines)
		}
	}
	for _, sev := range []rules.Severity{rules.Critical, rules.Warning, rules.Info} {
		var group []rules.Finding
		for _, f := range r.Findings {
			if f.Severity == sev {
				group = append(group, f)
			}
		}
		if len(group) == 0 {
			continue
		}
		s.heading(fmt.Sprintf("%s (%d)", strings.ToUpper(sev.String()), len(group)))
		for i := range group {
			s.Blocks = append(s.Blocks, block{Finding: &group[i]})
		}
	}
	if len(r.Findings) == 0 {
		s.para("No findings.")
	}
	return s
}

// pmtuSection renders `interlink pmtu`: each direction with its verdict
// and sizes, and a bar per direction against the interface MTU.
func pmtuSection(r *pmtu.Report) section {
	s := section{Kind: "pmtu", Title: fmt.Sprintf("pmtu %s (%s probes)", r.Peer, r.Method), Status: r.Status, Badge: r.Status}
	if r.Target != "" {
		s.para("Target %s.", r.Target)
	}
	t := &table{Head: []string{"direction", "from -> to", "verdict", "path MTU", "local MTU", "peer MTU", "expect", "probes", "detail"}}
	var bars []bar
	for _, d := range r.Directions {
		exp, cls := "-", ""
		if d.MeetsExpect != nil {
			exp, cls = fmt.Sprintf("meets %d", r.Expect), "ok"
			if !*d.MeetsExpect {
				exp, cls = fmt.Sprintf("BELOW %d", r.Expect), "critical"
			}
		}
		vcls := "ok"
		if d.Verdict != pmtu.OK {
			vcls = "warning"
		}
		t.Rows = append(t.Rows, []cell{{Text: d.Direction}, {Text: d.From + " -> " + d.To}, {Text: string(d.Verdict), Class: vcls},
			{Text: mtuText(d.PathMTU), Class: "num"}, {Text: fmt.Sprint(d.LocalMTU), Class: "num"}, {Text: mtuText(d.PeerMTU), Class: "num"},
			{Text: exp, Class: cls}, {Text: fmt.Sprint(d.Probes), Class: "num"}, {Text: d.Line() + "; " + d.Detail}})
		col := styleOK.fill
		if d.Verdict != pmtu.OK || (d.MeetsExpect != nil && !*d.MeetsExpect) {
			col = styleHole.fill
		}
		bars = append(bars, bar{Label: d.Direction + " path MTU", Value: float64(d.PathMTU), Text: fmt.Sprintf("%s (%s)", mtuText(d.PathMTU), d.Verdict), Color: col},
			bar{Label: d.Direction + " sending interface", Value: float64(d.LocalMTU), Text: fmt.Sprint(d.LocalMTU), Color: "#cfd8dc"})
	}
	s.table(t)
	if len(bars) > 0 {
		s.chart("Largest packet that arrived, per direction, against the sending interface's MTU.", barChart("bars pmtu-bars", "path MTU per direction", bars))
	}
	if r.Error != "" {
		s.note("Error: %s", r.Error)
	}
	return s
}
