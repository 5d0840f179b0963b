package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"strings"
	"time"

	"github.com/interlink/interlink/internal/mariadb"
)

// myEngine is Run against MySQL or MariaDB servers (a Galera cluster's
// members): the sbtest tables are made or found through the first, the
// clients are spread over all of them (client i's home is server i mod
// N), and each server's counters are read before and after the load.
type myEngine struct {
	spec    Spec
	members []*member
	clients []*myClient
	galera  bool
	// before holds each member's wsrep status at the start; nil where it
	// could not be read (that member's counters are then left out).
	before []map[string]string
}

func (e *myEngine) connect(ctx context.Context) (*Result, []session, error) {
	targets, err := parseMySQL(e.spec.DSNs, e.spec.ConnectTimeout)
	if err != nil {
		return nil, nil, err
	}
	for _, t := range targets {
		m, err := newMember(t)
		if err != nil {
			return nil, nil, err
		}
		e.members = append(e.members, m)
	}
	res := &Result{Schema: Schema, Spec: e.spec, Intervals: []Interval{}, Standbys: []Standby{}, Members: make([]Member, len(e.members))}
	for i, m := range e.members {
		r := &res.Members[i]
		r.Address = m.target.addr
		if err := memberInfo(ctx, m, r); err != nil {
			return nil, nil, err
		}
		e.galera = e.galera || r.Galera != nil
	}
	res.Server = Server{Product: product(res.Members[0].Version), Address: e.members[0].target.addr, Version: res.Members[0].Version}
	if err := prepareMySQL(ctx, e.spec, e.members, &res.Server, e.galera); err != nil {
		return nil, nil, err
	}
	if e.clients, err = openMySQLClients(ctx, e.spec, e.members, res.Server.Tables, res.Server.TableSize); err != nil {
		return nil, nil, err
	}
	sessions := make([]session, len(e.clients))
	for i, c := range e.clients {
		res.Members[i%len(e.members)].Clients++
		sessions[i] = c
	}
	return res, sessions, nil
}

// begin reads every member's wsrep status. A member whose status cannot
// be read now is reported and its counters left out of the run: read at
// the end alone they would be its counts since the server started.
func (e *myEngine) begin(ctx context.Context, res *Result) {
	first := e.members[0].target.addr
	res.Local.RemoteAddr = first
	if a, err := net.ResolveTCPAddr("tcp", first); err == nil {
		if res.Local.Interface, err = localInterface(a); err != nil {
			res.Local.Error = cleanErr(err)
		}
	}
	e.before = make([]map[string]string, len(e.members))
	for i, m := range e.members {
		r := &res.Members[i]
		st, err := wsrepStatus(ctx, m.db)
		if err != nil {
			r.Galera = nil
			r.Error = "status not read at the start, counters left out: " + mysqlHint(m.target, err)
			res.Errors = append(res.Errors, "server "+r.Name+" at the start: "+mysqlHint(m.target, err))
			continue
		}
		e.before[i] = st
		if r.Galera != nil {
			*r.Galera = galeraDelta(st, st) // the start's states
		}
	}
}

func (e *myEngine) tick(context.Context, *Interval) {}

// end adds up what each member did and reads its counters again.
func (e *myEngine) end(ctx context.Context, res *Result) {
	for i, m := range e.members {
		r := &res.Members[i]
		r.Transactions, r.Conflicts, r.ConnectionLost = m.committed.Load(), m.conflicts.Load(), m.lost.Load()
		res.Conflicts += r.Conflicts
		if res.Duration > 0 {
			r.TPS = float64(r.Transactions) / res.Duration.Seconds()
		}
		m.mu.Lock()
		if !m.lostAt.IsZero() {
			r.LostAt, r.LostError = max(m.lostAt.Sub(res.Start).Nanoseconds(), 1), m.lostWhy()
		}
		m.mu.Unlock()
		if e.before[i] == nil {
			continue // reported at the start
		}
		after, err := wsrepStatus(ctx, m.db)
		switch {
		case err != nil:
			// Its Galera figures would be the start's states and no
			// counts: left out as at the start, the error says why.
			r.Galera = nil
			r.Error = "status not read at the end, counters left out: " + mysqlHint(m.target, err)
			res.Errors = append(res.Errors, "server "+r.Name+" at the end: "+mysqlHint(m.target, err))
		case r.Galera != nil:
			*r.Galera = galeraDelta(e.before[i], after)
		}
	}
	if res.Duration > 0 {
		res.ConflictsPerSec = float64(res.Conflicts) / res.Duration.Seconds()
	}
	if e.galera {
		res.Galera = sumGalera(res.Members, res.Transactions, res.Duration)
	}
}

func (e *myEngine) close(context.Context) {
	for _, c := range e.clients {
		if c != nil {
			c.close()
		}
	}
	for _, m := range e.members {
		m.db.Close()
	}
}

// product names the server from its version string.
func product(version string) string {
	if strings.Contains(strings.ToLower(version), "mariadb") {
		return "MariaDB"
	}
	return "MySQL"
}

// memberInfo logs in to m and reads its version, name and whether it runs
// Galera (r.Galera is then set).
func memberInfo(ctx context.Context, m *member, r *Member) error {
	qctx, cancel := context.WithTimeout(ctx, queryTimeout+m.target.cfg.Timeout)
	defer cancel()
	var host string
	if err := m.db.QueryRowContext(qctx, "SELECT VERSION(), @@hostname").Scan(&r.Version, &host); err != nil {
		hint := mysqlHint(m.target, err)
		if errors.Is(err, context.DeadlineExceeded) {
			// The first contact: a port that accepts and never greets.
			hint += " (is a MySQL or MariaDB server listening there?)"
		}
		return errorf(ErrConnect, "%s", hint)
	}
	r.Name = host
	st, err := wsrepStatus(qctx, m.db)
	if err != nil {
		return errorf(ErrConnect, "%s: read status: %s", m.target.addr, cleanErr(err))
	}
	if st["wsrep_ready"] != "" && st["wsrep_local_state_comment"] != "" {
		r.Galera = &GaleraCounters{}
		var name string
		if m.db.QueryRowContext(qctx, "SELECT @@wsrep_node_name").Scan(&name) == nil && name != "" {
			r.Name = name
		}
	}
	return nil
}

// prepareMySQL creates (--init) or finds the sbtest tables through the
// first member; in a Galera cluster it waits until every member has
// applied them (wsrep_sync_wait), so no client prepares against a table
// its member has not made yet.
func prepareMySQL(ctx context.Context, spec Spec, members []*member, s *Server, galera bool) error {
	db := members[0].db
	if spec.Init {
		d, size, err := initMySQL(ctx, db, spec.Tables, spec.TableSize)
		if err != nil {
			return err
		}
		s.Tables, s.TableSize, s.InitDuration, s.InitBytes, s.TablesCreatedByInterlink = spec.Tables, spec.TableSize, d.Nanoseconds(), size, true
	} else {
		var err error
		if s.Tables, s.TableSize, s.TablesCreatedByInterlink, err = readMySQLTables(ctx, db); err != nil {
			return err
		}
	}
	if !galera {
		return nil
	}
	for _, m := range members[1:] {
		if err := syncWait(ctx, m, s.Tables); err != nil {
			return errorf(ErrTables, "%s: %s", m.target.addr, cleanErr(err))
		}
	}
	return nil
}

// syncWait reads the last table on m once m has applied every write set
// the cluster had committed when the read began.
func syncWait(ctx context.Context, m *member, tables int) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	conn, err := m.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "SET SESSION wsrep_sync_wait = 1"); err != nil {
		return err
	}
	var n int
	return conn.QueryRowContext(ctx, fmt.Sprintf("SELECT COUNT(*) FROM sbtest%d WHERE id = 1", tables)).Scan(&n)
}

// openMySQLClients connects spec.Clients clients, openLimit at a time,
// client i at home on member i mod N. The clients are returned also with
// the error, to be closed.
func openMySQLClients(ctx context.Context, spec Spec, members []*member, tables, size int) ([]*myClient, error) {
	clients := make([]*myClient, spec.Clients)
	for i := range clients {
		clients[i] = &myClient{members: members, home: i % len(members), tables: tables, tableSize: size,
			rng: rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(i)))}
	}
	// At the start each client connects to its home only: a server given
	// that does not answer is an error.
	return clients, openAll(len(clients), openLimit, func(i int) error { return clients[i].openOn(ctx, clients[i].home) })
}

// wsrepStatus reads the server's wsrep_% status variables (none without
// Galera), by lower-case name, within queryTimeout.
func wsrepStatus(ctx context.Context, db *sql.DB) (map[string]string, error) {
	ctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	return mariadb.WsrepStatus(ctx, db)
}
