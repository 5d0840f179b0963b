package lab

import (
	"context"

	"github.com/vishvananda/netlink"
)

// nodeKind is what one kind of lab node does: a network namespace on this
// host (nsNode) or a virtual machine with a kernel of its own (vmNode).
// kindOf picks a node's; Up, Inspect, Node.Exec, status and Down ask it
// instead of asking what the node is. A method acts on nodes of its own
// kind only.
type nodeKind interface {
	// plan settles, before anything is built, what the kind's nodes of t
	// need from the host (a VM's kernel and qemu), into cfg.
	plan(ctx context.Context, t *Topology, nodes []*NodeSpec, cfg *upConfig) error
	// namespace is the node's network namespace on this host, "" when it
	// has none.
	namespace(lab, node string) string
	// build makes the nodes, with their links, addresses and routes, once
	// the switches exist.
	build(ctx context.Context, b *builder, nodes []*NodeSpec) error
	// startService starts service s of node n and records it; a kind
	// whose nodes start their own services (a VM's guest, at boot) does
	// nothing.
	startService(ctx context.Context, b *builder, n *Node, s *ServiceSpec, password string) error
	// inspect reads a node back and lists where it differs from n.
	inspect(in *inspection, n NodeSpec) NodeStatus
	// serviceStatus is service spec of node i as found now.
	serviceStatus(in *serviceInspector, i int, spec ServiceSpec) ServiceStatus
	// exec runs argv in node n with env added to its environment, and
	// returns its exit code.
	exec(ctx context.Context, n *Node, argv, env []string, io execIO) (int, error)
	// stop stops what runs the kind's nodes, as st records it, before
	// Down kills what is left in the lab's namespaces and removes them.
	stop(st *state) error
}

// The kinds, in the order Up builds them: a VM's guest finds its
// namespace neighbours up when it boots.
var kinds = []nodeKind{nsNode{}, vmNode{}}

// kindOf returns the kind of node n.
func kindOf(n *NodeSpec) nodeKind {
	if n.IsVM() {
		return vmNode{}
	}
	return nsNode{}
}

// nodesOf returns t's nodes of kind k, in topology order.
func nodesOf(t *Topology, k nodeKind) []*NodeSpec {
	var out []*NodeSpec
	for i := range t.Nodes {
		if kindOf(&t.Nodes[i]) == k {
			out = append(out, &t.Nodes[i])
		}
	}
	return out
}

// namespaceOf is node's namespace on this host, "" when it has none.
func namespaceOf(lab string, n *NodeSpec) string { return kindOf(n).namespace(lab, n.Name) }

// inspection is what Inspect reads a lab's nodes with: its record, the
// switch namespace's netlink handle (nil when missing), a namespace
// opener and where problems go.
type inspection struct {
	st      *state
	swh     *netlink.Handle
	open    func(ns string) (*netlink.Handle, func())
	problem func(format string, a ...any)
}

// nsNode is a node that is a network namespace of this host.
type nsNode struct{}

func (nsNode) plan(context.Context, *Topology, []*NodeSpec, *upConfig) error { return nil }

func (nsNode) namespace(lab, node string) string { return nodeNS(lab, node) }

// build makes each node's links, addresses and routes in its namespace
// (created and recorded before), then the static neighbour entries
// between them (neigh_linux.go).
func (nsNode) build(ctx context.Context, b *builder, nodes []*NodeSpec) error {
	for _, n := range nodes {
		if err := b.node(ctx, n); err != nil {
			return err
		}
	}
	return b.neighbours()
}

func (nsNode) startService(ctx context.Context, b *builder, n *Node, s *ServiceSpec, password string) error {
	return b.service(ctx, n, s, password)
}

func (nsNode) inspect(in *inspection, n NodeSpec) NodeStatus {
	ns := nodeNS(in.st.Name, n.Name)
	h, closeNode := in.open(ns)
	defer closeNode()
	return inspectNode(h, in.swh, n, ns, in.problem)
}

func (nsNode) serviceStatus(in *serviceInspector, i int, spec ServiceSpec) ServiceStatus {
	return in.service(i, spec)
}

func (nsNode) exec(ctx context.Context, n *Node, argv, env []string, io execIO) (int, error) {
	return execInNamespace(ctx, n, argv, env, io)
}

// stop stops the services recorded for the namespace nodes (databases
// shut down cleanly); killProcesses ends the rest.
func (nsNode) stop(st *state) error { return stopServices(st) }
