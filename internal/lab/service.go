package lab

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Service kinds and PostgreSQL roles a topology can declare on a node.
const (
	KindAgent    = "agent"    // interlink agent with the lab's token
	KindPostgres = "postgres" // a PostgreSQL server (Role primary or standby)
	KindNFS      = "nfs"      // nfs-ganesha exporting a directory of the lab over NFSv3
	RolePrimary  = "primary"
	RoleStandby  = "standby"
	// Default ports of the services, in the node's own namespace.
	AgentPort    = 7471
	PostgresPort = 5432
	NFSPort      = 2049
)

// ServiceSpec is a service a node runs while the lab is up: started by Up
// inside the node's namespace (after every link exists), stopped by Down.
// A node runs at most one service of each kind.
//
// For a standby, Primary names the node whose PostgreSQL it copies and
// follows, Via the switch the base backup and the WAL stream cross (the
// first switch both nodes are on when empty), and Sync makes it a
// synchronous standby: the primary's commits wait until it has flushed
// them (synchronous_standby_names).
type ServiceSpec struct {
	Kind    string `json:"kind"`
	Role    string `json:"role,omitempty"`
	Primary string `json:"primary,omitempty"`
	Via     string `json:"via,omitempty"`
	Sync    bool   `json:"sync,omitempty"`
	Port    int    `json:"port"`
}

// serviceState records one service in the lab's state: written before the
// service starts (PID 0), again with its PID once it runs.
type serviceState struct {
	Node string `json:"node"`
	Kind string `json:"kind"`
	Dir  string `json:"dir"` // its files, under the lab's directory
	PID  int    `json:"pid,omitempty"`
}

// services reads a node's services list. Cross-node references (a
// standby's primary and switch) are checked by checkServices once every
// node is known; refs keeps the YAML nodes for its line numbers.
func (p *parser) services(n *yaml.Node, field string, refs map[*ServiceSpec]*yaml.Node) ([]ServiceSpec, error) {
	items, err := p.list(n, field)
	if err != nil {
		return nil, err
	}
	var out []ServiceSpec
	kinds := map[string]bool{}
	for i, item := range items {
		f := fmt.Sprintf("%s[%d]", field, i)
		props, err := p.mapping(item, f, "kind", "role", "primary", "via", "sync", "port")
		if err != nil {
			return nil, err
		}
		s := ServiceSpec{}
		syncSet := false
		for _, pe := range props {
			pf := join(f, pe.key.Value)
			v, err := p.scalar(pe.val, pf)
			if err != nil {
				return nil, err
			}
			switch pe.key.Value {
			case "kind":
				s.Kind = v
			case "role":
				s.Role = v
			case "primary":
				s.Primary = v
			case "via":
				s.Via = v
			case "sync":
				if s.Sync, err = strconv.ParseBool(v); err != nil {
					return nil, p.errf(pe.val, pf, "want true or false, got %q", v)
				}
				syncSet = true
			case "port":
				port, err := strconv.Atoi(v)
				if err != nil || port < 1 || port > 65535 {
					return nil, p.errf(pe.val, pf, "%q is not a port (1..65535)", v)
				}
				s.Port = port
			}
		}
		if s.Kind == RolePrimary || s.Kind == RoleStandby {
			// "kind: primary" reads naturally; it means PostgreSQL.
			s.Kind, s.Role = KindPostgres, s.Kind
		}
		if s.Kind == KindPostgres && s.Role == RoleStandby && !syncSet {
			s.Sync = true
		}
		if msg := s.check(); msg != "" {
			return nil, p.errf(item, f, "%s", msg)
		}
		if kinds[s.Kind] {
			return nil, p.errf(item, f, "a node runs one %s service; this is the second", s.Kind)
		}
		kinds[s.Kind] = true
		out = append(out, s)
	}
	for i := range out {
		refs[&out[i]] = items[i]
	}
	return out, nil
}

// check fills the default port and checks what a service says about
// itself; it returns a problem or "".
func (s *ServiceSpec) check() string {
	switch s.Kind {
	case KindAgent:
		if s.Role != "" || s.Primary != "" || s.Via != "" || s.Sync {
			return "an agent service takes only kind and port"
		}
		if s.Port == 0 {
			s.Port = AgentPort
		}
	case KindPostgres:
		switch s.Role {
		case RolePrimary:
			if s.Primary != "" || s.Via != "" || s.Sync {
				return "a primary takes no primary, via or sync (those are a standby's)"
			}
		case RoleStandby:
			if s.Primary == "" {
				return "a standby needs primary: the node whose PostgreSQL it follows"
			}
		case "":
			return "missing role: primary or standby"
		default:
			return fmt.Sprintf("role %q: want primary or standby", s.Role)
		}
		if s.Port == 0 {
			s.Port = PostgresPort
		}
	case KindNFS:
		if s.Role != "" || s.Primary != "" || s.Via != "" || s.Sync {
			return "an nfs service takes only kind"
		}
		if s.Port != 0 && s.Port != NFSPort {
			return fmt.Sprintf("an nfs service listens on %d (port %d: the lab's ganesha uses the NFS port)", NFSPort, s.Port)
		}
		s.Port = NFSPort
	case "":
		return "missing kind: agent, postgres (or primary, standby), nfs"
	default:
		return fmt.Sprintf("unknown kind %q (known: agent, postgres, primary, standby, nfs)", s.Kind)
	}
	if s.Port < 1 || s.Port > 65535 {
		return fmt.Sprintf("port %d out of range 1..65535", s.Port)
	}
	return ""
}

// checkServices checks the references between nodes' services: a
// standby's primary is a node with a PostgreSQL primary, and the two share
// the switch it replicates over (Via is filled in when empty). fail
// reports a problem with node i's service j.
func checkServices(t *Topology, fail func(node, svc int, problem string) error) error {
	nodes := map[string]*NodeSpec{}
	for i := range t.Nodes {
		nodes[t.Nodes[i].Name] = &t.Nodes[i]
	}
	for i := range t.Nodes {
		n := &t.Nodes[i]
		for j := range n.Services {
			s := &n.Services[j]
			if msg := s.check(); msg != "" {
				return fail(i, j, msg)
			}
			if s.Kind != KindPostgres {
				continue
			}
			if len(addrsOf(n, "")) == 0 {
				return fail(i, j, "PostgreSQL needs an address on one of the node's links")
			}
			if s.Role != RoleStandby {
				continue
			}
			pn, ok := nodes[s.Primary]
			if !ok || pn == n {
				return fail(i, j, fmt.Sprintf("primary %q is not another node of the lab", s.Primary))
			}
			if ps := pn.Service(KindPostgres); ps == nil || ps.Role != RolePrimary {
				return fail(i, j, fmt.Sprintf("node %s runs no PostgreSQL primary", s.Primary))
			}
			if s.Via == "" {
				for _, l := range n.Links {
					if len(addrsOf(pn, l.Switch)) > 0 && len(addrsOf(n, l.Switch)) > 0 {
						s.Via = l.Switch
						break
					}
				}
				if s.Via == "" {
					return fail(i, j, fmt.Sprintf("no switch connects it to %s with addresses on both sides", s.Primary))
				}
			}
			if len(addrsOf(pn, s.Via)) == 0 || len(addrsOf(n, s.Via)) == 0 {
				return fail(i, j, fmt.Sprintf("via %q: %s and %s need addresses on that switch", s.Via, n.Name, s.Primary))
			}
		}
	}
	return nil
}

// addrsOf returns the node's addresses on switch sw ("" for every link).
func addrsOf(n *NodeSpec, sw string) []netip.Addr {
	var out []netip.Addr
	for _, l := range n.Links {
		if sw == "" || l.Switch == sw {
			for _, a := range l.Addresses {
				out = append(out, a.Addr())
			}
		}
	}
	return out
}

// Service returns the node's service of kind, or nil.
func (n *NodeSpec) Service(kind string) *ServiceSpec {
	for i := range n.Services {
		if n.Services[i].Kind == kind {
			return &n.Services[i]
		}
	}
	return nil
}

// HasServices reports whether any node of t declares a service.
func (t *Topology) HasServices() bool {
	for _, n := range t.Nodes {
		if len(n.Services) > 0 {
			return true
		}
	}
	return false
}

// syncStandbys returns the nodes that are synchronous standbys of primary,
// in topology order.
func (t *Topology) syncStandbys(primary string) []string {
	var out []string
	for _, n := range t.Nodes {
		if s := n.Service(KindPostgres); s != nil && s.Role == RoleStandby && s.Primary == primary && s.Sync {
			out = append(out, n.Name)
		}
	}
	return out
}

// synchronousStandbyNames is the primary's setting for its synchronous
// standbys (their application_name is their node's name): commits wait for
// the first of them that is connected.
func synchronousStandbyNames(names []string) string {
	if len(names) == 0 {
		return "''"
	}
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = `"` + n + `"`
	}
	return "'FIRST 1 (" + strings.Join(q, ", ") + ")'"
}
