package rules

import (
	"fmt"
	"strings"

	"github.com/interlink/interlink/internal/inventory"
	"github.com/interlink/interlink/internal/kernel"
)

func init() {
	register(Rule{ID: "KERNEL-FACILITIES", Severity: Info,
		Also:   []SeverityCase{{Warning, "when a figure interlink measures is shown n/a on this kernel"}},
		Title:  "the node's kernel predates facilities interlink uses (what interlink does instead)",
		Source: "docs/kernels.md (the mainline release that added each facility: a lower bound where a distribution backports)",
		Check:  checkKernelFacilities})
}

// checkKernelFacilities lists what the node's kernel lacks by its release
// (live, or the captured tree's /proc/sys/kernel/osrelease), so a figure
// shown n/a is explained before anyone reads a bench result. A tree
// without a Linux release (Solaris, a partial bundle) gets no finding.
func checkKernelFacilities(inv *inventory.Inventory, cfg *Config) []Finding {
	rel, err := kernel.ParseRelease(inv.Node.Kernel)
	if err != nil {
		return nil
	}
	nfs := false
	for _, m := range inv.Mounts {
		nfs = nfs || m.Mounted
	}
	var missing []kernel.Facility
	for _, f := range kernel.Missing(rel) {
		// The errors column only matters where there are NFS mounts to read.
		if f.ID == "mountstats-errors" && !nfs {
			continue
		}
		missing = append(missing, f)
	}
	if len(missing) == 0 {
		return nil
	}
	ev := []Evidence{{What: "kernel release", Value: rel.Raw, File: "/proc/sys/kernel/osrelease"}}
	var absent []string
	sev := Info
	var needFigures, needLab kernel.Version
	for _, f := range missing {
		what := f.Without
		if f.Lab {
			what += " (labs only)"
		}
		ev = append(ev, Evidence{What: fmt.Sprintf("%s, Linux %s", f.Name, f.Since), Value: what})
		switch f.Effect {
		case kernel.FiguresAbsent:
			sev = Warning
			absent = append(absent, f.Name)
			needFigures = f.Since
		case kernel.Refused:
			needLab = f.Since
		}
	}
	msg := fmt.Sprintf("Linux %d.%d predates %d facilities interlink uses (the evidence says what interlink does instead of each)",
		rel.Major, rel.Minor, len(missing))
	if len(absent) > 0 {
		msg += fmt.Sprintf("; these figures are shown n/a, never 0: %s", strings.Join(absent, ", "))
	}
	if rel.Backports() {
		msg += "; this distribution kernel backports features, so some may be there: interlink probes each at run time"
	}
	var fix []string
	if len(absent) > 0 {
		fix = append(fix, fmt.Sprintf("nothing on the node is wrong; the figures shown n/a need Linux %s or newer (UEK7 5.15, OL9 5.14)", needFigures))
	} else {
		fix = append(fix, "nothing to change: interlink's results on this kernel are complete")
	}
	if needLab != (kernel.Version{}) {
		fix = append(fix, fmt.Sprintf("labs with port_mtu need Linux %s or newer", needLab))
	}
	fix = append(fix, "docs/kernels.md lists each facility, its fallback and the test that proves it")
	return []Finding{{Severity: sev, Object: "kernel " + rel.Raw, Message: msg, Evidence: ev, Fix: strings.Join(fix, "; ")}}
}
