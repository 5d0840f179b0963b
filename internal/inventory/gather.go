package inventory

import (
	"context"
	"fmt"
	"strings"

	"github.com/interlink/interlink/internal/kernel"
)

// Gather reads the inventory of the node under src. Unreadable sections are
// recorded in Inventory.Sections, and files that exist but could not be
// read (a FIFO, a device, a file too large, no permission) in
// Inventory.Unreadable and a "files" section. The inventory is returned
// also with an error, which Gather gives in two cases: not one file could be
// read (ErrNothingRead, naming what was refused), or ctx ended before every
// section was read (wrapping ctx.Err()). Once ctx ends no further file is
// read; with a CounterInterval, ending ctx during the wait between the two
// samples only cuts the wait (the counters are sampled last).
func Gather(ctx context.Context, src *Source, opts Options) (*Inventory, error) {
	// Empty lists rather than nil, so JSON always has arrays.
	inv := &Inventory{Node: Node{Root: src.Origin(), Time: opts.now().UTC()}, Sysctls: map[string]string{},
		Interfaces: []Interface{}, Routes: []Route{}, Persisted: []PersistedConfig{}, Mounts: []Mount{},
		Sections: []Section{}, Unreadable: []Unreadable{}}
	src.bind(ctx)
	defer src.unbind()
	gatherNode(src, inv)
	gatherNetwork(src, inv)
	at := len(inv.Sections) // the counters section goes here, as before cluster and mounts
	gatherCluster(src, inv)
	gatherNFS(src, inv)
	gatherDNFS(src, inv, opts)
	hostAt := opts.now()
	gatherHost(src, inv)
	gatherCounters(ctx, src, inv, opts)
	resampleSteal(src, inv, hostAt, opts)
	sec := inv.Sections[len(inv.Sections)-1]
	copy(inv.Sections[at+1:], inv.Sections[at:len(inv.Sections)-1])
	inv.Sections[at] = sec
	return inv, finish(ctx, src, inv)
}

// finish lists what could not be read and decides whether there is
// anything to judge.
func finish(ctx context.Context, src *Source, inv *Inventory) error {
	src.mu.Lock()
	interrupted := src.interrupted
	src.mu.Unlock()
	if interrupted {
		return fmt.Errorf("stopped before the tree was read (%d files read): %w", len(src.Files()), ctx.Err())
	}
	bad := src.Unreadable()
	if len(bad) > maxUnreadableListed {
		inv.Unreadable = bad[:maxUnreadableListed]
	} else {
		inv.Unreadable = bad
	}
	if len(bad) > 0 {
		detail := fmt.Sprintf("%d not read: %s", len(bad), listUnreadable(bad, 5))
		if len(bad) > maxUnreadableListed {
			detail += fmt.Sprintf(" (JSON lists the first %d)", maxUnreadableListed)
		}
		inv.addSection("files", "partial", detail)
	}
	if len(src.Files()) > 0 {
		return nil
	}
	if len(bad) == 0 {
		return fmt.Errorf("%w under %s: none of the files check reads is there (%s, %s, %s, %s, ...)",
			ErrNothingRead, src.Origin(), "/sys/class/net", "/proc/net/snmp", "/etc/hostname", FstabFile)
	}
	return fmt.Errorf("%w under %s: %s", ErrNothingRead, src.Origin(), listUnreadable(bad, 3))
}

// listUnreadable names the first n of bad with their reasons.
func listUnreadable(bad []Unreadable, n int) string {
	var parts []string
	for i, u := range bad {
		if i == n {
			parts = append(parts, fmt.Sprintf("and %d more", len(bad)-n))
			break
		}
		parts = append(parts, u.Path+" ("+u.Reason+")")
	}
	return strings.Join(parts, "; ")
}

func gatherNode(src *Source, inv *Inventory) {
	gatherHostname(src, inv)
	if rel, err := src.ReadString("/proc/sys/kernel/osrelease"); err == nil {
		inv.Node.Kernel = kernelRelease(rel)
	}
	if src.Live() {
		inv.Node.Facilities = kernel.Probe()
	}
	if b, err := src.ReadFile("/etc/os-release"); err == nil {
		inv.Node.OS = osRelease(string(b))
	}
}

// releaseMax is the longest kernel release there is: utsname's release
// field holds __NEW_UTS_LEN (64) bytes.
const releaseMax = 64

// kernelRelease is the release as the node's kernel would give it: one
// line of at most releaseMax bytes. A file in a bundle that holds more is
// not a release; it is cut (marked "...") so that the report's header and
// the KERNEL-FACILITIES finding print one short line, not megabytes.
func kernelRelease(s string) string {
	s, _, cut := strings.Cut(s, "\n")
	s = strings.TrimSpace(s)
	if len(s) > releaseMax {
		s, cut = s[:releaseMax], true
	}
	if cut {
		s += "..."
	}
	return s
}

// osRelease returns PRETTY_NAME (else NAME VERSION_ID) of an os-release file.
func osRelease(s string) string {
	vars := map[string]string{}
	for _, l := range strings.Split(s, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(l), "="); ok {
			vars[k] = unquote(v)
		}
	}
	if p := vars["PRETTY_NAME"]; p != "" {
		return p
	}
	return strings.TrimSpace(vars["NAME"] + " " + vars["VERSION_ID"])
}
