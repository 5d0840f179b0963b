package lab

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/interlink/interlink/internal/lab/service"
)

// inspectServices fills each node's Services from the state and what runs.
func inspectServices(st *state, s *Status, problem func(string, ...any)) {
	t := st.Topology
	l := newLab(t)
	password, galeraPassword := "", ""
	if b, err := os.ReadFile(passwordFile(t.Name)); err == nil {
		password = strings.TrimSpace(string(b))
	}
	if b, err := os.ReadFile(galeraPasswordFile(t.Name)); err == nil {
		galeraPassword = strings.TrimSpace(string(b))
	}
	for i, n := range t.Nodes {
		for _, spec := range n.Services {
			ss := ServiceStatus{Kind: spec.Kind, Role: spec.Role, State: ServiceNotStarted, Listen: []string{}}
			addrs := addrsOf(&t.Nodes[i], "")
			for _, a := range addrs {
				ss.Listen = append(ss.Listen, netip.AddrPortFrom(a, uint16(spec.Port)).String())
			}
			first := firstAddr(&t.Nodes[i])
			if first.IsValid() {
				ss.Address = netip.AddrPortFrom(first, uint16(spec.Port)).String()
			}
			if n.IsVM() {
				s.Nodes[i].Services = append(s.Nodes[i].Services, vmServiceStatus(st, &t.Nodes[i], ss, problem))
				continue
			}
			var rec *serviceState
			for k := range st.Services {
				if st.Services[k].Node == n.Name && st.Services[k].Kind == spec.Kind {
					rec = &st.Services[k]
				}
			}
			probe := ss.Address
			switch spec.Kind {
			case KindAgent:
				ss.TokenFile = tokenFile(t.Name)
				probe = "127.0.0.1:" + strconv.Itoa(spec.Port)
				if rec != nil {
					ss.Dir, ss.Log = rec.Dir, agentLog(rec.Dir)
					if service.Alive(rec.PID, tokenFile(t.Name)) {
						ss.PID = rec.PID
					}
				}
			case KindNFS:
				if first.IsValid() {
					ss.URL = "nfs://" + first.String() + service.NFSExport(serviceDir(t.Name, n.Name, KindNFS))
				}
				ss.Detail = "nfs-ganesha, NFSv3 over TCP"
				if rec != nil {
					ss.Dir, ss.Log = rec.Dir, service.NFSLog(rec.Dir)
					if service.Alive(rec.PID, rec.Dir) {
						ss.PID = rec.PID
					}
				}
			case KindGalera:
				if first.IsValid() && galeraPassword != "" {
					ss.DSN = service.GaleraDSN(first, spec.Port, galeraPassword)
				}
				ss.Detail = "Galera member via " + spec.Via
				if ms := t.galeraNodes(); len(ms) > 0 && ms[0].Name == n.Name {
					ss.Detail += " (bootstrapped the cluster)"
				}
				if rec != nil {
					ss.Dir, ss.Log = rec.Dir, service.GaleraLog(rec.Dir)
					ss.PID = service.GaleraPID(rec.Dir, rec.PID)
					if ss.PID != 0 && first.IsValid() {
						if state, err := service.GaleraState(context.Background(), netip.AddrPortFrom(first, uint16(spec.Port)), galeraPassword, l.nodes[i].dial); err == nil {
							ss.Detail += ": " + state
						} else {
							ss.Detail += ": " + strings.Join(strings.Fields(err.Error()), " ")
						}
					}
				}
			case KindPostgres:
				if first.IsValid() && password != "" {
					ss.DSN = service.DSN(first, spec.Port, password)
				}
				ss.Detail = "primary"
				if names := t.syncStandbys(n.Name); spec.Role == RolePrimary && len(names) > 0 {
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
			if rec != nil {
				ss.State = ServiceStopped
				if ss.PID != 0 && probe != "" {
					if c, err := l.nodes[i].dial(context.Background(), "tcp", probe); err == nil {
						c.Close()
						ss.State = ServiceRunning
					}
				}
			}
			if st.Complete && ss.State != ServiceRunning {
				problem("node %s: service %s is %s", n.Name, spec.Kind, ss.State)
			}
			s.Nodes[i].Services = append(s.Nodes[i].Services, ss)
		}
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
	all := addrsOf(n, sw)
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
