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
	"github.com/interlink/interlink/internal/mariadb"
	"github.com/interlink/interlink/internal/pgserver"
)

// Files of a lab's services, in its directory (Lab.Dir).
func tokenFile(lab string) string    { return AgentTokenFile(lab) }
func passwordFile(lab string) string { return filepath.Join(labDir(lab), "postgres.password") }
func galeraPasswordFile(lab string) string {
	return filepath.Join(labDir(lab), "galera.password")
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
		if n.Service(KindGalera) != nil {
			if err := service.GaleraInstalled(); err != nil {
				return fmt.Errorf("lab %s: node %s runs a Galera member: %w", t.Name, n.Name, err)
			}
			if _, err := user.Lookup("mysql"); err != nil {
				return fmt.Errorf("lab %s: node %s runs a Galera member: no mysql user (install the server: apt-get install -y mariadb-server galera-4 rsync)", t.Name, n.Name)
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
	var password, galeraPassword string
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
		if s := n.Service(KindGalera); s != nil && galeraPassword == "" {
			r := make([]byte, 12)
			rand.Read(r)
			galeraPassword = hex.EncodeToString(r)
			if err := os.WriteFile(galeraPasswordFile(t.Name), []byte(galeraPassword+"\n"), 0o600); err != nil {
				return fmt.Errorf("lab %s: %w", t.Name, err)
			}
		}
	}
	l := newLab(t)
	for _, pass := range []func(*ServiceSpec) bool{
		func(s *ServiceSpec) bool { return s.Kind == KindAgent || s.Kind == KindNFS },
		func(s *ServiceSpec) bool { return s.Kind == KindPostgres && s.Role == RolePrimary },
		func(s *ServiceSpec) bool { return s.Kind == KindPostgres && s.Role == RoleStandby },
		// Galera members in topology order: the first bootstraps.
		func(s *ServiceSpec) bool { return s.Kind == KindGalera },
	} {
		for i := range t.Nodes {
			k := kindOf(&t.Nodes[i])
			for j := range t.Nodes[i].Services {
				if s := &t.Nodes[i].Services[j]; pass(s) {
					pw := password
					if s.Kind == KindGalera {
						pw = galeraPassword
					}
					if err := k.startService(ctx, b, l.nodes[i], s, pw); err != nil {
						return err
					}
				}
			}
		}
	}
	return b.reached(ctx, PointService)
}

// service starts one service on node n: it makes the service's
// directory, records it in the lab's state before the start, starts it,
// and records its PID.
func (b *builder) service(ctx context.Context, n *Node, s *ServiceSpec, password string) error {
	t := b.t
	dir := serviceDir(t.Name, n.Name(), s.Kind)
	if s.Kind == KindGalera {
		dir = serviceUserDir(t.Name, n.Name(), s.Kind)
	}
	if err := os.MkdirAll(dir, 0o711); err != nil {
		return fmt.Errorf("lab %s: %w", t.Name, err)
	}
	// Its user passes the directories the lab made on the way.
	for d := filepath.Dir(dir); d != stateDir() && d != UserDataRoot && d != filepath.Dir(d); d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o711); err != nil {
			return fmt.Errorf("lab %s: %w", t.Name, err)
		}
	}
	b.st.Services = append(b.st.Services, serviceState{Node: n.Name(), Kind: s.Kind, Dir: dir})
	rec := &b.st.Services[len(b.st.Services)-1]
	if err := b.writeState(ctx); err != nil {
		return err
	}
	if err := b.reached(ctx, PointService); err != nil {
		return err
	}
	pid, err := b.startService(ctx, n, s, dir, password)
	if pid != 0 {
		rec.PID = pid
		if werr := b.writeState(ctx); werr != nil && err == nil {
			err = werr
		}
	}
	if err != nil {
		return fmt.Errorf("lab %s: node %s: %s %s: %w", t.Name, n.Name(), s.Kind, s.Role, err)
	}
	return nil
}

// startService starts s on n in dir by its kind; the PID is that of a
// service that started, even when it then failed to become ready.
func (b *builder) startService(ctx context.Context, n *Node, s *ServiceSpec, dir, password string) (int, error) {
	t := b.t
	switch s.Kind {
	case KindAgent:
		bin := b.cfg.binary
		if bin == "" {
			var err error
			if bin, err = os.Executable(); err != nil {
				return 0, err
			}
		}
		probe := netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), uint16(s.Port)).String()
		return service.StartAgent(ctx, service.Agent{
			Binary: bin, Listen: "0.0.0.0:" + strconv.Itoa(s.Port), TokenFile: tokenFile(t.Name), Log: agentLog(dir),
		}, n.Start, probe, n.dial)
	case KindNFS:
		srv, err := service.StartNFS(ctx, n, firstAddr(n.spec), dir, service.NFSDetached)
		if srv != nil {
			return srv.PID, err
		}
		return 0, err
	case KindPostgres:
		pid, err := b.startPostgres(ctx, n, s, dir, password)
		if pid == 0 {
			pid = service.PostgresPID(dir, 0)
		}
		return pid, err
	case KindGalera:
		members := t.GaleraNodes()
		var addrs []netip.Addr
		for _, m := range members {
			addrs = append(addrs, firstAddrOn(m, s.Via))
		}
		pid, err := service.StartGalera(ctx, service.Galera{Dir: dir, Cluster: t.Name, Name: n.Name(),
			Address: firstAddrOn(n.spec, s.Via), Members: addrs, Bootstrap: members[0].Name == n.Name(),
			Port: s.Port, Password: password}, n.Start)
		if pid == 0 {
			pid = service.GaleraPID(dir, 0)
		}
		return pid, err
	}
	return 0, nil
}

// startPostgres starts a primary, or a standby streaming from its
// primary; a standby's start is done when commits wait for it.
func (b *builder) startPostgres(ctx context.Context, n *Node, s *ServiceSpec, dir, password string) (int, error) {
	t := b.t
	pg := service.Postgres{Dir: dir, Name: n.Name(), Listen: n.spec.AddrsOn(""), Port: s.Port,
		Password: password, Networks: labNetworks(t)}
	if s.Role == RolePrimary {
		pg.Settings = map[string]string{"synchronous_standby_names": synchronousStandbyNames(t.SyncStandbys(n.Name()))}
		return service.StartPrimary(ctx, pg, n.Start)
	}
	pn, _ := newLab(t).Node(s.Primary)
	ps := pn.spec.Service(KindPostgres)
	from := netip.AddrPortFrom(pn.spec.AddrsOn(s.Via)[0], uint16(ps.Port))
	pid, err := service.StartStandby(ctx, pg, from, n.Start)
	if err == nil {
		// Up is done when commits wait for the standby.
		err = service.WaitStreaming(ctx, from, password, n.Name(), s.Sync, pn.dial)
	}
	return pid, err
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
// processes are killed: Galera members together (SIGTERM: each leaves the
// cluster), PostgreSQL with a fast shutdown (standbys first), so their
// files are closed cleanly. What does not stop is killed after. Only
// directories of this lab are acted on, whatever the state file says.
func stopServices(st *state) error {
	var errs []error
	var members []mariadb.Target
	for _, s := range st.Services {
		if s.Kind == KindGalera && (within(s.Dir, labDir(st.Name)) || within(s.Dir, userDataDir(st.Name))) {
			members = append(members, mariadb.Target{Dir: s.Dir, PID: s.PID})
		}
	}
	if err := service.StopGalera(20*time.Second, members...); err != nil {
		errs = append(errs, fmt.Errorf("galera: %w", err))
	}
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
