package inventory

import (
	"errors"
	"sort"
	"strconv"
	"strings"
)

// errNoEthtool is getCoalesce's answer where there is no SIOCETHTOOL
// (not Linux). A driver's EOPNOTSUPP is not it: that is recorded.
var errNoEthtool = errors.New("SIOCETHTOOL is Linux's")

// InterruptsFile lists every interrupt with its count per CPU.
const InterruptsFile = "/proc/interrupts"

// readNICs reads, for every interface with a device (a NIC, a bond
// slave), its interrupt coalescing and the interrupts of its device. On a
// live node the coalescing is asked of the driver (SIOCETHTOOL) and kept
// as a file of check's own (CoalesceFile) for --collect; in a captured
// tree that file is read.
func readNICs(src *Source, inv *Inventory, note func(string, error)) []NIC {
	var irqs map[int]IRQ
	var nics []NIC
	for _, ifc := range inv.Interfaces {
		if ifc.Driver == "" {
			continue
		}
		n := NIC{Interface: ifc.Name}
		readCoalesce(src, &n, note)
		if irqs == nil {
			irqs = readInterrupts(src, note)
		}
		n.IRQs = nicIRQs(src, ifc, irqs)
		if n.CoalesceFile != "" || len(n.IRQs) > 0 {
			nics = append(nics, n)
		}
	}
	return nics
}

// readCoalesce fills in n's coalescing: asked live, read from a tree.
func readCoalesce(src *Source, n *NIC, note func(string, error)) {
	f := CoalesceFile(n.Interface)
	var b []byte
	if src.Live() {
		c, err := getCoalesce(n.Interface)
		refusal := ""
		if err != nil {
			if err == errNoEthtool {
				return // not asked on this system: n/a, nothing recorded
			}
			refusal = "ETHTOOL_GCOALESCE: " + err.Error()
		}
		b = FormatCoalesce(c, refusal)
		src.record(f, b)
	} else {
		var err error
		if b, err = src.ReadFile(f); err != nil {
			note(f, err)
			return
		}
	}
	c, why, err := ParseCoalesce(strings.NewReader(string(b)))
	n.CoalesceFile = f
	switch {
	case err != nil:
		n.CoalesceNote = "unreadable: " + err.Error()
	case c == nil:
		n.CoalesceNote = why
	default:
		n.Coalesce = c
	}
}

func readInterrupts(src *Source, note func(string, error)) map[int]IRQ {
	b, err := src.ReadFile(InterruptsFile)
	if err != nil {
		note(InterruptsFile, err)
		return map[int]IRQ{}
	}
	m, _, err := ParseInterrupts(strings.NewReader(string(b)))
	if err != nil {
		note(InterruptsFile, err)
		return map[int]IRQ{}
	}
	return m
}

// nicIRQs returns the interrupts of ifc's device: the MSI vectors of the
// device (a PCI NIC) or of the device above it (a virtio NIC sits on a PCI
// function), else the /proc/interrupts lines named after the interface
// (eth1-TxRx-0). Configuration vectors (virtio's -config) carry no
// traffic and are left out.
func nicIRQs(src *Source, ifc Interface, all map[int]IRQ) []IRQ {
	var nums []int
	if dev := realDevice(ifc); dev != "" {
		for _, d := range []string{dev, dev[:strings.LastIndex(dev, "/")]} {
			ents, err := src.ReadDir(d + "/msi_irqs")
			if err != nil {
				continue
			}
			for _, e := range ents {
				if n, err := strconv.Atoi(e.Name()); err == nil {
					// Read (its mode, "msix"), so that a bundle keeps the entry.
					src.ReadFile(d + "/msi_irqs/" + e.Name())
					nums = append(nums, n)
				}
			}
			break
		}
	}
	if len(nums) == 0 {
		for n, irq := range all {
			if irq.Name == ifc.Name || strings.HasPrefix(irq.Name, ifc.Name+"-") || strings.HasPrefix(irq.Name, ifc.Name+"@") {
				nums = append(nums, n)
			}
		}
	}
	sort.Ints(nums)
	var out []IRQ
	for _, n := range nums {
		irq, ok := all[n]
		if !ok || strings.HasSuffix(irq.Name, "-config") {
			continue
		}
		p := "/proc/irq/" + strconv.Itoa(n) + "/smp_affinity_list"
		if a, err := src.ReadString(p); err == nil {
			irq.Affinity, irq.AffinityFile = a, p
		}
		out = append(out, irq)
	}
	return out
}
