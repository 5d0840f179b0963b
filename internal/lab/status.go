package lab

import (
	"net/netip"
	"time"
)

// Status is what a lab looks like now, read from the kernel (not from the
// topology): what `lab status` shows.
type Status struct {
	Name      string         `json:"name"`
	File      string         `json:"file,omitempty"`
	State     string         `json:"state"`     // StateUp, StateIncomplete or StateDamaged
	Namespace string         `json:"namespace"` // the namespace of the lab's switches
	Created   time.Time      `json:"created"`
	Problems  []string       `json:"problems,omitempty"` // how the kernel differs from the topology
	Switches  []SwitchStatus `json:"switches"`
	Nodes     []NodeStatus   `json:"nodes"`
}

// Lab states.
const (
	StateUp         = "up"         // everything the topology says is there
	StateBuilding   = "building"   // an Up is running now
	StateIncomplete = "incomplete" // Up did not finish (failed or killed)
	StateDamaged    = "damaged"    // complete once, but something is missing or changed
)

// SwitchStatus is a switch (bridge) as the kernel has it.
type SwitchStatus struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	MTU       int    `json:"mtu"`
}

// NodeStatus is a node as the kernel has it.
type NodeStatus struct {
	Name      string       `json:"name"`
	Namespace string       `json:"namespace"`
	Forward   bool         `json:"forward"`
	Links     []LinkStatus `json:"links"`
	Routes    []RouteSpec  `json:"routes"` // routes with a gateway
}

// LinkStatus is one link of a node: MTU and addresses of the node side,
// PortMTU enforced on the switch side, RateBitsPerSec from the node's tbf
// qdisc (0: not shaped).
type LinkStatus struct {
	Name           string         `json:"name"`
	Switch         string         `json:"switch"`
	Port           string         `json:"port"`
	State          string         `json:"state"` // the node side's operational state
	MAC            string         `json:"mac,omitempty"`
	MTU            int            `json:"mtu"`
	PortMTU        int            `json:"port_mtu"`
	RateBitsPerSec int64          `json:"rate_bits_per_sec"`
	Addresses      []netip.Prefix `json:"addresses"`
}
