// Package cluster runs interlink across the nodes of a real cluster over
// SSH, as Oracle's cluvfy does: it copies this binary to each node when the
// node has no identical one, starts an agent on every node with a one-run
// token, runs check on every node, proves the path MTU of every
// interconnect path with one mesh, stops the agents by PID, removes what it
// copied, and returns one report (schema interlink.cluster/v1).
//
// SSH is golang.org/x/crypto/ssh with the operator's known_hosts (never
// skipped: an unknown or changed host key refuses the node), ssh-agent,
// identity files and the HostName, User, Port, IdentityFile and
// UserKnownHostsFile of ~/.ssh/config. Nodes come from the command line or
// an inventory (ParseInventory).
package cluster

import (
	"net/netip"
	"time"

	"github.com/interlink/interlink/internal/mesh"
	"github.com/interlink/interlink/internal/rules"
)

// Schema is the schema of a Result.
const Schema = "interlink.cluster/v1"

// Node statuses (NodeResult.Status).
const (
	StatusOK          = "ok"          // every step ran
	StatusUnreachable = "unreachable" // SSH could not connect or log in
	StatusFailed      = "failed"      // reached, but a step on the node failed
	StatusStopped     = "stopped"     // the run ended (timeout, Ctrl-C) first
)

// Result is the outcome of a cluster run.
type Result struct {
	Schema string       `json:"schema"`
	Nodes  []NodeResult `json:"nodes"`
	// Mesh is the mesh over the nodes whose agent started; nil when fewer
	// than two did (MeshSkipped says so).
	Mesh        *mesh.Result `json:"mesh,omitempty"`
	MeshSkipped string       `json:"mesh_skipped,omitempty"`
	// Bench is the optional bench between pairs of nodes (--bench); nil
	// when none was asked for.
	Bench *Bench `json:"bench,omitempty"`
	// GC is the optional Cache Fusion workload over every node (--bench
	// gc); nil when none was asked for.
	GC *GC `json:"gc,omitempty"`
	// MeshFrom says where the mesh was orchestrated from.
	MeshFrom string `json:"mesh_from"`
	// Clusterware says where the nodes came from when they were read from
	// Oracle Clusterware's configuration (--clusterware); nil otherwise.
	Clusterware *Clusterware `json:"clusterware,omitempty"`
	Parallel    int          `json:"parallel"`
	// Stopped says why the run ended early (timeout, interrupt); empty
	// when it ran to the end. Cleanup ran either way.
	Stopped string        `json:"stopped,omitempty"`
	Elapsed time.Duration `json:"elapsed_ns"`
}

// NodeResult is what happened on one node.
type NodeResult struct {
	Name     string `json:"name"`
	HostName string `json:"hostname"` // what SSH dialed
	User     string `json:"user"`
	Port     int    `json:"port"`
	// Interconnect is the node's interconnect addresses (from the
	// inventory or the command line); empty: the SSH address.
	Interconnect []netip.Addr `json:"interconnect,omitempty"`
	// InterconnectFrom is "clusterware" when Interconnect was found on the
	// node itself (its addresses in the networks its GPnP profile marks
	// cluster_interconnect); empty when the inventory or command line gave it.
	InterconnectFrom string `json:"interconnect_from,omitempty"`
	Status           string `json:"status"`
	// Cause classes a node that is not ok: refused, timeout, auth,
	// host key, resolve, network, platform, remote, stall.
	Cause string `json:"cause,omitempty"`
	Error string `json:"error,omitempty"`
	// Stall is the transfer that stood still when the node was cut off
	// for it (cause stall), or when the run ended (status stopped); nil
	// otherwise.
	Stall *Stall `json:"stall,omitempty"`
	// Notes are things worth knowing that did not stop the node (an
	// encrypted identity skipped, a missing bundle).
	Notes    []string `json:"notes,omitempty"`
	Platform string   `json:"platform,omitempty"` // uname -sm
	// Binary is "copied" (into TempDir) or "present" (an identical
	// interlink on the node's PATH was used); BinaryPath is what ran.
	Binary     string `json:"binary,omitempty"`
	BinaryPath string `json:"binary_path,omitempty"`
	TempDir    string `json:"temp_dir,omitempty"`
	Agent      string `json:"agent,omitempty"` // the agent's address for the mesh
	AgentPID   int    `json:"agent_pid,omitempty"`
	// Check is the node's interlink.check/v1 result; CheckError says why
	// there is none.
	Check      *rules.Result `json:"check,omitempty"`
	CheckError string        `json:"check_error,omitempty"`
	Bundle     string        `json:"bundle,omitempty"` // local copy of check --collect's bundle
	Cleanup    Cleanup       `json:"cleanup"`
	// Steps times each step on the node, in order.
	Steps   []Step        `json:"steps,omitempty"`
	Elapsed time.Duration `json:"elapsed_ns"`
}

// Step is one step on a node and how long it took.
type Step struct {
	Name    string        `json:"name"` // connect, copy, agent, check, bundle, cleanup
	Elapsed time.Duration `json:"elapsed_ns"`
}

// Cleanup is what was removed from a node at the end.
type Cleanup struct {
	// Done: nothing of the run is left on the node (or nothing was made).
	Done    bool   `json:"done"`
	Stopped string `json:"stopped,omitempty"` // "agent PID N"
	Removed string `json:"removed,omitempty"` // the temp dir
	Error   string `json:"error,omitempty"`   // what may be left, and why
	// Reconnected: the run's SSH connection had been cut (a stalled
	// transfer, the run's end), and the cleanup ran over a new one.
	Reconnected bool `json:"reconnected,omitempty"`
}

// Counts tallies the nodes by status.
func (r *Result) Counts() map[string]int {
	c := map[string]int{}
	for _, n := range r.Nodes {
		c[n.Status]++
	}
	return c
}
