package lab

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/interlink/interlink/internal/atomicfile"
	"github.com/interlink/interlink/internal/lab/topology"
)

// Errors callers test with errors.Is.
var (
	// ErrNotFound: no lab of that name is recorded in the state directory.
	ErrNotFound = errors.New("no such lab")
	// ErrPrivilege: building or entering a lab needs CAP_NET_ADMIN (and
	// CAP_SYS_ADMIN for namespaces and mounts), i.e. root.
	ErrPrivilege = errors.New("CAP_NET_ADMIN (root) is required")
	// ErrIncomplete: the lab's Up did not finish (it failed or was killed);
	// Down removes what it made.
	ErrIncomplete = errors.New("lab is incomplete (its up did not finish); run 'interlink lab down'")
)

// StateDir is where labs record their state (NAME.json, NAME.lock) and keep
// their files (NAME.d, see Lab.Dir). The
// environment variable INTERLINK_LAB_DIR, when set, takes precedence, so a
// test can keep its labs apart from everyone else's.
var StateDir = "/run/interlink/labs"

func stateDir() string {
	if d := os.Getenv("INTERLINK_LAB_DIR"); d != "" {
		return d
	}
	return StateDir
}

// NetnsDir is where named network namespaces live (as ip-netns(8) keeps
// them, so `ip netns` lists lab nodes too).
const NetnsDir = "/run/netns"

// Namespace names: the lab's switches live in "il-LAB", node N in
// "il-LAB.N". Lab and node names cannot contain '.', so two labs never
// share a namespace name.
func switchNS(lab string) string     { return "il-" + lab }
func nodeNS(lab, node string) string { return "il-" + lab + "." + node }
func nsPath(name string) string      { return filepath.Join(NetnsDir, name) }
func statePath(lab string) string    { return filepath.Join(stateDir(), lab+".json") }
func lockPath(lab string) string     { return filepath.Join(stateDir(), lab+".lock") }
func labDir(lab string) string       { return filepath.Join(stateDir(), lab+".d") }

// nodeDir is the directory of a node's files (a VM's initramfs, console
// and sockets, a service's data): LAB.d/nodes/NODE, apart from the lab's
// own files in LAB.d (agent.token, id_ed25519, known_hosts), which a node
// may be named after. A lab brought up before nodes/ kept them in
// LAB.d/NODE; what runs there is found by the directory its state records
// (vmState.Dir, serviceState.Dir), and Down removes LAB.d whole.
func nodeDir(lab, node string) string { return filepath.Join(nodesDir(lab), node) }
func nodesDir(lab string) string      { return filepath.Join(labDir(lab), "nodes") }

// passableDir makes dir (mode 0711, also when it was there) so that users
// a lab's processes run as (qemu's, a database's) pass it.
func passableDir(dir string) error {
	if err := os.MkdirAll(dir, 0o711); err != nil {
		return err
	}
	return os.Chmod(dir, 0o711)
}

// AgentTokenFile is the token file of the agents a lab's nodes run (its
// agent services), in the lab's directory.
func AgentTokenFile(lab string) string { return filepath.Join(labDir(lab), "agent.token") }

func isLabNS(lab, name string) bool {
	return name == switchNS(lab) || strings.HasPrefix(name, switchNS(lab)+".")
}
func validName(lab string) error { return topology.CheckLabName(lab) }
func nsExists(name string) bool  { _, err := os.Stat(nsPath(name)); return err == nil }

// state is what a lab records about itself, rewritten before every
// namespace it creates, so that Down finds everything after a crash.
type state struct {
	Name       string    `json:"name"`
	Topology   *Topology `json:"topology"`
	Namespaces []string  `json:"namespaces"` // in creation order
	// Services started (or being started) in the nodes, each recorded
	// before it starts, in start order.
	Services []serviceState `json:"services,omitempty"`
	// VMs booted (or being booted) for VM nodes, each recorded before its
	// taps are made and again with qemu's PID (vmnode_linux.go).
	VMs      []vmState `json:"vms,omitempty"`
	Complete bool      `json:"complete"` // Up finished
	PID      int       `json:"pid"`      // the process that ran Up
	Created  time.Time `json:"created"`
}

func readState(lab string) (*state, error) {
	data, err := os.ReadFile(statePath(lab))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("lab %s: %w", lab, ErrNotFound)
		}
		return nil, fmt.Errorf("lab %s: read state: %w", lab, err)
	}
	var s state
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("lab %s: state file %s is damaged: %w", lab, statePath(lab), err)
	}
	return &s, nil
}

// write replaces the state file atomically (temp file, fsync, rename), so a
// kill at any moment leaves the old or the new record, never half of one
// (and perhaps the temporary file, which Down removes). beforeRename, when
// not nil, runs between the two (a test hook); its error ends the write.
func (s *state) write(beforeRename func() error) error {
	if err := os.MkdirAll(stateDir(), 0o755); err != nil {
		return fmt.Errorf("lab %s: state dir: %w", s.Name, err)
	}
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("lab %s: encode state: %w", s.Name, err)
	}
	// A fixed temporary name, so Labs and Down find what a killed write left.
	opt := atomicfile.Options{Mode: 0o644, Temp: filepath.Base(statePath(s.Name)) + ".tmp", BeforeRename: beforeRename}
	if err := atomicfile.WriteFile(statePath(s.Name), append(data, '\n'), opt); err != nil {
		return fmt.Errorf("lab %s: write state: %w", s.Name, err)
	}
	return nil
}

// Labs returns the names of the labs recorded in the state directory,
// sorted, whether complete or not: a NAME.json, or only what a lab up
// killed before its first record was renamed left (NAME.json.tmp, the
// NAME.d directory), which Down removes too.
func Labs() ([]string, error) {
	entries, err := os.ReadDir(stateDir())
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("lab: list %s: %w", stateDir(), err)
	}
	seen := map[string]bool{}
	var names []string
	for _, e := range entries {
		for _, suffix := range []string{".json", ".json.tmp", ".d"} {
			if n, ok := strings.CutSuffix(e.Name(), suffix); ok && validName(n) == nil && !seen[n] {
				seen[n] = true
				names = append(names, n)
			}
		}
	}
	sort.Strings(names)
	return names, nil
}

// leftovers lists the files of lab name other than its record.
func leftovers(name string) []string {
	var out []string
	for _, f := range labFiles(name) {
		if _, err := os.Lstat(f); err == nil {
			out = append(out, f)
		}
	}
	return out
}

// Lab is a lab that is up. It holds no open resources: a Lab value can be
// dropped without closing, and stays valid until Down.
type Lab struct {
	topo  *Topology
	nodes []*Node
}

func newLab(t *Topology) *Lab {
	l := &Lab{topo: t}
	for i := range t.Nodes {
		l.nodes = append(l.nodes, &Node{lab: l, spec: &t.Nodes[i], ns: namespaceOf(t.Name, &t.Nodes[i])})
	}
	return l
}

// Name returns the lab's name.
func (l *Lab) Name() string { return l.topo.Name }

// Dir returns a directory that belongs to the lab, for files that live as
// long as it does (a token, logs): it is StateDir/NAME.d, created (mode
// 0700) on the first call, and Down removes it with everything in it, also
// when the process that wrote them was killed.
func (l *Lab) Dir() (string, error) {
	d := labDir(l.topo.Name)
	if err := os.MkdirAll(d, 0o700); err != nil {
		return "", fmt.Errorf("lab %s: %w", l.topo.Name, err)
	}
	return d, nil
}

// Topology returns the topology the lab was built from (do not modify it).
func (l *Lab) Topology() *Topology { return l.topo }

// Node returns the node called name.
func (l *Lab) Node(name string) (*Node, error) {
	for _, n := range l.nodes {
		if n.spec.Name == name {
			return n, nil
		}
	}
	names := make([]string, len(l.nodes))
	for i, n := range l.nodes {
		names[i] = n.spec.Name
	}
	return nil, fmt.Errorf("lab %s: no node %q (nodes: %s)", l.topo.Name, name, strings.Join(names, ", "))
}

// Nodes returns the nodes in the order of the topology file.
func (l *Lab) Nodes() []*Node { return append([]*Node(nil), l.nodes...) }

// Node is one node of a lab: a network namespace, or a VM with a kernel
// of its own.
type Node struct {
	lab  *Lab
	spec *NodeSpec
	ns   string // "" for a node without a namespace here (a VM)
}

// environ is what a node's commands find in their environment, whatever
// the node's kind: the one place it is set.
func (n *Node) environ() []string {
	return []string{"INTERLINK_LAB=" + n.lab.Name(), "INTERLINK_NODE=" + n.spec.Name}
}

// Name returns the node's name in the topology (node1, r1, ...).
func (n *Node) Name() string { return n.spec.Name }

// Namespace returns the name of the node's network namespace, as
// `ip netns` lists it (il-LAB.NODE); "" for a VM node, which has none.
func (n *Node) Namespace() string { return n.ns }

// Spec returns the node's part of the topology (do not modify it).
func (n *Node) Spec() *NodeSpec { return n.spec }

// Addrs returns the addresses of all the node's links, IPv4 and IPv6, in
// topology order.
func (n *Node) Addrs() []netip.Prefix { return n.spec.Addresses() }

// Addr returns the node's first address of the given IP version (4 or 6)
// on the link that goes into switch sw, or the first one on any link when sw
// is "". It is the zero Addr when there is none.
func (n *Node) Addr(sw string, version int) netip.Addr {
	for _, l := range n.spec.Links {
		if sw != "" && l.Switch != sw {
			continue
		}
		for _, a := range l.Addresses {
			if a.Addr().Is4() == (version == 4) {
				return a.Addr()
			}
		}
	}
	return netip.Addr{}
}
