package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/interlink/interlink/internal/inventory"
	"github.com/interlink/interlink/internal/rules"
	"github.com/interlink/interlink/internal/termtext"
	"github.com/interlink/interlink/internal/units"
)

// CheckText writes the human report of `interlink check`: the node, the
// interfaces, the findings grouped by severity (each with its evidence, fix
// and source), the sections and the summary. Every string argument goes
// through termtext.Clean on its way out: hostnames, interface names, mount
// table fields, evidence and paths come from the audited tree or bundle,
// which may hold terminal escape sequences.
func CheckText(w io.Writer, r *rules.Result) error {
	p := &printer{w: w}
	n := r.Node
	p.f("interlink check: %s", orDash(n.Hostname))
	if n.OS != "" {
		p.f(", %s", n.OS)
	}
	if n.Kernel != "" {
		p.f(", kernel %s", n.Kernel)
	}
	p.f("\nroot %s, %s\n", n.Root, n.Time.Format(time.RFC3339))
	switch r.Interconnect.From {
	case "flag":
		p.f("interconnect: %s (--interconnect)\n", strings.Join(r.Interconnect.Interfaces, ", "))
	case "gpnp":
		p.f("interconnect: %s (GPnP profile %s)\n", strings.Join(r.Interconnect.Interfaces, ", "), r.Interconnect.File)
	default:
		p.f("interconnect: unknown (no --interconnect, no readable GPnP profile): interconnect rules skipped\n")
	}
	interfaces(p, r)
	mounts(p, r)
	dnfs(p, r)
	counters(p, r.Inventory)
	host(p, r.Inventory)

	findingsText(p, r.Findings)

	p.f("\nsections:\n")
	tw := tabwriter.NewWriter(p, 0, 0, 2, ' ', 0)
	for _, s := range r.Inventory.Sections {
		cleanf(tw, "  %s\t%s\t%s\n", s.Name, s.Status, s.Detail)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	s := r.Summary
	p.f("\nsummary: %d critical, %d warning, %d info: %s", s.Critical, s.Warning, s.Info, s.Status)
	if len(s.NotFullyRead) > 0 {
		p.f(" (not fully read: %s)", strings.Join(s.NotFullyRead, ", "))
	}
	p.f("\n")
	return p.err
}

func interfaces(p *printer, r *rules.Result) {
	inv := r.Inventory
	if len(inv.Interfaces) == 0 {
		return
	}
	ic := map[string]bool{}
	for _, n := range r.Interconnect.Interfaces {
		ic[n] = true
	}
	p.f("\n")
	tw := tabwriter.NewWriter(p, 0, 0, 2, ' ', 0)
	cleanf(tw, "  INTERFACE\tKIND\tDRIVER\tMTU\tSTATE\tSPEED\tMASTER\tPERSISTED MTU\tADDRESSES\n")
	for _, ifc := range inv.Interfaces {
		name := ifc.Name
		if ic[name] {
			name += " *"
		}
		kind := ifc.Kind
		if ifc.Kind != ifc.Type {
			kind += " (" + ifc.Type + ")"
		}
		if ifc.Bond != nil {
			kind += " " + ifc.Bond.Mode
		}
		speed := "-"
		if ifc.SpeedBitsPerSec > 0 {
			speed = units.FormatRate(float64(ifc.SpeedBitsPerSec))
		}
		var persisted []string
		for _, pc := range inv.PersistedFor(ifc.Name) {
			m := "unset"
			if pc.MTU > 0 {
				m = fmt.Sprint(pc.MTU)
			}
			persisted = append(persisted, m+" "+pc.Format)
		}
		addrs := make([]string, 0, len(ifc.Addresses))
		for _, a := range ifc.Addresses {
			if !strings.HasPrefix(a, "fe80:") {
				addrs = append(addrs, a)
			}
		}
		cleanf(tw, "  %s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n", name, kind, orDash(ifc.Driver), ifc.MTU, orDash(ifc.OperState), speed,
			orDash(ifc.Master), orDash(strings.Join(persisted, ", ")), orDash(strings.Join(addrs, " ")))
	}
	tw.Flush()
	if len(r.Interconnect.Interfaces) > 0 {
		p.f("  (* interconnect)\n")
	}
}

// mounts prints the NFS mounts with the options that decide the database
// rules and the role each was judged with.
func mounts(p *printer, r *rules.Result) {
	inv := r.Inventory
	if len(inv.Mounts) == 0 {
		return
	}
	p.f("\n")
	tw := tabwriter.NewWriter(p, 0, 0, 2, ' ', 0)
	cleanf(tw, "  NFS MOUNT\tDEVICE\tVERS\tPROTO\tHARD\tRSIZE/WSIZE\tATTR CACHE\tROLE\tTABLES\n")
	for i, m := range inv.Mounts {
		o := m.Options()
		vers, proto, hard, size, ac := "-", "-", "-", "-", "-"
		if o != nil {
			vers, proto, hard = orDash(o.Vers), orDash(o.Proto), "hard"
			if o.Soft {
				hard = "soft"
			}
			if o.RsizeBytes > 0 || o.WsizeBytes > 0 {
				size = fmt.Sprintf("%d/%d", o.RsizeBytes, o.WsizeBytes)
			}
			switch {
			case o.NoAC:
				ac = "noac"
			case o.AttrCacheOff():
				ac = "off (actimeo=0)"
			default:
				ac = "on"
			}
		}
		role := "-"
		if i < len(r.MountRoles) && r.MountRoles[i].Role != "" {
			role = string(r.MountRoles[i].Role)
		}
		var tables []string
		if m.Runtime != nil {
			tables = append(tables, m.Runtime.File)
		}
		if m.Static != nil {
			tables = append(tables, m.Static.File)
		}
		cleanf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", m.MountPoint, m.Device, vers, proto, hard, size, ac, role,
			orDash(strings.Join(tables, " ")))
	}
	tw.Flush()
}

// counters prints the error counters that are not zero: as rates with an
// interval, otherwise as totals since boot that no rule judges.
func counters(p *printer, inv *inventory.Inventory) {
	c := inv.Counters
	if c == nil {
		return
	}
	var parts []string
	add := func(label string, cnt inventory.Counter) {
		if strings.HasSuffix(cnt.Name, "packets") || cnt.Name == "InDatagrams" || cnt.Name == "ReasmReqds" || cnt.Name == "ReasmOKs" || cnt.Name == "FragCreates" {
			return // volume, not trouble
		}
		switch {
		case c.IntervalNs > 0 && cnt.PerSec != nil && *cnt.Delta > 0:
			parts = append(parts, fmt.Sprintf("%s %+d (%.1f/s)", label, *cnt.Delta, *cnt.PerSec))
		case c.IntervalNs == 0 && cnt.Total > 0:
			parts = append(parts, fmt.Sprintf("%s %d", label, cnt.Total))
		}
	}
	for _, k := range c.Kernel {
		add(k.Group+" "+k.Name, k)
	}
	for _, ic := range c.Interfaces {
		for _, k := range ic.Counters {
			add(ic.Interface+" "+k.Name, k)
		}
	}
	if c.IntervalNs > 0 {
		p.f("\ncounters over %s: ", c.IntervalNs.Round(time.Millisecond))
		if len(parts) == 0 {
			p.f("no error counter moved\n")
			return
		}
	} else {
		p.f("\ncounters (totals since boot, not judged; use --interval 5s to judge rates): ")
		if len(parts) == 0 {
			p.f("all error counters are zero\n")
			return
		}
	}
	p.f("%s\n", strings.Join(parts, ", "))
}

func evidence(ev rules.Evidence) string {
	s := ev.What + " = " + ev.Value
	if ev.File != "" {
		s += "  (" + ev.File + ")"
	}
	return s
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// printer remembers the first write error so the renderer can check once.
type printer struct {
	w   io.Writer
	err error
}

func (p *printer) f(format string, a ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, cleanArgs(a)...)
	}
}

// cleanf is fmt.Fprintf with every string argument cleaned; the format
// itself is the program's own text.
func cleanf(w io.Writer, format string, a ...any) {
	fmt.Fprintf(w, format, cleanArgs(a)...)
}

// cleanArgs passes every string argument through termtext.Clean, so no
// value taken from a tree reaches the terminal raw (tabs and newlines in
// it are escaped too, and cannot break the columns).
func cleanArgs(a []any) []any {
	out := make([]any, len(a))
	for i, v := range a {
		if s, ok := v.(string); ok {
			v = termtext.Clean(s)
		}
		out[i] = v
	}
	return out
}

func (p *printer) Write(b []byte) (int, error) {
	if p.err != nil {
		return 0, p.err
	}
	n, err := p.w.Write(b)
	p.err = err
	return n, err
}
