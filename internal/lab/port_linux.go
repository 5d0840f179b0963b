package lab

import (
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"unsafe"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

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
	fd, err := loadPortProgram(1500 + 14)
	if err != nil {
		return err
	}
	return unix.Close(fd)
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
	idx := port.Attrs().Index
	clsact := &netlink.GenericQdisc{
		QdiscAttrs: netlink.QdiscAttrs{LinkIndex: idx, Handle: netlink.MakeHandle(0xffff, 0), Parent: netlink.HANDLE_CLSACT},
		QdiscType:  "clsact",
	}
	if err := h.QdiscAdd(clsact); err != nil {
		return fmt.Errorf("add clsact: %w", err)
	}
	for _, dir := range []struct {
		parent uint32
		mtu    int
	}{{netlink.HANDLE_MIN_INGRESS, fromNode}, {netlink.HANDLE_MIN_EGRESS, toNode}} {
		if dir.mtu == 0 {
			continue
		}
		fd, err := loadPortProgram(dir.mtu + 14)
		if err != nil {
			return err
		}
		f := &netlink.BpfFilter{
			FilterAttrs: netlink.FilterAttrs{
				LinkIndex: idx, Parent: dir.parent, Handle: 1, Priority: 1, Protocol: unix.ETH_P_ALL,
			},
			Fd: fd, Name: fmt.Sprintf("mtu_%d", dir.mtu), DirectAction: true,
		}
		err = h.FilterAdd(f)
		unix.Close(fd) // the filter keeps the program
		if err != nil {
			return fmt.Errorf("add port filter: %w", err)
		}
	}
	return nil
}

// eBPF opcodes used below (linux/bpf.h, linux/bpf_common.h).
const (
	opMov64Reg = 0xbf // dst = src
	opMov64Imm = 0xb7 // dst = imm
	opLdxW     = 0x61 // dst = *(u32 *)(src + off)
	opLdAbsH   = 0x28 // r0 = ntohs(*(u16 *)(skb->data + imm))
	opLdAbsB   = 0x30 // r0 = *(u8 *)(skb->data + imm)
	opLdIndB   = 0x50 // r0 = *(u8 *)(skb->data + src + imm)
	opAnd64Imm = 0x57
	opLsh64Imm = 0x67
	opRsh64Imm = 0x77
	opAdd64Imm = 0x07
	opAdd64Reg = 0x0f
	opJeqImm   = 0x15
	opJgtImm   = 0x25
	opJa       = 0x05
	opExit     = 0x95

	skbLen     = 0   // offsetof(struct __sk_buff, len)
	skbGSOSize = 176 // offsetof(struct __sk_buff, gso_size)

	tcActOK   = 0
	tcActShot = 2
)

type insn struct {
	op       uint8
	dst, src uint8
	off      int16
	imm      int32
	target   string // jump target label
	label    string // this instruction's label
}

// portProgram returns the classifier: the frame length (for a GSO packet:
// its headers plus gso_size, the size of each segment it becomes) above
// limit is TC_ACT_SHOT, anything else TC_ACT_OK. At tc, skb->data and
// skb->len include the Ethernet header in both directions.
func portProgram(limit int) []insn {
	return []insn{
		{op: opMov64Reg, dst: 6, src: 1},              // r6 = ctx (LD_ABS wants it there)
		{op: opLdxW, dst: 7, src: 6, off: skbLen},     // r7 = len
		{op: opLdxW, dst: 8, src: 6, off: skbGSOSize}, // r8 = gso_size
		{op: opJeqImm, dst: 8, imm: 0, target: "check"},
		// GSO: r7 = Ethernet + IP + TCP/UDP header length + gso_size.
		{op: opLdAbsH, imm: 12}, // r0 = ethertype
		{op: opJeqImm, dst: 0, imm: unix.ETH_P_IP, target: "v4"},
		{op: opJeqImm, dst: 0, imm: unix.ETH_P_IPV6, target: "v6"},
		{op: opJa, target: "pass"},
		{label: "v4", op: opLdAbsB, imm: 14}, // version and IHL
		{op: opAnd64Imm, dst: 0, imm: 0xf},
		{op: opLsh64Imm, dst: 0, imm: 2},
		{op: opMov64Reg, dst: 9, src: 0},
		{op: opAdd64Imm, dst: 9, imm: 14}, // r9 = offset of the L4 header
		{op: opLdAbsB, imm: 14 + 9},       // r0 = protocol
		{op: opJa, target: "l4"},
		{label: "v6", op: opMov64Imm, dst: 9, imm: 14 + 40},
		{op: opLdAbsB, imm: 14 + 6}, // r0 = next header
		{label: "l4", op: opJeqImm, dst: 0, imm: unix.IPPROTO_TCP, target: "tcp"},
		{op: opMov64Reg, dst: 7, src: 9},
		{op: opAdd64Imm, dst: 7, imm: 8}, // UDP header
		{op: opJa, target: "gso"},
		{label: "tcp", op: opLdIndB, src: 9, imm: 12}, // data offset
		{op: opRsh64Imm, dst: 0, imm: 4},
		{op: opLsh64Imm, dst: 0, imm: 2},
		{op: opMov64Reg, dst: 7, src: 9},
		{op: opAdd64Reg, dst: 7, src: 0},
		{label: "gso", op: opAdd64Reg, dst: 7, src: 8},
		{label: "check", op: opJgtImm, dst: 7, imm: int32(limit), target: "drop"},
		{label: "pass", op: opMov64Imm, dst: 0, imm: tcActOK},
		{op: opExit},
		{label: "drop", op: opMov64Imm, dst: 0, imm: tcActShot},
		{op: opExit},
	}
}

// assemble resolves labels and encodes the program.
func assemble(prog []insn) ([]byte, error) {
	at := map[string]int{}
	for i, in := range prog {
		if in.label != "" {
			at[in.label] = i
		}
	}
	out := make([]byte, 0, 8*len(prog))
	for i, in := range prog {
		off := in.off
		if in.target != "" {
			t, ok := at[in.target]
			if !ok {
				return nil, fmt.Errorf("bpf: no label %q", in.target)
			}
			off = int16(t - i - 1)
		}
		var b [8]byte
		b[0] = in.op
		b[1] = in.dst&0xf | in.src<<4
		binary.LittleEndian.PutUint16(b[2:], uint16(off))
		binary.LittleEndian.PutUint32(b[4:], uint32(in.imm))
		out = append(out, b[:]...)
	}
	return out, nil
}

// bpfProgLoad is the head of union bpf_attr for BPF_PROG_LOAD.
type bpfProgLoad struct {
	progType    uint32
	insnCnt     uint32
	insns       uint64
	license     uint64
	logLevel    uint32
	logSize     uint32
	logBuf      uint64
	kernVersion uint32
	progFlags   uint32
	progName    [16]byte
}

// loadPortProgram loads the classifier for limit and returns its fd.
func loadPortProgram(limit int) (int, error) {
	code, err := assemble(portProgram(limit))
	if err != nil {
		return -1, err
	}
	license := []byte("GPL\x00")
	load := func(logBuf []byte) (int, error) {
		attr := bpfProgLoad{
			progType: unix.BPF_PROG_TYPE_SCHED_CLS,
			insnCnt:  uint32(len(code) / 8),
			insns:    uint64(uintptr(unsafe.Pointer(&code[0]))),
			license:  uint64(uintptr(unsafe.Pointer(&license[0]))),
		}
		if logBuf != nil {
			attr.logLevel, attr.logSize = 1, uint32(len(logBuf))
			attr.logBuf = uint64(uintptr(unsafe.Pointer(&logBuf[0])))
		}
		copy(attr.progName[:], "il_port_mtu")
		fd, _, errno := unix.Syscall(unix.SYS_BPF, unix.BPF_PROG_LOAD, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr))
		runtime.KeepAlive(code)
		runtime.KeepAlive(license)
		runtime.KeepAlive(logBuf)
		if errno != 0 {
			return -1, errno
		}
		return int(fd), nil
	}
	fd, err := load(nil)
	if err == nil {
		return fd, nil
	}
	// Load again with the verifier's log, which says what is wrong.
	logBuf := make([]byte, 64<<10)
	if fd, err2 := load(logBuf); err2 == nil {
		return fd, nil
	}
	return -1, fmt.Errorf("load port-MTU classifier: %w (%s)", err, strings.TrimSpace(string(logBuf[:clen(logBuf)])))
}

func clen(b []byte) int {
	for i, c := range b {
		if c == 0 {
			return i
		}
	}
	return len(b)
}
