package inventory

import (
	"context"
	"os"
	"time"
)

// Gather reads the inventory of the node under src. It returns an error only
// when nothing useful can be read; unreadable sections are recorded in
// Inventory.Sections.
func Gather(ctx context.Context, src *Source, opts Options) (*Inventory, error) {
	inv := &Inventory{Node: Node{Root: src.Root(), Time: time.Now().UTC()}, Sysctls: map[string]string{}}
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
	} else if src.Live() {
		inv.Node.Hostname, _ = os.Hostname()
	}
	inv.Node.Kernel, _ = src.ReadString("/proc/sys/kernel/osrelease")
}
