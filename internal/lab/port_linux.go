package lab

import (
	"errors"
	"fmt"
	"strings"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/interlink/interlink/internal/ebpf"
	"github.com/interlink/interlink/internal/kernel"
	"github.com/interlink/interlink/internal/lab/topology"
)

// A switch port narrower than the node behind it (port_mtu < mtu) must drop
// frames above its MTU silently in both directions, as a real switch does
// with giants; a node narrower than its port must not receive frames above
// its own MTU. A veth alone cannot do either exactly: it refuses frames
// above its peer's MTU plus 4 bytes of VLAN slack, and with an error the
// sender sees (ENOBUFS) rather than silently, and the bridge lets GSO
// super-packets through unchecked. So when the two MTUs differ (or larger
// frames enter the switch at other ports), the port's veth gets the larger
// MTU and a small classifier on the port (clsact, in the switch namespace,
// invisible to the node) drops every frame, or every GSO segment, larger
// than the limit plus 14 bytes of Ethernet header.
//
// The same classifier makes a link lossy (loss: 1%): this kernel kind may
// have no netem, and the classifier drops that share of frames at random
// (bpf_get_prandom_u32), in both directions, and counts them.

// portFiltered reports whether link l's switch port gets the classifier:
// when its MTU needs one (mtuFiltered) or the link loses frames.
func portFiltered(t *Topology, l LinkSpec) bool {
	return mtuFiltered(t, l) || l.LossPercent > 0
}

// mtuFiltered reports whether link l's switch port needs a size limit:
// when port and node disagree, or when other ports of the switch take in
// larger frames than this one may deliver (the bridge checks single
// frames, but lets GSO packets with larger segments through).
func mtuFiltered(t *Topology, l LinkSpec) bool {
	return l.PortMTU != l.MTU || min(l.PortMTU, l.MTU) < largestFrame(t, l.Switch)
}

// portSides is what link l's switch port drops in each direction: frames
// from the node above the port MTU when the port is the narrower, frames
// to the node above the smaller of the two MTUs (when mtuFiltered), and
// the link's loss both ways.
func portSides(t *Topology, l LinkSpec) (fromNode, toNode ebpf.Port) {
	fromNode.LossPercent, toNode.LossPercent = l.LossPercent, l.LossPercent
	if mtuFiltered(t, l) {
		if l.PortMTU < l.MTU {
			fromNode.MTU = l.PortMTU
		}
		toNode.MTU = min(l.PortMTU, l.MTU)
	}
	return fromNode, toNode
}

// largestFrame returns the largest MTU of a frame that can enter switch sw
// from any of its ports.
func largestFrame(t *Topology, sw string) int {
	largest := 0
	for _, n := range t.Nodes {
		for _, l := range n.Links {
			if l.Switch == sw {
				largest = max(largest, min(l.MTU, l.PortMTU))
			}
		}
	}
	return largest
}

// portClassifierSince is the mainline release that added the last thing
// the classifier needs, __sk_buff.gso_size; it also needs the clsact qdisc,
// cls_bpf direct-action and prog_name in bpf_attr, all older (the table in
// internal/kernel and docs/kernels.md).
func portClassifierSince() string {
	f, _ := kernel.Lookup("bpf-port-mtu")
	return f.Since.String()
}

// portProbe loads the classifier once and unloads it, which is the only
// sure test of what the verifier accepts (distribution kernels backport
// BPF features, so the release cannot tell). Tests replace it to act as a
// kernel without the facility.
var portProbe = func() error {
	f, err := ebpf.Load(ebpf.Port{MTU: 1500, LossPercent: 1}, "il_port_probe")
	if err != nil {
		return err
	}
	return f.Close()
}

// checkPortClassifier refuses, before anything is built or changed, a
// topology whose switch ports need the classifier on a kernel that cannot
// load it: one line naming the facility, this kernel, and what to do.
func checkPortClassifier(t *Topology) error {
	var where string
	for _, n := range t.Nodes {
		for _, l := range n.Links {
			switch {
			case where != "":
			case mtuFiltered(t, l):
				where = fmt.Sprintf("node %s link %s (port_mtu %d, mtu %d)", n.Name, l.Name, l.PortMTU, l.MTU)
			case l.LossPercent > 0:
				where = fmt.Sprintf("node %s link %s (loss %s)", n.Name, l.Name, topology.FormatLoss(l.LossPercent))
			}
		}
	}
	if where == "" {
		return nil
	}
	err := portProbe()
	if err == nil {
		return nil
	}
	reason := strings.Join(strings.Fields(err.Error()), " ")
	var errno unix.Errno
	if errors.As(err, &errno) {
		reason = "the kernel refused the program: " + errno.Error() // the verifier's log is many lines
	}
	release := "unknown"
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		release = unix.ByteSliceToString(u.Release[:])
	}
	return fmt.Errorf("lab %s: %s needs a switch port that drops frames above its MTU or at random, an eBPF tc classifier reading __sk_buff.gso_size (Linux %s or newer; this kernel is %s, %s): run the lab on a newer kernel (Oracle Linux 9, UEK R7) or give the nodes on each switch one MTU, no port_mtu and no loss",
		t.Name, where, portClassifierSince(), release, reason)
}

// filterPort attaches to switch port the classifier link l's port needs
// (portSides; nothing when portFiltered says none). The builder, lab set
// and a VM node's tap all filter their ports through here.
func filterPort(t *Topology, h *netlink.Handle, port netlink.Link, l LinkSpec) error {
	if !portFiltered(t, l) {
		return nil
	}
	fromNode, toNode := portSides(t, l)
	return ebpf.Attach(h, port, fromNode, toNode)
}
