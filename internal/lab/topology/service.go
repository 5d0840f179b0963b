package topology

import (
	"fmt"
	"net/netip"
)

// Service kinds and PostgreSQL roles a topology can declare on a node.
const (
	KindAgent    = "agent"    // interlink agent with the lab's token
	KindPostgres = "postgres" // a PostgreSQL server (Role primary or standby)
	KindNFS      = "nfs"      // nfs-ganesha exporting a directory of the lab over NFSv3
	KindGalera   = "galera"   // a MariaDB Galera member (every galera node of the lab: one cluster)
	KindSSHD     = "sshd"     // OpenSSH's sshd on port 22, in a VM node (vmnode.go)
	RolePrimary  = "primary"
	RoleStandby  = "standby"
	// Default ports of the services, in the node's own namespace.
	AgentPort    = 7471
	PostgresPort = 5432
	NFSPort      = 2049
	GaleraPort   = 3306
	SSHPort      = 22
	// MinGalera is the smallest Galera cluster a lab builds: with three
	// members the other two keep quorum when one is lost.
	MinGalera = 3
)

// ServiceSpec is a service a node runs while the lab is up: started by Up
// inside the node's namespace (after every link exists), stopped by Down.
// A node runs at most one service of each kind.
//
// Every node with a galera service is a member of the lab's one Galera
// cluster; the first in topology order bootstraps it, the others join by
// state transfer from a member. Via names the switch the cluster's
// replication crosses (the first switch every member has an address on
// when empty); clients reach each member on Port at every address.
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
	case KindGalera:
		if s.Role != "" || s.Primary != "" || s.Sync {
			return "a galera service takes only kind, via and port"
		}
		if s.Port == 0 {
			s.Port = GaleraPort
		}
	case KindSSHD:
		if s.Role != "" || s.Primary != "" || s.Via != "" || s.Sync {
			return "an sshd service takes only kind"
		}
		if s.Port != 0 && s.Port != SSHPort {
			return fmt.Sprintf("an sshd service listens on %d, not %d", SSHPort, s.Port)
		}
		s.Port = SSHPort
	case "":
		return "missing kind: agent, postgres (or primary, standby), nfs, galera, sshd"
	default:
		return fmt.Sprintf("unknown kind %q (known: agent, postgres, primary, standby, nfs, galera, sshd)", s.Kind)
	}
	if s.Port < 1 || s.Port > 65535 {
		return fmt.Sprintf("port %d out of range 1..65535", s.Port)
	}
	return ""
}

// AddrsOn returns the node's addresses on switch sw ("" for every link).
func (n *NodeSpec) AddrsOn(sw string) []netip.Addr {
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

// SyncStandbys returns the nodes that are synchronous standbys of primary,
// in topology order.
func (t *Topology) SyncStandbys(primary string) []string {
	var out []string
	for _, n := range t.Nodes {
		if s := n.Service(KindPostgres); s != nil && s.Role == RoleStandby && s.Primary == primary && s.Sync {
			out = append(out, n.Name)
		}
	}
	return out
}

// GaleraNodes returns the nodes with a galera service, in topology order:
// the first bootstraps the cluster.
func (t *Topology) GaleraNodes() []*NodeSpec {
	var out []*NodeSpec
	for i := range t.Nodes {
		if t.Nodes[i].Service(KindGalera) != nil {
			out = append(out, &t.Nodes[i])
		}
	}
	return out
}
