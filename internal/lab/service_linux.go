package lab

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/interlink/interlink/internal/lab/service"
	"github.com/interlink/interlink/internal/pgserver"
)

// Files of a lab's services, in its directory (Lab.Dir).
func tokenFile(lab string) string    { return AgentTokenFile(lab) }
func passwordFile(lab string) string { return filepath.Join(labDir(lab), "postgres.password") }
func serviceDir(lab, node, kind string) string {
	return filepath.Join(labDir(lab), node, kind)
}
func agentLog(dir string) string { return filepath.Join(dir, "agent.log") }

// checkPackages returns, before anything is built, the one-line error for
// a service whose software is not installed.
func checkPackages(t *Topology) error {
	for _, n := range t.Nodes {
		if n.Service(KindNFS) != nil {
			if err := service.NFSInstalled(); err != nil {
				return fmt.Errorf("lab %s: node %s runs an NFS server: %w", t.Name, n.Name, err)
			}
		}
		if n.Service(KindPostgres) != nil {
			if _, err := pgserver.Find(); err != nil {
				return fmt.Errorf("lab %s: node %s runs PostgreSQL: %w", t.Name, n.Name, err)
			}
			if _, err := user.Lookup("postgres"); err != nil {
				return fmt.Errorf("lab %s: node %s runs PostgreSQL: no postgres user (install the server: apt-get install -y postgresql)", t.Name, n.Name)
			}
		}
	}
	return nil
}

// services starts the topology's services: agents, then primaries, then
// standbys (a standby copies its primary). Each is recorded in the state
// before it starts.
func (b *builder) services(ctx context.Context) error {
	t := b.t
	if !t.HasServices() {
		return nil
	}
	dir := labDir(t.Name)
	if err := os.MkdirAll(dir, 0o711); err != nil {
		return fmt.Errorf("lab %s: %w", t.Name, err)
	}
	// The postgres user must reach its directories below.
	if err := os.Chmod(dir, 0o711); err != nil {
		return fmt.Errorf("lab %s: %w", t.Name, err)
	}
	var password string
	for _, n := range t.Nodes {
		if s := n.Service(KindAgent); s != nil && !fileExists(tokenFile(t.Name)) {
			if err := service.NewToken(tokenFile(t.Name)); err != nil {
				return fmt.Errorf("lab %s: %w", t.Name, err)
			}
		}
		if s := n.Service(KindPostgres); s != nil && password == "" {
			r := make([]byte, 12)
			rand.Read(r)
			password = hex.EncodeToString(r)
			if err := os.WriteFile(passwordFile(t.Name), []byte(password+"\n"), 0o600); err != nil {
				return fmt.Errorf("lab %s: %w", t.Name, err)
			}
		}
	}
	l := newLab(t)
	for _, pass := range []func(*ServiceSpec) bool{
		func(s *ServiceSpec) bool { return s.Kind == KindAgent || s.Kind == KindNFS },
		func(s *ServiceSpec) bool { return s.Kind == KindPostgres && s.Role == RolePrimary },
		func(s *ServiceSpec) bool { return s.Kind == KindPostgres && s.Role == RoleStandby },
	} {
		for i := range t.Nodes {
			for j := range t.Nodes[i].Services {
				if s := &t.Nodes[i].Services[j]; pass(s) {
					if err := b.service(ctx, l.nodes[i], s, password); err != nil {
						return err
					}
				}
			}
		}
	}
	return b.reached(ctx, PointService)
}

func (b *builder) service(ctx context.Context, n *Node, s *ServiceSpec, password string) error {
	t := b.t
	dir := serviceDir(t.Name, n.Name(), s.Kind)
	if err := os.MkdirAll(dir, 0o711); err != nil {
		return fmt.Errorf("lab %s: %w", t.Name, err)
	}
	if err := os.Chmod(filepath.Dir(dir), 0o711); err != nil {
		return fmt.Errorf("lab %s: %w", t.Name, err)
	}
	b.st.Services = append(b.st.Services, serviceState{Node: n.Name(), Kind: s.Kind, Dir: dir})
	rec := &b.st.Services[len(b.st.Services)-1]
	if err := b.writeState(ctx); err != nil {
		return err
	}
	if err := b.reached(ctx, PointService); err != nil {
		return err
	}
	fail := func(err error) error {
		return fmt.Errorf("lab %s: node %s: %s %s: %w", t.Name, n.Name(), s.Kind, s.Role, err)
	}
	var pid int
	var err error
	switch s.Kind {
	case KindAgent:
		bin := b.cfg.binary
		if bin == "" {
			if bin, err = os.Executable(); err != nil {
				return fail(err)
			}
		}
		probe := netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), uint16(s.Port)).String()
		pid, err = service.StartAgent(ctx, service.Agent{
			Binary: bin, Listen: "0.0.0.0:" + strconv.Itoa(s.Port), TokenFile: tokenFile(t.Name), Log: agentLog(dir),
		}, n.Start, probe, n.dial)
	case KindNFS:
		var srv *service.NFSServer
		srv, err = service.StartNFS(ctx, n, firstAddr(n.spec), dir, service.NFSDetached)
		if srv != nil {
			pid = srv.PID
		}
	case KindPostgres:
		pg := service.Postgres{Dir: dir, Name: n.Name(), Listen: addrsOf(n.spec, ""), Port: s.Port,
			Password: password, Networks: labNetworks(t)}
		if s.Role == RolePrimary {
			pg.Settings = map[string]string{"synchronous_standby_names": synchronousStandbyNames(t.syncStandbys(n.Name()))}
			pid, err = service.StartPrimary(ctx, pg, n.Start)
		} else {
			pn, _ := newLab(t).Node(s.Primary)
			ps := pn.spec.Service(KindPostgres)
			from := netip.AddrPortFrom(addrsOf(pn.spec, s.Via)[0], uint16(ps.Port))
			pid, err = service.StartStandby(ctx, pg, from, n.Start)
			if err == nil {
				// Up is done when commits wait for the standby.
				err = service.WaitStreaming(ctx, from, password, n.Name(), s.Sync, pn.dial)
			}
		}
		if pid == 0 {
			pid = service.PostgresPID(dir, 0)
		}
	}
	if pid != 0 {
		rec.PID = pid
		if werr := b.writeState(ctx); werr != nil && err == nil {
			err = werr
		}
	}
	if err != nil {
		return fail(err)
	}
	return nil
}

// labNetworks returns the subnets of every address in the lab: PostgreSQL
// accepts password logins (and replication) from them.
func labNetworks(t *Topology) []netip.Prefix {
	var out []netip.Prefix
	seen := map[netip.Prefix]bool{}
	for _, n := range t.Nodes {
		for _, a := range n.Addresses() {
			if p := a.Masked(); !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	return out
}

func fileExists(path string) bool { _, err := os.Stat(path); return err == nil }

// dial connects from inside the node.
func (n *Node) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var c net.Conn
	err := n.Do(func() error {
		d := net.Dialer{Timeout: time.Second}
		var err error
		c, err = d.DialContext(ctx, network, addr)
		return err
	})
	return c, err
}

// stopServices stops the recorded services before their namespaces'
// processes are killed: PostgreSQL with a fast shutdown (standbys first),
// so its files are closed cleanly. What does not stop is killed after.
func stopServices(st *state) error {
	var errs []error
	for i := len(st.Services) - 1; i >= 0; i-- {
		s := st.Services[i]
		if s.Kind == KindPostgres && strings.HasPrefix(s.Dir, labDir(st.Name)) {
			if err := service.StopPostgres(s.Dir, s.PID, 10*time.Second); err != nil {
				errs = append(errs, fmt.Errorf("node %s postgres: %w", s.Node, err))
			}
		}
	}
	return errors.Join(errs...)
}

// inspectServices fills each node's Services from the state and what runs.
func inspectServices(st *state, s *Status, problem func(string, ...any)) {
	t := st.Topology
	l := newLab(t)
	password := ""
	if b, err := os.ReadFile(passwordFile(t.Name)); err == nil {
		password = strings.TrimSpace(string(b))
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

// firstAddr is the node's first IPv4 address in topology order, else its
// first address.
func firstAddr(n *NodeSpec) netip.Addr {
	all := addrsOf(n, "")
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
