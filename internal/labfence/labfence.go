// Package labfence keeps a lab's addresses inside the lab. A lab's nodes
// live in network namespaces of their own; from anywhere else (the host,
// or another lab) their addresses are not on any link, so a packet to one
// follows the default route and leaves the machine, where something else
// may answer. Before a command sends to an address, Find says whether a
// lab that is up owns it while this process runs outside that lab, and
// which node of the lab to run the command from instead.
package labfence

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/interlink/interlink/internal/lab"
	"github.com/interlink/interlink/internal/shellq"
)

// An Owner is a lab that is up and owns an address this process was about
// to send to from outside the lab.
type Owner struct {
	Lab  string     // the lab's name
	Node string     // the node that has Addr
	Addr netip.Addr // the address asked for
	From string     // a node of the lab to run the command from (on Addr's network when one is)
}

// Find returns the first of addrs that a lab that is up owns while this
// process runs in none of that lab's namespaces, or nil. Labs reuse
// addresses (every built-in's are 198.18.x.y), so a process inside one
// lab that owns the address is where it should be, whichever other labs
// own it too. Invalid addresses (names not resolved) are passed over. A
// lab that cannot be read (not up, a damaged record, no privilege to see
// it) owns nothing.
func Find(addrs []netip.Addr) *Owner {
	if len(addrs) == 0 {
		return nil
	}
	names, err := lab.Labs()
	if err != nil {
		return nil
	}
	var first *Owner
	for _, name := range names {
		l, err := lab.Open(name)
		if err != nil {
			continue
		}
		o := owner(l.Topology(), addrs)
		if o == nil {
			continue
		}
		if inside(l) {
			return nil
		}
		if first == nil {
			first = o
		}
	}
	return first
}

// owner returns the Owner of the first of addrs that a node of t has.
func owner(t *lab.Topology, addrs []netip.Addr) *Owner {
	for _, a := range addrs {
		a = a.Unmap()
		if !a.IsValid() {
			continue
		}
		for _, n := range t.Nodes {
			for _, p := range n.Addresses() {
				if p.Addr() == a {
					return &Owner{Lab: t.Name, Node: n.Name, Addr: a, From: from(t, n.Name, a)}
				}
			}
		}
	}
	return nil
}

// from picks the node to run from: the first other node with an address
// on a's network, else the first other node, else the owner itself.
func from(t *lab.Topology, owner string, a netip.Addr) string {
	other := ""
	for _, n := range t.Nodes {
		if n.Name == owner {
			continue
		}
		if other == "" {
			other = n.Name
		}
		for _, p := range n.Addresses() {
			if p.Masked().Contains(a) {
				return n.Name
			}
		}
	}
	if other == "" {
		return owner
	}
	return other
}

// inside reports whether this process runs in one of l's namespaces.
func inside(l *lab.Lab) bool {
	for _, n := range l.Nodes() {
		if sameNetns(n.Namespace()) {
			return true
		}
	}
	return false
}

// Error is the refusal: one line naming the lab, the node and the command
// to run instead. argv is the command line as given (without the program).
func (o *Owner) Error(cmd string, argv []string) string {
	run := shellq.Join(append([]string{"interlink", "lab", "exec", o.Lab, o.From, "--", "interlink"}, argv...)...)
	return fmt.Sprintf("%s: %s is %s's address in lab %s, and this runs outside the lab (its packets would leave this machine; none was sent); run it inside: %s",
		cmd, o.Addr, o.Node, o.Lab, run)
}

// Addrs parses the IP literals among hosts (HOST, HOST:PORT, [V6]:PORT);
// names are left out.
func Addrs(hosts ...string) []netip.Addr {
	var out []netip.Addr
	for _, h := range hosts {
		if ap, err := netip.ParseAddrPort(h); err == nil {
			out = append(out, ap.Addr())
			continue
		}
		if a, err := netip.ParseAddr(strings.Trim(h, "[]")); err == nil {
			out = append(out, a)
		}
	}
	return out
}
