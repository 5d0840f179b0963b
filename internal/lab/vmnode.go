package lab

import (
	"fmt"
	"hash/fnv"
)

// vmState records one VM node in the lab's state.
type vmState struct {
	Node    string   `json:"node"`
	Dir     string   `json:"dir"`            // its files: initramfs, console, channel sockets
	Taps    []string `json:"taps,omitempty"` // in the switch namespace, gone with it
	PID     int      `json:"pid,omitempty"`  // qemu's
	Kernel  string   `json:"kernel,omitempty"`
	Release string   `json:"release,omitempty"`
	Accel   string   `json:"accel,omitempty"` // kvm or tcg
	// Status is the guest's status channel (a unix socket), recorded once
	// the guest said it serves one. Absent for a guest that cannot (its
	// kernel has fewer serial ports) and in a lab brought up before there
	// were any: status asks on the command channel then.
	Status string `json:"status,omitempty"`
}

// VMStatus is a VM node as found now.
type VMStatus struct {
	State string `json:"state"` // VMRunning or VMStopped
	PID   int    `json:"pid,omitempty"`
	// Kernel and Accel are absent while no record of the VM's boot is
	// there (lab up killed before it reached this node).
	Kernel      string `json:"kernel,omitempty"`  // the Debian package or the file booted
	Release     string `json:"release,omitempty"` // the kernel's release, when known
	Accel       string `json:"accel,omitempty"`   // kvm or tcg
	MemoryBytes int64  `json:"memory_bytes"`
	CPUs        int    `json:"cpus"`
	Console     string `json:"console"` // the guest's console, as a file
}

// VM states.
const (
	VMRunning = "running"
	VMStopped = "stopped"
)

// vmMAC is a link's MAC address: locally administered (qemu's 52:54:00
// prefix), the rest from the lab, node and link names, so it is stable
// across lab ups; taken makes it unique in the lab.
func vmMAC(lab, node, link string, taken map[string]bool) string {
	h := fnv.New32a()
	fmt.Fprintf(h, "%s/%s/%s", lab, node, link)
	v := h.Sum32()
	for {
		mac := fmt.Sprintf("52:54:00:%02x:%02x:%02x", byte(v>>16), byte(v>>8), byte(v))
		if !taken[mac] {
			taken[mac] = true
			return mac
		}
		v++
	}
}

// vmOnSwitches refuses a lab set that would change a switch a VM node is
// on: its links live in the guest's kernel, which the host does not
// reconfigure (yet). Nothing is changed then.
func vmOnSwitches(t *Topology, switches map[string]bool) error {
	for _, n := range t.Nodes {
		if !n.IsVM() {
			continue
		}
		for _, l := range n.Links {
			if switches[l.Switch] {
				return fmt.Errorf("lab %s: switch %s has VM node %s: lab set does not change VM nodes' links yet (in the guest: interlink lab exec %s %s -- ip link set %s mtu N)", t.Name, l.Switch, n.Name, t.Name, n.Name, l.Name)
			}
		}
	}
	return nil
}
