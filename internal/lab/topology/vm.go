package topology

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/interlink/interlink/internal/units"
)

// VMSpec makes a node a virtual machine with a kernel of its own (package
// vm) instead of a network namespace: each link is a tap on the switch
// (the switch port, with the port MTU) and a virtio NIC in the guest (the
// link's MTU). Kernel is a bzImage, "" for Debian's packaged kernel
// (fetched once into the VM cache); Modules is that kernel's modules tree
// (/lib/modules/RELEASE), "" when virtio_net and virtio_pci are built in.
type VMSpec struct {
	Kernel      string `json:"kernel,omitempty"`
	Modules     string `json:"modules,omitempty"`
	MemoryBytes int64  `json:"memory_bytes"`
	CPUs        int    `json:"cpus"`
}

// Limits and defaults of VM nodes.
const (
	DefaultVMMemory = 512 << 20
	MinVMMemory     = 128 << 20 // the guest unpacks a 40 MB initramfs into memory
	MaxVMCPUs       = 64
)

// fileVM is a node's vm: mapping as decoded.
type fileVM struct {
	Kernel  *string `yaml:"kernel"`
	Modules *string `yaml:"modules"`
	Memory  *string `yaml:"memory"`
	CPUs    *string `yaml:"cpus"`
}

// IsVM reports whether the node is a virtual machine.
func (n *NodeSpec) IsVM() bool { return n.VM != nil }

// vm reads a node's vm: mapping; a kernel or modules path is relative to
// the topology file's directory.
func (c *converter) vm(fv *fileVM, f string) (*VMSpec, error) {
	v := &VMSpec{MemoryBytes: DefaultVMMemory, CPUs: 1}
	rel := func(p string) string {
		if p == "" || filepath.IsAbs(p) || c.file == "" || strings.HasPrefix(c.file, "builtin:") {
			return p
		}
		return filepath.Join(filepath.Dir(c.file), p)
	}
	if fv.Kernel != nil {
		v.Kernel = rel(*fv.Kernel)
	}
	if fv.Modules != nil {
		v.Modules = rel(*fv.Modules)
	}
	if fv.Memory != nil {
		m, err := units.ParseSize(*fv.Memory)
		if err != nil {
			return nil, c.fail(f+".memory", "%q is not a size (want e.g. 512M, 1G)", *fv.Memory)
		}
		v.MemoryBytes = m
	}
	if fv.CPUs != nil {
		n, err := strconv.Atoi(*fv.CPUs)
		if err != nil {
			return nil, c.fail(f+".cpus", "%q is not a number of CPUs", *fv.CPUs)
		}
		v.CPUs = n
	}
	return v, nil
}

// vm checks a VM node: its memory and CPUs, and that it asks for nothing
// only a namespace node has (a shaped link, services other than the agent).
func (v *validator) vm(n *NodeSpec, f string) *TopologyError {
	if n.VM == nil {
		for j, s := range n.Services {
			if s.Kind == KindSSHD {
				return v.bad(fmt.Sprintf("%s.services[%d].kind", f, j), "the sshd service runs in VM nodes (vm:) only")
			}
		}
		return nil
	}
	f += ".vm"
	if n.VM.MemoryBytes < MinVMMemory {
		return v.bad(f+".memory", "%s is too little for a VM node (at least %s)", units.FormatBytes(float64(n.VM.MemoryBytes)), units.FormatBytes(MinVMMemory))
	}
	if n.VM.CPUs < 1 || n.VM.CPUs > MaxVMCPUs {
		return v.bad(f+".cpus", "%d CPUs out of range 1..%d", n.VM.CPUs, MaxVMCPUs)
	}
	if n.VM.Modules != "" && n.VM.Kernel == "" {
		return v.bad(f+".modules", "modules go with a kernel: Debian's default kernel brings its own")
	}
	for j, l := range n.Links {
		if l.RateBitsPerSec != 0 {
			return v.bad(fmt.Sprintf("nodes.%s.links[%d].rate", n.Name, j), "a VM node's link cannot be shaped by the lab (shape it inside the guest with tc)")
		}
	}
	for j, s := range n.Services {
		if s.Kind != KindAgent && s.Kind != KindSSHD {
			return v.bad(fmt.Sprintf("nodes.%s.services[%d].kind", n.Name, j), "a VM node runs only the agent and sshd services, not %s", s.Kind)
		}
	}
	return nil
}

// SetKernel makes every VM node of t boot kernel (a bzImage) with modules
// (its /lib/modules/RELEASE tree, "" when virtio is built in): a replica
// rehearsed on the kernel its cluster runs. It is an error when t has no
// VM node.
func (t *Topology) SetKernel(kernel, modules string) error {
	n := 0
	for i := range t.Nodes {
		if v := t.Nodes[i].VM; v != nil {
			v.Kernel, v.Modules = kernel, modules
			n++
		}
	}
	if n == 0 {
		return fmt.Errorf("lab %s: no VM node (vm:) to boot kernel %s", t.Name, kernel)
	}
	return nil
}
