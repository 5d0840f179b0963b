package rules

import (
	"fmt"
	"strings"

	"github.com/interlink/interlink/internal/inventory"
	"github.com/interlink/interlink/internal/kernel"
)

func init() {
	register(Rule{ID: "KERNEL-FACILITIES", Severity: Info,
		Also:   []SeverityCase{{Warning, "when a figure interlink measures is shown n/a on this kernel, or the kernel is older than 3.10 (not supported)"}},
		Title:  "the node's kernel lacks facilities interlink uses (what interlink does instead)",
		Source: "docs/kernels.md (the mainline release that added each facility: a lower bound where a distribution backports; probed on a live node)",
		Check:  checkKernelFacilities})
}

// lacking is a facility the node's kernel does not have, and how that is
// known.
type lacking struct {
	kernel.Facility
	probed bool   // by a probe of the live kernel or the node's own file, not by the release
	how    string // how it is known when probed: "probed: absent" unless set
}

// kernelLacks returns what the kernel of inv lacks: on a live node by the
// probes where there are some (a backport counts; a facility refused by a
// seccomp filter is lacking whatever the release says), otherwise by the
// release. The mountstats errors column only matters with NFS mounts, and
// the node's mountstats, live or in a bundle, says whether its per-op lines
// have it (RHEL 8's 4.18 may carry it backported).
func kernelLacks(inv *inventory.Inventory, rel kernel.Release) []lacking {
	nfs := false
	for _, m := range inv.Mounts {
		nfs = nfs || m.Mounted
	}
	var out []lacking
	for _, f := range kernel.Facilities {
		if f.ID == "mountstats-errors" {
			if !nfs {
				continue
			}
			if present, known := mountstatsErrors(inv); known {
				if !present {
					out = append(out, lacking{f, true, "/proc/self/mountstats: per-op lines of 8 numbers"})
				}
				continue
			}
		}
		if present, probed := inv.Node.Facilities[f.ID]; probed {
			if !present {
				out = append(out, lacking{f, true, ""})
			}
			continue
		}
		if rel.Version.Before(f.Since) {
			out = append(out, lacking{f, false, ""})
		}
	}
	return out
}

// mountstatsErrors says whether the node's mountstats counts errors per
// operation (a per-op line of 9 numbers: Errors set), known when some NFS
// mount has per-op statistics to tell by.
func mountstatsErrors(inv *inventory.Inventory) (present, known bool) {
	for _, m := range inv.Mounts {
		if m.Stats == nil {
			continue
		}
		for _, o := range m.Stats.Ops {
			if o.Errors != nil {
				return true, true
			}
			known = true
		}
	}
	return false, known
}

// checkKernelFacilities lists what the node's kernel lacks (live, or by the
// captured tree's /proc/sys/kernel/osrelease), so a figure shown n/a is
// explained before anyone reads a bench result. A tree without a kernel
// release (Solaris, a partial bundle) gets no finding; one whose release
// cannot be read gets one saying so (with what the probes found), and one
// older than 3.10 a warning that interlink does not support it.
func checkKernelFacilities(inv *inventory.Inventory, cfg *Config) []Finding {
	if strings.TrimSpace(inv.Node.Kernel) == "" {
		return nil
	}
	rel, err := kernel.ParseRelease(inv.Node.Kernel)
	if err != nil {
		return unreadRelease(inv, err)
	}
	if rel.Version.Before(kernel.Oldest) {
		return []Finding{unsupportedKernel(rel)}
	}
	missing := kernelLacks(inv, rel)
	if len(missing) == 0 {
		return nil
	}
	ev, sev, absent, needFigures, needLab, byRelease := lackingEvidence(rel.Raw, missing)
	msg := fmt.Sprintf("Linux %d.%d lacks %d %s interlink uses (the evidence says what interlink does instead)",
		rel.Major, rel.Minor, len(missing), plural(len(missing)))
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

func plural(n int) string {
	if n == 1 {
		return "facility"
	}
	return "facilities"
}

// lackingEvidence gives the evidence lines of the missing facilities (after
// the release), the severity (warning when a figure is shown n/a), those
// figures, the newest kernel each kind needs and whether any was judged by
// the release rather than a probe.
func lackingEvidence(raw string, missing []lacking) (ev []Evidence, sev Severity, absent []string, needFigures, needLab kernel.Version, byRelease bool) {
	ev = []Evidence{{What: "kernel release", Value: raw, File: "/proc/sys/kernel/osrelease"}}
	sev = Info
	for _, f := range missing {
		what := f.Without
		if f.Lab {
			what += " (labs only)"
		}
		how := "by its release"
		switch {
		case f.how != "":
			how = f.how
		case f.probed:
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
	return ev, sev, absent, needFigures, needLab, byRelease
}

// unsupportedKernel is the finding for a kernel older than the oldest
// interlink supports (Oracle Linux 6's 2.6.32, SLES 11's 3.0): what the
// release lacks is not a list of fallbacks there, the measurements do not
// run at all (the batched datagram calls are missing below 3.0, Go itself
// needs 3.2), so it says that instead of "nothing on the node is wrong".
func unsupportedKernel(rel kernel.Release) Finding {
	var lacks []string
	for _, f := range kernel.Missing(rel) {
		lacks = append(lacks, fmt.Sprintf("%s (%s)", f.Name, f.Since))
	}
	return Finding{Severity: Warning, Object: "kernel " + rel.Raw,
		Message: fmt.Sprintf("Linux %s is older than %s, the oldest kernel interlink supports (Oracle Linux 7): interlink's measurements (bench, agent, gc, lab) are not supported on this node; by its release it lacks %s",
			rel.Version, kernel.Oldest, strings.Join(lacks, ", ")),
		Evidence: []Evidence{{What: "kernel release", Value: rel.Raw, File: "/proc/sys/kernel/osrelease"}},
		Fix:      fmt.Sprintf("measure from nodes on Linux %s or newer; check --root of this node's bundle still audits its configuration from any host; docs/kernels.md gives the supported range", kernel.Oldest)}
}

// unreadRelease is the finding for a release string that is not a Linux
// release interlink can read: it cannot say by the release what the kernel
// lacks, so it says so, with what the live probes (if any) found absent.
func unreadRelease(inv *inventory.Inventory, perr error) []Finding {
	var missing []lacking
	for _, f := range kernel.Facilities {
		if present, probed := inv.Node.Facilities[f.ID]; probed && !present {
			missing = append(missing, lacking{f, true, ""})
		}
	}
	raw := strings.TrimSpace(inv.Node.Kernel)
	if len(raw) > 80 { // a file that is not a release at all
		raw = raw[:80] + "..."
	}
	ev, sev, absent, _, _, _ := lackingEvidence(raw, missing)
	msg := fmt.Sprintf("the kernel release is not one interlink can read (%v), so it cannot say by the release which facilities this kernel lacks; the code that uses each probes it at run time", perr)
	if len(missing) > 0 {
		msg += fmt.Sprintf("; probed here, %d %s absent", len(missing), plural(len(missing)))
	}
	if len(absent) > 0 {
		msg += fmt.Sprintf("; these figures are shown n/a, never 0: %s", strings.Join(absent, ", "))
	}
	return []Finding{{Severity: sev, Object: "kernel " + raw, Message: msg, Evidence: ev,
		Fix: "nothing to change for interlink; docs/kernels.md lists each facility and the kernel that added it"}}
}
