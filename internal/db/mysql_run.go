package db

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"net"
	"strings"
	"sync"
	"time"
)

// runMySQL is Run against MySQL or MariaDB servers (a Galera cluster's
// members): the sbtest tables are made or found through the first, the
// clients are spread over all of them (client i's home is server i mod
// N), and each server's counters are read before and after the load.
func runMySQL(ctx context.Context, spec Spec, obs Observer) (*Result, error) {
	targets, err := parseMySQL(spec.DSNs, spec.ConnectTimeout)
	if err != nil {
		return nil, err
	}
	members := make([]*member, len(targets))
	for i, t := range targets {
		if members[i], err = newMember(t); err != nil {
			return nil, err
		}
		defer members[i].db.Close()
	}
	res := &Result{Schema: Schema, Spec: spec, Intervals: []Interval{}, Standbys: []Standby{}, Members: make([]Member, len(members))}
	galera := false
	for i, m := range members {
		r := &res.Members[i]
		r.Address = m.target.addr
		if err := memberInfo(ctx, m, r); err != nil {
			return nil, interrupted(ctx, err)
		}
		galera = galera || r.Galera != nil
	}
	first := members[0]
	res.Server = Server{Product: product(res.Members[0].Version), Address: first.target.addr, Version: res.Members[0].Version}
	if err := prepareMySQL(ctx, spec, members, &res.Server, galera); err != nil {
		return nil, interrupted(ctx, err)
	}
	clients, err := openMySQLClients(ctx, spec, members, res.Server.Tables, res.Server.TableSize)
	defer func() {
		for _, c := range clients {
			c.close()
		}
	}()
	if err != nil {
		return nil, interrupted(ctx, err)
	}
	for i := range clients {
		res.Members[i%len(members)].Clients++
	}

	// Everything is connected: from here on a Result is returned.
	res.Local.RemoteAddr = first.target.addr
	if a, err := net.ResolveTCPAddr("tcp", first.target.addr); err == nil {
		res.Local.Interface, err = localInterface(a)
		if err != nil {
			res.Local.Error = cleanErr(err)
		}
	}
	before := make([]map[string]string, len(members))
	for i, m := range members {
		before[i], _ = wsrepStatus(ctx, m.db)
		if g := res.Members[i].Galera; g != nil {
			*g = galeraDelta(before[i], before[i]) // the start's states
		}
	}
	lm, lerr := startLocal()
	nm := startNodes(spec.Nodes)
	if obs.Start != nil {
		obs.Start(res)
	}
	rec := newRecorder()
	res.Start = time.Now()
	sessions := make([]session, len(clients))
	for i, c := range clients {
		sessions[i] = c
	}
	res.Duration, res.StoppedBy = drive(ctx, spec, sessions, rec, func(iv Interval) Interval {
		iv.ReplayLagBytes = -1
		res.Intervals = append(res.Intervals, iv)
		if obs.Interval != nil {
			obs.Interval(iv)
		}
		return iv
	})
	measureEnd(res, rec, spec, nm, lm, lerr)

	// The members' side, also after Ctrl-C.
	endCtx := context.WithoutCancel(ctx)
	for i, m := range members {
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
		after, err := wsrepStatus(endCtx, m.db)
		switch {
		case err != nil:
			r.Error = mysqlHint(m.target, err)
			res.Errors = append(res.Errors, "server "+r.Name+" at the end: "+r.Error)
		case r.Galera != nil:
			*r.Galera = galeraDelta(before[i], after)
		}
	}
	if res.Duration > 0 {
		res.ConflictsPerSec = float64(res.Conflicts) / res.Duration.Seconds()
	}
	if galera {
		res.Galera = sumGalera(res.Members, res.Transactions, res.Duration)
	}
	if res.Local.Error != "" {
		res.Errors = append(res.Errors, "local: "+res.Local.Error)
	}
	return res, nil
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
		return errorf(ErrConnect, "%s", mysqlHint(m.target, err))
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

// openMySQLClients connects spec.Clients clients, 16 at a time, client i
// at home on member i mod N.
func openMySQLClients(ctx context.Context, spec Spec, members []*member, tables, size int) ([]*myClient, error) {
	clients := make([]*myClient, spec.Clients)
	errs := make([]error, spec.Clients)
	sem := make(chan struct{}, 16)
	var wg sync.WaitGroup
	for i := range clients {
		clients[i] = &myClient{members: members, home: i % len(members), tables: tables, tableSize: size,
			rng: rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(i)))}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			// At the start each client connects to its home only: a
			// server given that does not answer is an error.
			if err := clients[i].openOn(ctx, clients[i].home); err != nil {
				errs[i] = fmt.Errorf("client %d of %d: %w", i+1, spec.Clients, err)
			}
		}()
	}
	wg.Wait()
	for _, e := range errs {
		if e != nil {
			return clients, e
		}
	}
	return clients, nil
}

// wsrepStatus reads the server's wsrep_% status variables (none without
// Galera), by lower-case name.
func wsrepStatus(ctx context.Context, db *sql.DB) (map[string]string, error) {
	ctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	rows, err := db.QueryContext(ctx, "SHOW GLOBAL STATUS LIKE 'wsrep%'")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return nil, err
		}
		out[strings.ToLower(k)] = v
	}
	return out, rows.Err()
}
