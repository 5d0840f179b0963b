package ebpf

import (
	"fmt"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// progName is the classifier's name in the kernel (bpftool prog list).
const progName = "il_port"

// Direction names one side of a switch port's classifier: FromNode is
// tc ingress on the switch-side veth (frames the node sends), ToNode tc
// egress (frames the node gets).
type Direction int

// The two directions of a port.
const (
	FromNode Direction = iota
	ToNode
)

func (d Direction) parent() uint32 {
	if d == FromNode {
		return netlink.HANDLE_MIN_INGRESS
	}
	return netlink.HANDLE_MIN_EGRESS
}

// Attach gives switch port a clsact qdisc and the classifier of each
// direction that filters anything (Port.Filters). The port must have no
// clsact yet. On an error, what was added stays: the caller removes the
// port's clsact (or the port).
func Attach(h *netlink.Handle, port netlink.Link, fromNode, toNode Port) error {
	idx := port.Attrs().Index
	clsact := &netlink.GenericQdisc{
		QdiscAttrs: netlink.QdiscAttrs{LinkIndex: idx, Handle: netlink.MakeHandle(0xffff, 0), Parent: netlink.HANDLE_CLSACT},
		QdiscType:  "clsact",
	}
	if err := h.QdiscAdd(clsact); err != nil {
		return fmt.Errorf("add clsact: %w", err)
	}
	for d, p := range []Port{fromNode, toNode} {
		if !p.Filters() {
			continue
		}
		f, err := Load(p, progName)
		if err != nil {
			return err
		}
		err = h.FilterAdd(&netlink.BpfFilter{
			FilterAttrs: netlink.FilterAttrs{
				LinkIndex: idx, Parent: Direction(d).parent(), Handle: 1, Priority: 1, Protocol: unix.ETH_P_ALL,
			},
			Fd: f.Prog, Name: filterName(p), DirectAction: true,
		})
		f.Close() // the filter keeps the program, and the program its map
		if err != nil {
			return fmt.Errorf("add port filter: %w", err)
		}
	}
	return nil
}

// Installed is the classifier of one direction of a port as the kernel
// has it: what it does (from its filter's name) and its counters.
type Installed struct {
	Port     Port
	Counters Counters
}

// Read returns port's classifier in direction d: nil (and no error) when
// that direction has none of ours.
func Read(h *netlink.Handle, port netlink.Link, d Direction) (*Installed, error) {
	fs, err := h.FilterList(port, d.parent())
	if err != nil {
		return nil, err
	}
	for _, f := range fs {
		bf, ok := f.(*netlink.BpfFilter)
		if !ok || bf.Id == 0 {
			continue
		}
		p, ok := parseFilterName(bf.Name)
		if !ok {
			continue
		}
		c, err := CountersByID(uint32(bf.Id))
		if err != nil {
			return nil, err
		}
		return &Installed{Port: p, Counters: c}, nil
	}
	return nil, nil
}
