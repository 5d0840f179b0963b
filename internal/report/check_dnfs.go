package report

import (
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/interlink/interlink/internal/rules"
)

// dnfs prints the Oracle homes with their Direct NFS state and, for each
// home where it is on, the oranfstab entry dNFS takes for each mount.
func dnfs(p *printer, r *rules.Result) {
	d := r.Inventory.DNFS
	if d == nil || len(d.Homes) == 0 && len(d.Files) == 0 {
		return
	}
	p.f("\n")
	tw := tabwriter.NewWriter(p, 0, 0, 2, ' ', 0)
	cleanf(tw, "  ORACLE HOME\tSIDS\tDIRECT NFS\tORANFSTAB\n")
	for _, h := range d.Homes {
		state := h.DNFS
		if h.Grid() {
			state += " (grid home)"
		}
		cleanf(tw, "  %s\t%s\t%s\t%s\n", h.Path, orDash(strings.Join(h.SIDs, ",")), state, orDash(strings.TrimPrefix(h.Oranfstab, h.Path+"/")))
	}
	tw.Flush()
	var rows [][]string
	seen := map[string]bool{}
	for i, h := range d.Homes {
		if h.DNFS != "on" {
			continue
		}
		for _, m := range d.Effective(i) {
			from := m.File + " line " + strconv.Itoa(m.Line)
			if len(m.Shadowed) > 0 {
				from += " (ignored: " + strings.Join(m.Shadowed, ", ") + ")"
			}
			row := []string{m.Mount, m.Server + ":" + m.Export, orDash(strings.Join(m.Paths, " ")), from}
			if k := strings.Join(row, "\x00"); !seen[k] {
				seen[k] = true
				rows = append(rows, row)
			}
		}
	}
	if len(rows) == 0 {
		return
	}
	p.f("\n")
	tw = tabwriter.NewWriter(p, 0, 0, 2, ' ', 0)
	cleanf(tw, "  DNFS MOUNT\tEXPORT\tPATHS\tFROM\n")
	for _, row := range rows {
		cleanf(tw, "  %s\t%s\t%s\t%s\n", row[0], row[1], row[2], row[3])
	}
	tw.Flush()
}
