package lab

import (
	"errors"
	"fmt"
	"strings"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/interlink/interlink/internal/ebpf"
	"github.com/interlink/interlink/internal/kernel"
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

// portFiltered reports whether link l's switch port gets the classifier:
// when port and node disagree, or when other ports of the switch take in
// larger frames than this one may deliver (the bridge checks single
// frames, but lets GSO packets with larger segments through).
func portFiltered(t *Topology, l LinkSpec) bool {
	return l.PortMTU != l.MTU || min(l.PortMTU, l.MTU) < largestFrame(t, l.Switch)
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
			if where == "" && portFiltered(t, l) {
				where = fmt.Sprintf("node %s link %s (port_mtu %d, mtu %d)", n.Name, l.Name, l.PortMTU, l.MTU)
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
	return fmt.Errorf("lab %s: %s needs a switch port that drops frames above its MTU, an eBPF tc classifier reading __sk_buff.gso_size (Linux %s or newer; this kernel is %s, %s): run the lab on a newer kernel (Oracle Linux 9, UEK R7) or give the nodes on each switch one MTU and no port_mtu",
		t.Name, where, portClassifierSince(), release, reason)
}

// filterPort attaches to switch port the classifier link l's port needs
// (nothing when portFiltered says none): frames from the node above the
// port MTU when the port is the narrower, frames to the node above the
// smaller of the two MTUs. The builder, lab set and a VM node's tap all
// filter their ports through here.
func filterPort(t *Topology, h *netlink.Handle, port netlink.Link, l LinkSpec) error {
	if !portFiltered(t, l) {
		return nil
	}
	fromNode := 0
	if l.PortMTU < l.MTU {
		fromNode = l.PortMTU
	}
	return portFilter(h, port, fromNode, min(l.PortMTU, l.MTU))
}

// portFilter attaches the classifier to a switch port: frames from the node
// (ingress) above fromNode bytes of MTU and frames to the node (egress)
// above toNode are dropped; 0 means no limit in that direction.
func portFilter(h *netlink.Handle, port netlink.Link, fromNode, toNode int) error {
	return ebpf.Attach(h, port, ebpf.Port{MTU: fromNode}, ebpf.Port{MTU: toNode})
}
