package inventory

import (
	"context"
	"os"
	"strings"
)

// Gather reads the inventory of the node under src. It returns an error only
// when nothing useful can be read; unreadable sections are recorded in
// Inventory.Sections.
func Gather(ctx context.Context, src *Source, opts Options) (*Inventory, error) {
	// Empty lists rather than nil, so JSON always has arrays.
	inv := &Inventory{Node: Node{Root: src.Origin(), Time: opts.now().UTC()}, Sysctls: map[string]string{},
		Interfaces: []Interface{}, Routes: []Route{}, Persisted: []PersistedConfig{}, Mounts: []Mount{}, Sections: []Section{}}
	gatherNode(src, inv)
	gatherNetwork(ctx, src, inv, opts)
	gatherNFS(src, inv)
	return inv, nil
}

func gatherNode(src *Source, inv *Inventory) {
	if h, err := src.ReadString("/proc/sys/kernel/hostname"); err == nil && h != "" {
		inv.Node.Hostname = h
	} else if h, err := src.ReadString("/etc/hostname"); err == nil && h != "" {
		inv.Node.Hostname = h
	} else if h, err := src.ReadString("/etc/nodename"); err == nil && h != "" {
		inv.Node.Hostname = h // Solaris
	} else if src.Live() {
		inv.Node.Hostname, _ = os.Hostname()
	}
	inv.Node.Kernel, _ = src.ReadString("/proc/sys/kernel/osrelease")
	if b, err := src.ReadFile("/etc/os-release"); err == nil {
		inv.Node.OS = osRelease(string(b))
	}
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
