// Package topology is the lab model: what a topology file says, parsed
// (Parse, Load; strictly, every error a *TopologyError naming the file,
// the line and the field), validated (Topology.Validate) and written back
// as YAML (Topology.MarshalYAML), the built-in topologies, and the
// changes `lab set` makes (ParseSettings, Apply). It reads and checks
// only: building a topology in the kernel is package lab's job, so a
// package that only makes or reads topologies (replica) does not import
// netlink.
package topology

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
)

// Topology is a validated lab description. Parse fills every default of
// the file format (link names, MTUs, port MTUs) and Validate the rest
// (switch-side port names, service ports, a standby's switch), so the
// values here are exactly what Up builds.
type Topology struct {
	Name     string       `json:"name"`
	File     string       `json:"file,omitempty"` // where it was read from: a path or "builtin:NAME"
	Switches []SwitchSpec `json:"switches"`
	Nodes    []NodeSpec   `json:"nodes"`
}

// SwitchSpec is a switch: a bridge in the lab's switch namespace. MTU is the
// bridge's MTU and the default MTU of its ports and links.
type SwitchSpec struct {
	Name string `json:"name"`
	MTU  int    `json:"mtu"`
}

// NodeSpec is a node: a network namespace with links into switches.
// Forward makes it a router (IPv4 and IPv6 forwarding on).
type NodeSpec struct {
	Name    string      `json:"name"`
	Forward bool        `json:"forward,omitempty"`
	Links   []LinkSpec  `json:"links"`
	Routes  []RouteSpec `json:"routes,omitempty"`
	// Services the node runs while the lab is up (service.go).
	Services []ServiceSpec `json:"services,omitempty"`
	// VM, when not nil, makes the node a virtual machine (topology_vm.go).
	VM *VMSpec `json:"vm,omitempty"`
}

// Addresses returns the addresses of all the node's links, in order.
func (n NodeSpec) Addresses() []netip.Prefix {
	var out []netip.Prefix
	for _, l := range n.Links {
		out = append(out, l.Addresses...)
	}
	return out
}

// LinkSpec is one veth pair: Name inside the node, Port on the switch side.
// MTU is the node side's MTU, PortMTU the switch side's: frames larger than
// PortMTU are dropped without an ICMP error. RateBitsPerSec, when not zero,
// shapes the node's egress with a token bucket. LossPercent, when not zero,
// is the share of frames the switch port drops at random, in each
// direction (a path across two lossy ports meets both).
type LinkSpec struct {
	Name           string         `json:"name"`
	Switch         string         `json:"switch"`
	Port           string         `json:"port"`
	Addresses      []netip.Prefix `json:"addresses,omitempty"`
	MTU            int            `json:"mtu"`
	PortMTU        int            `json:"port_mtu"`
	RateBitsPerSec int64          `json:"rate_bits_per_sec,omitempty"`
	LossPercent    float64        `json:"loss_percent,omitempty"`
}

// RouteSpec is a static route in a node: To (a prefix; "default" in the file
// means 0.0.0.0/0 or ::/0) via a gateway on one of the node's links.
type RouteSpec struct {
	To  netip.Prefix `json:"to"`
	Via netip.Addr   `json:"via"`
}

// Limits of what a topology may ask for.
const (
	MinMTU  = 68    // the IPv4 minimum (RFC 791)
	MaxMTU  = 65535 // the largest MTU a veth accepts
	MinMTU6 = 1280  // a link with an IPv6 address needs at least this (RFC 8200)
	// MinRateBitsPerSec and MaxRateBitsPerSec bound a link's rate.
	MinRateBitsPerSec = 8_000
	MaxRateBitsPerSec = 400_000_000_000
	// MinLossPercent and MaxLossPercent bound a link's loss other than 0:
	// the port filter draws a 32-bit random number per frame, and one frame
	// in 100 000 is far above its resolution.
	MinLossPercent = 0.001
	MaxLossPercent = 100
	// MaxSwitchPorts is the most links one switch takes: a Linux bridge has
	// at most BR_MAX_PORTS (1 << BR_PORT_BITS = 1024) ports, and the 1025th
	// would fail only when lab up adds it.
	MaxSwitchPorts = 1024
	// MaxNodes is the most nodes a lab takes (each is a namespace, and
	// lab up builds them one after the other): two full switches' worth.
	// 10 000 nodes without links passed validation and lab up set out to
	// build 10 000 namespaces.
	MaxNodes   = 2 * MaxSwitchPorts
	maxNameLen = 24 // lab and node names; namespaces are il-LAB.NODE
)

// ErrInvalid is wrapped by every error about a topology.
var ErrInvalid = errors.New("invalid topology")

// TopologyError is one problem with a topology: the field it is in, as a
// path like nodes.db1.links[1].mtu, and what is wrong with it. Validate
// returns it with Lab set; Parse adds the file, the line and the file's
// own spelling of the field (nodes.n1.links[0].address where Validate says
// addresses[0]). It prints as "FILE:LINE: FIELD: PROBLEM", or without a
// file as "lab LAB: invalid topology: FIELD: PROBLEM".
type TopologyError struct {
	File    string // "" when the topology was not read from a file
	Line    int    // 0 when unknown
	Lab     string // the lab's name, when it has one
	Field   string // "" for the whole topology
	Problem string
	// First is the field that already holds a value this one repeats (a
	// duplicate address), FirstLine its line when known.
	First     string
	FirstLine int
}

func (e *TopologyError) Error() string {
	var b strings.Builder
	switch {
	case e.File != "":
		b.WriteString(e.File)
		if e.Line > 0 {
			fmt.Fprintf(&b, ":%d", e.Line)
		}
		b.WriteString(": ")
	case e.Lab != "":
		fmt.Fprintf(&b, "lab %s: %s: ", e.Lab, ErrInvalid)
	default:
		fmt.Fprintf(&b, "%s: ", ErrInvalid)
	}
	if e.Field != "" {
		b.WriteString(e.Field + ": ")
	}
	b.WriteString(e.Problem)
	if e.First != "" {
		fmt.Fprintf(&b, " (already used by %s", e.First)
		if e.FirstLine > 0 {
			fmt.Fprintf(&b, " at line %d", e.FirstLine)
		}
		b.WriteString(")")
	}
	return b.String()
}

// Is makes errors.Is(err, ErrInvalid) true.
func (e *TopologyError) Is(target error) bool { return target == ErrInvalid }
