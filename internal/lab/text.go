package lab

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/interlink/interlink/internal/ebpf"
	"github.com/interlink/interlink/internal/textout"
	"github.com/interlink/interlink/internal/units"
)

// DocSchema names the JSON document of `lab up`, `lab status` and `lab list`.
const DocSchema = "interlink.lab/v1"

// Doc is the JSON document of `lab up`, `lab status` and `lab list`.
type Doc struct {
	Schema   string    `json:"schema"`
	Builtins []Builtin `json:"builtins,omitempty"` // lab list only
	Labs     []*Status `json:"labs"`
}

// NewDoc returns an empty document.
func NewDoc() *Doc { return &Doc{Schema: DocSchema, Labs: []*Status{}} }

// WriteText writes the lab as `lab status` shows it: switches, every
// node's links with MTU, port MTU, rate, state and addresses, routes,
// services, namespaces and problems.
func (s *Status) WriteText(out io.Writer) error {
	w := textout.New(out)
	fmt.Fprintf(w, "lab %s: %s (%s, since %s)\n", s.Name, s.State, s.File, s.Created.Format("2006-01-02 15:04:05 MST"))
	for _, sw := range s.Switches {
		fmt.Fprintf(w, "  switch %s: MTU %d\n", sw.Name, sw.MTU)
	}
	writeLinks(w, s)
	for _, n := range s.Nodes {
		if len(n.Routes) == 0 {
			continue
		}
		rs := make([]string, len(n.Routes))
		for i, r := range n.Routes {
			rs[i] = fmt.Sprintf("%s via %s", r.To, r.Via)
		}
		fmt.Fprintf(w, "  routes %s: %s\n", n.Name, strings.Join(rs, ", "))
	}
	for _, n := range s.Nodes {
		if v := n.VM; v != nil {
			kernel, accel := orNA(v.Kernel), orNA(v.Accel)
			if v.Release != "" {
				kernel = v.Release + " (" + v.Kernel + ")"
			}
			fmt.Fprintf(w, "  vm %s: %s, kernel %s, %s, %s, %d CPU, pid %s, console %s\n", n.Name, v.State, kernel,
				accel, units.FormatBytes(float64(v.MemoryBytes)), v.CPUs, pidText(v.PID), v.Console)
		}
	}
	writeServices(w, s)
	fmt.Fprintf(w, "  namespaces: %s (switches), %s.NODE (nodes)\n", s.Namespace, s.Namespace)
	for _, p := range s.Problems {
		fmt.Fprintf(w, "  problem: %s\n", p)
	}
	return w.Err()
}

// writeLinks prints the table of the nodes' links, with a LOSS column when
// a port of the lab drops frames at random, and then what each port's
// classifier dropped, for the ports that dropped any.
func writeLinks(w io.Writer, s *Status) {
	lossy := false
	for _, n := range s.Nodes {
		for _, l := range n.Links {
			lossy = lossy || l.LossPercent > 0
		}
	}
	lossHead, lossCol := "", func(LinkStatus) string { return "" }
	if lossy {
		lossHead = "\tLOSS"
		lossCol = func(l LinkStatus) string {
			if l.LossPercent == 0 {
				return "\t-"
			}
			return "\t" + strconv.FormatFloat(l.LossPercent, 'g', -1, 64) + "%"
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  NODE\tLINK\tSWITCH\tMTU\tPORT MTU\tRATE%s\tSTATE\tADDRESSES\n", lossHead)
	var drops []string
	for _, n := range s.Nodes {
		name := n.Name
		if n.Forward {
			name += " (router)"
		}
		for _, l := range n.Links {
			rate := "-"
			if l.RateBitsPerSec > 0 {
				rate = units.FormatRate(float64(l.RateBitsPerSec))
			}
			addrs := make([]string, len(l.Addresses))
			for i, a := range l.Addresses {
				addrs[i] = a.String()
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%d\t%d\t%s%s\t%s\t%s\n", name, l.Name, l.Switch, l.MTU, l.PortMTU, rate, lossCol(l), l.State, strings.Join(addrs, " "))
			name = ""
			if d := portDrops(l.PortFilter); d != "" {
				drops = append(drops, fmt.Sprintf("  port %s (%s %s) dropped: %s", l.Port, n.Name, l.Name, d))
			}
		}
		if len(n.Links) == 0 {
			fmt.Fprintf(tw, "  %s\t-\t\t\t\t\t\t%s\n", name, strings.Repeat("\t", strings.Count(lossHead, "\t")))
		}
	}
	tw.Flush()
	for _, d := range drops {
		fmt.Fprintln(w, d)
	}
}

// portDrops says what a port's classifier dropped in each direction, or
// "" when it dropped nothing.
func portDrops(pf *PortFilter) string {
	if pf == nil {
		return ""
	}
	var parts []string
	for _, d := range []struct {
		what string
		c    *ebpf.Counters
	}{{"from the node", pf.FromNode}, {"to the node", pf.ToNode}} {
		if d.c == nil || d.c.DroppedMTU+d.c.DroppedLoss == 0 {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %d over the MTU and %d at random, of %d frames", d.what, d.c.DroppedMTU, d.c.DroppedLoss, d.c.Frames))
	}
	return strings.Join(parts, "; ")
}

// writeServices prints the nodes' services, the DSNs, NFS URLs and the token file.
func writeServices(w io.Writer, s *Status) {
	var dsns []string
	token := ""
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	header := false
	for _, n := range s.Nodes {
		for _, sv := range n.Services {
			if !header {
				fmt.Fprintln(tw, "  NODE\tSERVICE\tSTATE\tPID\tADDRESS\tDETAIL")
				header = true
			}
			pid := "-"
			if sv.PID != 0 {
				pid = fmt.Sprint(sv.PID)
			}
			detail := sv.Detail
			if sv.Reason != "" {
				detail = sv.Reason // why it is not running says more than what it is
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\n", n.Name, strings.TrimSpace(sv.Kind+" "+sv.Role), sv.State, pid, sv.Address, detail)
			if sv.DSN != "" {
				dsns = append(dsns, fmt.Sprintf("  dsn %s: %s", n.Name, sv.DSN))
			}
			if sv.URL != "" {
				dsns = append(dsns, fmt.Sprintf("  nfs %s: %s", n.Name, sv.URL))
			}
			if sv.TokenFile != "" {
				token = sv.TokenFile
			}
		}
	}
	tw.Flush()
	for _, d := range dsns {
		fmt.Fprintln(w, d)
	}
	if token != "" {
		fmt.Fprintf(w, "  agent token: %s\n", token)
	}
}

// orNA is s, or units.NotAvailable for a figure not recorded.
func orNA(s string) string {
	if s == "" {
		return units.NotAvailable
	}
	return s
}

func pidText(pid int) string {
	if pid == 0 {
		return "-"
	}
	return fmt.Sprint(pid)
}
