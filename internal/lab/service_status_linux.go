package lab

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/interlink/interlink/internal/lab/service"
)

// inspectServices fills each node's Services from the state and what runs.
func inspectServices(st *state, s *Status, problem func(string, ...any)) {
	in := newServiceInspector(st)
	for i, n := range st.Topology.Nodes {
		for _, spec := range n.Services {
			ss := kindOf(&st.Topology.Nodes[i]).serviceStatus(in, i, spec)
			if st.Complete && ss.State != ServiceRunning {
				why := ""
				if ss.Reason != "" {
					why = ": " + ss.Reason
				}
				problem("node %s: service %s is %s%s", n.Name, spec.Kind, ss.State, why)
			}
			s.Nodes[i].Services = append(s.Nodes[i].Services, ss)
		}
	}
}

// serviceInspector is what inspecting a lab's services needs: the state,
// the lab (to dial into its nodes), the databases' passwords ("" when not
// readable) and, once a VM node's service is asked about, what every
// guest said (vmNode.serviceStatus).
type serviceInspector struct {
	st                       *state
	t                        *Topology
	l                        *Lab
	password, galeraPassword string
	askGuests                sync.Once
	guests                   map[string]*guestAnswer
}

func newServiceInspector(st *state) *serviceInspector {
	in := &serviceInspector{st: st, t: st.Topology, l: newLab(st.Topology)}
	if b, err := os.ReadFile(passwordFile(in.t.Name)); err == nil {
		in.password = strings.TrimSpace(string(b))
	}
	if b, err := os.ReadFile(galeraPasswordFile(in.t.Name)); err == nil {
		in.galeraPassword = strings.TrimSpace(string(b))
	}
	return in
}

// service is the status of service spec on node i: its addresses, what
// its kind tells, and whether it runs (its process lives and its port
// takes a connection).
func (in *serviceInspector) service(i int, spec ServiceSpec) ServiceStatus {
	n := &in.t.Nodes[i]
	ss := in.addresses(i, spec)
	first := firstAddr(n)
	var rec *serviceState
	for k := range in.st.Services {
		if in.st.Services[k].Node == n.Name && in.st.Services[k].Kind == spec.Kind {
			rec = &in.st.Services[k]
		}
	}
	probe := ss.Address
	switch spec.Kind {
	case KindAgent:
		probe = "127.0.0.1:" + strconv.Itoa(spec.Port)
		in.agent(&ss, rec)
	case KindNFS:
		in.nfs(&ss, n, first, rec)
	case KindGalera:
		in.galera(&ss, i, spec, first, rec)
	case KindPostgres:
		in.postgres(&ss, n, spec, first, rec)
	}
	if rec != nil {
		ss.State = ServiceStopped
		if ss.PID != 0 && probe != "" {
			if c, err := in.l.nodes[i].dial(context.Background(), "tcp", probe); err == nil {
				c.Close()
				ss.State = ServiceRunning
			}
		}
	}
	return ss
}

// addresses is service spec on node i not yet started: where it listens.
func (in *serviceInspector) addresses(i int, spec ServiceSpec) ServiceStatus {
	n := &in.t.Nodes[i]
	ss := ServiceStatus{Kind: spec.Kind, Role: spec.Role, State: ServiceNotStarted, Listen: []string{}}
	for _, a := range n.AddrsOn("") {
		ss.Listen = append(ss.Listen, netip.AddrPortFrom(a, uint16(spec.Port)).String())
	}
	if first := firstAddr(n); first.IsValid() {
		ss.Address = netip.AddrPortFrom(first, uint16(spec.Port)).String()
	}
	return ss
}

func (in *serviceInspector) agent(ss *ServiceStatus, rec *serviceState) {
	ss.TokenFile = tokenFile(in.t.Name)
	if rec != nil {
		ss.Dir, ss.Log = rec.Dir, agentLog(rec.Dir)
		if service.Alive(rec.PID, tokenFile(in.t.Name)) {
			ss.PID = rec.PID
		}
	}
}

func (in *serviceInspector) nfs(ss *ServiceStatus, n *NodeSpec, first netip.Addr, rec *serviceState) {
	dir := serviceDir(in.t.Name, n.Name, KindNFS)
	if rec != nil {
		dir = rec.Dir // LAB.d/NODE/nfs in a lab brought up before nodes/
	}
	if first.IsValid() {
		ss.URL = "nfs://" + first.String() + service.NFSExport(dir)
	}
	ss.Detail = "nfs-ganesha, NFSv3 over TCP"
	if rec != nil {
		ss.Dir, ss.Log = rec.Dir, service.NFSLog(rec.Dir)
		if service.Alive(rec.PID, rec.Dir) {
			ss.PID = rec.PID
		}
	}
}

// galera also asks a running member for its wsrep state.
func (in *serviceInspector) galera(ss *ServiceStatus, i int, spec ServiceSpec, first netip.Addr, rec *serviceState) {
	n := &in.t.Nodes[i]
	if first.IsValid() && in.galeraPassword != "" {
		ss.DSN = service.GaleraDSN(first, spec.Port, in.galeraPassword)
	}
	ss.Detail = "Galera member via " + spec.Via
	if ms := in.t.GaleraNodes(); len(ms) > 0 && ms[0].Name == n.Name {
		ss.Detail += " (bootstrapped the cluster)"
	}
	if rec == nil {
		return
	}
	ss.Dir, ss.Log = rec.Dir, service.GaleraLog(rec.Dir)
	ss.PID = service.GaleraPID(rec.Dir, rec.PID)
	if ss.PID != 0 && first.IsValid() {
		if state, err := service.GaleraState(context.Background(), netip.AddrPortFrom(first, uint16(spec.Port)), in.galeraPassword, in.l.nodes[i].dial); err == nil {
			ss.Detail += ": " + state
		} else {
			ss.Detail += ": " + strings.Join(strings.Fields(err.Error()), " ")
		}
	}
}

func (in *serviceInspector) postgres(ss *ServiceStatus, n *NodeSpec, spec ServiceSpec, first netip.Addr, rec *serviceState) {
	if first.IsValid() && in.password != "" {
		ss.DSN = service.DSN(first, spec.Port, in.password)
	}
	ss.Detail = "primary"
	if names := in.t.SyncStandbys(n.Name); spec.Role == RolePrimary && len(names) > 0 {
		ss.Detail += ", commits wait for " + strings.Join(names, " or ") + " (synchronous)"
	}
	if spec.Role == RoleStandby {
		kind := "asynchronous"
		if spec.Sync {
			kind = "synchronous"
		}
		ss.Detail = fmt.Sprintf("%s standby of %s via %s", kind, spec.Primary, spec.Via)
	}
	if rec != nil {
		ss.Dir, ss.Log = rec.Dir, service.LogFile(rec.Dir)
		ss.PID = service.PostgresPID(rec.Dir, rec.PID)
	}
}

// within reports whether path is dir or below it.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../") && !filepath.IsAbs(rel)
}

// firstAddrOn is the node's first IPv4 address on switch sw, else its
// first address there.
func firstAddrOn(n *NodeSpec, sw string) netip.Addr {
	all := n.AddrsOn(sw)
	for _, a := range all {
		if a.Is4() {
			return a
		}
	}
	if len(all) > 0 {
		return all[0]
	}
	return netip.Addr{}
}

// firstAddr is the node's first IPv4 address in topology order, else its
// first address.
func firstAddr(n *NodeSpec) netip.Addr { return firstAddrOn(n, "") }
