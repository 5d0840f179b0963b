package lab

import (
	"net/netip"
	"time"

	"github.com/interlink/interlink/internal/ebpf"
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
	Namespace string       `json:"namespace,omitempty"` // "" for a VM node
	Forward   bool         `json:"forward"`
	Links     []LinkStatus `json:"links"`
	Routes    []RouteSpec  `json:"routes"` // routes with a gateway
	// Services the node runs (topology services), as found now.
	Services []ServiceStatus `json:"services,omitempty"`
	// VM is the virtual machine of a VM node (nil for a namespace node,
	// whose Namespace is set instead).
	VM *VMStatus `json:"vm,omitempty"`
}

// ServiceStatus is a service of a node as found now.
type ServiceStatus struct {
	Kind  string `json:"kind"`           // agent, postgres, nfs or galera
	Role  string `json:"role,omitempty"` // postgres: primary or standby
	State string `json:"state"`          // ServiceRunning, ServiceStopped, ServiceNotStarted, ServiceUnknown
	// Reason says why it is not running, where that is known (a VM node's
	// guest says so, or does not answer).
	Reason string `json:"reason,omitempty"`
	// PID is its process while it runs: in a VM node, its PID in the
	// guest.
	PID int `json:"pid,omitempty"`
	// Address is where the lab's nodes reach it (host:port on the node's
	// first link); Listen lists every address it serves.
	Address string   `json:"address"`
	Listen  []string `json:"listen"`
	// DSN is a postgres:// URL (superuser "postgres", its password) or, for
	// a galera member, a mysql:// URL (account interlink, database sbtest)
	// usable from the lab's nodes; TokenFile is the agent's token.
	DSN string `json:"dsn,omitempty"`
	// URL is an nfs://SERVER/EXPORT for `storage bench` (nfs service).
	URL       string `json:"url,omitempty"`
	TokenFile string `json:"token_file,omitempty"`
	Dir       string `json:"dir,omitempty"` // its files (data, log)
	Log       string `json:"log,omitempty"`
	Detail    string `json:"detail,omitempty"` // e.g. "synchronous standby of primary via ic"
}

// Service states.
const (
	ServiceRunning    = "running"     // its process is there and answers on its port
	ServiceStopped    = "stopped"     // recorded, but not running or not answering
	ServiceNotStarted = "not-started" // the lab's Up did not get to it
	ServiceUnknown    = "unknown"     // a VM node's guest did not answer in time (GuestTimeout)
)

// LinkStatus is one link of a node: MTU and addresses of the node side,
// PortMTU enforced on the switch side, RateBitsPerSec from the node's tbf
// qdisc (0: not shaped), LossPercent the share of frames the switch port
// drops at random in each direction (0: none), and PortFilter what the
// port's classifier dropped (nil when the port has none).
type LinkStatus struct {
	Name           string         `json:"name"`
	Switch         string         `json:"switch"`
	Port           string         `json:"port"`
	State          string         `json:"state"` // the node side's operational state
	MAC            string         `json:"mac,omitempty"`
	MTU            int            `json:"mtu"`
	PortMTU        int            `json:"port_mtu"`
	RateBitsPerSec int64          `json:"rate_bits_per_sec"`
	LossPercent    float64        `json:"loss_percent"`
	Addresses      []netip.Prefix `json:"addresses"`
	PortFilter     *PortFilter    `json:"port_filter,omitempty"`
}

// PortFilter is what a switch port's classifier counted since it was
// attached (lab up, or the lab set that last touched its switch), in each
// direction it filters: FromNode the frames the node sent, ToNode those
// it was sent. A direction without a classifier is nil.
type PortFilter struct {
	FromNode *ebpf.Counters `json:"from_node,omitempty"`
	ToNode   *ebpf.Counters `json:"to_node,omitempty"`
}
