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
		Title:  "the node's kernel lacks facilities interlink uses (what interlink does instead)",
		Source: "docs/kernels.md (the mainline release that added each facility: a lower bound where a distribution backports; probed on a live node)",
		Check:  checkKernelFacilities})
}

// lacking is a facility the node's kernel does not have, and how that is
// known.
type lacking struct {
	kernel.Facility
	probed bool // by a probe of the live kernel, not by the release
}

// kernelLacks returns what the kernel of inv lacks: on a live node by the
// probes where there are some (a backport counts; a facility refused by a
// seccomp filter is lacking whatever the release says), otherwise by the
// release. The mountstats errors column only matters with NFS mounts.
func kernelLacks(inv *inventory.Inventory, rel kernel.Release) []lacking {
	nfs := false
	for _, m := range inv.Mounts {
		nfs = nfs || m.Mounted
	}
	var out []lacking
	for _, f := range kernel.Facilities {
		if f.ID == "mountstats-errors" && !nfs {
			continue
		}
		if present, probed := inv.Node.Facilities[f.ID]; probed {
			if !present {
				out = append(out, lacking{f, true})
			}
			continue
		}
		if rel.Version.Before(f.Since) {
			out = append(out, lacking{f, false})
		}
	}
	return out
}

// checkKernelFacilities lists what the node's kernel lacks (live, or by the
// captured tree's /proc/sys/kernel/osrelease), so a figure shown n/a is
// explained before anyone reads a bench result. A tree without a Linux
// release (Solaris, a partial bundle) gets no finding.
func checkKernelFacilities(inv *inventory.Inventory, cfg *Config) []Finding {
	rel, err := kernel.ParseRelease(inv.Node.Kernel)
	if err != nil {
		return nil
	}
	missing := kernelLacks(inv, rel)
	if len(missing) == 0 {
		return nil
	}
	ev := []Evidence{{What: "kernel release", Value: rel.Raw, File: "/proc/sys/kernel/osrelease"}}
	var absent []string
	sev := Info
	var needFigures, needLab kernel.Version
	byRelease := false
	for _, f := range missing {
		what := f.Without
		if f.Lab {
			what += " (labs only)"
		}
		how := "by its release"
		if f.probed {
			how = "probed: absent"
		}
		byRelease = byRelease || !f.probed
		ev = append(ev, Evidence{What: fmt.Sprintf("%s, Linux %s (%s)", f.Name, f.Since, how), Value: what})
		switch f.Effect {
		case kernel.FiguresAbsent:
			sev = Warning
			absent = append(absent, f.Name)
			needFigures = f.Since
		case kernel.Refused:
			needLab = f.Since
		}
	}
	noun := "facilities"
	if len(missing) == 1 {
		noun = "facility"
	}
	msg := fmt.Sprintf("Linux %d.%d lacks %d %s interlink uses (the evidence says what interlink does instead)",
		rel.Major, rel.Minor, len(missing), noun)
	if len(absent) > 0 {
		msg += fmt.Sprintf("; these figures are shown n/a, never 0: %s", strings.Join(absent, ", "))
	}
	if byRelease && rel.Backports() {
		msg += "; this distribution kernel backports features, so some named by its release may be there: interlink probes each at run time"
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
