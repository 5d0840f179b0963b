// Package replica makes a lab topology out of what interlink measured on a
// real cluster, so that a change can be tried on the cluster as it is
// before a maintenance window: `interlink lab replica RUN`.
//
// RUN is what `interlink cluster --collect DIR --json` produced (each
// node's check bundle and the measured mesh) or a directory of `check
// --collect` bundles. Build gives one lab node per cluster node, named as
// the cluster names it; the interconnect, storage and public interfaces
// with their addresses, MTUs and routes (a bond, VLAN or bridge becomes
// the one link a lab builds, and the topology says so); one switch per
// subnet; a switch port at the size where the mesh found a blackhole
// toward a node; a router with the MTU an ICMP-limited hop reported; an
// agent on every node and an NFS server where the nodes mount one. What
// it cannot reproduce is listed in Replica.Limits, and every measured path
// is checked against what the replica will give (Replica.Predicted).
package replica

import (
	"net/netip"

	"github.com/interlink/interlink/internal/lab/topology"
)

// Schema is the schema of `interlink lab replica --json`.
const Schema = "interlink.replica/v1"

// DefaultName is the replica lab's name unless Options.Name says another.
const DefaultName = "replica"

// MaxNodes is the most cluster nodes a replica takes: the nodes of a
// cluster share their networks, and a lab's switch (a Linux bridge) has
// at most topology.MaxSwitchPorts ports.
const MaxNodes = topology.MaxSwitchPorts

// Options tune Build.
type Options struct {
	Name string // the lab's name (default DefaultName)
}

// Replica is a lab topology made from a run, what was decided to make it,
// and what it cannot reproduce.
type Replica struct {
	Schema   string             `json:"schema"`
	From     string             `json:"from"` // the RUN
	Kind     string             `json:"kind"` // KindCluster or KindBundles
	Topology *topology.Topology `json:"topology"`
	Nodes    []NodeMap          `json:"nodes"`
	// Measured says whether the run measured the paths (a mesh).
	Measured bool `json:"measured"`
	// Expect is the measured mesh's expected MTU (0: none), for a mesh in
	// the replica that judges the same.
	Expect int `json:"expect,omitempty"`
	// Decisions say what the replica took from the measured paths: switch
	// ports, routers and their MTUs, forwarding nodes.
	Decisions []string `json:"decisions"`
	// Notes say how the cluster was mapped: bonds and VLANs made one link,
	// interfaces left out, addresses made up.
	Notes []string `json:"notes"`
	// Limits are what the replica cannot reproduce.
	Limits []string `json:"limits"`
	// Predicted compares each measured path with what the replica gives.
	Predicted []Prediction `json:"predicted,omitempty"`

	comments comments // for the topology file, by node and link
}

// NodeMap is one cluster node and its lab node.
type NodeMap struct {
	Cluster string `json:"cluster"` // the name in the run (and in its mesh)
	Lab     string `json:"lab"`     // the lab node's name
	Bundle  string `json:"bundle,omitempty"`
	// Agent is where a mesh in the replica reaches the node's agent.
	Agent netip.AddrPort `json:"agent"`
	// Mesh is the node's interconnect addresses in the run's mesh order.
	Mesh []netip.Addr `json:"mesh,omitempty"`
	// Interconnect names the links that carry the interconnect, for
	// check --interconnect in the replica node and on the bundle.
	Interconnect []string `json:"interconnect,omitempty"`
}

// Prediction is one measured path and what the replica gives for it.
type Prediction struct {
	Path     string `json:"path"` // "node1 -> node3, network 2"
	Measured string `json:"measured"`
	Replica  string `json:"replica"`
	Same     bool   `json:"same"`
}

// comments are the topology file's comments: one per switch, node and
// link, keyed by lab names.
type comments struct {
	nodes map[string][]string
	links map[[2]string]string
	sws   map[string]string
}
