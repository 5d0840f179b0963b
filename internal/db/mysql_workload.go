package db

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"
)

// The statements of sysbench's oltp_read_write (oltp_common.lua), in the
// order a transaction runs them, each on a table picked at random.
const (
	stPoint = iota
	stSimpleRange
	stSumRange
	stOrderRange
	stDistinctRange
	stIndexUpdate
	stNonIndexUpdate
	stDelete
	stInsert
	nStatements
)

var mysqlStatements = [nStatements]string{
	stPoint:          "SELECT c FROM sbtest%d WHERE id=?",
	stSimpleRange:    "SELECT c FROM sbtest%d WHERE id BETWEEN ? AND ?",
	stSumRange:       "SELECT SUM(k) FROM sbtest%d WHERE id BETWEEN ? AND ?",
	stOrderRange:     "SELECT c FROM sbtest%d WHERE id BETWEEN ? AND ? ORDER BY c",
	stDistinctRange:  "SELECT DISTINCT c FROM sbtest%d WHERE id BETWEEN ? AND ? ORDER BY c",
	stIndexUpdate:    "UPDATE sbtest%d SET k=k+1 WHERE id=?",
	stNonIndexUpdate: "UPDATE sbtest%d SET c=? WHERE id=?",
	stDelete:         "DELETE FROM sbtest%d WHERE id=?",
	stInsert:         "INSERT INTO sbtest%d (id, k, c, pad) VALUES (?, ?, ?, ?)",
}

// sysbench's defaults: 10 point selects and ranges of 100 rows.
const (
	pointSelects = 10
	rangeSize    = 100
)

// member is one server of a MySQL run: a pool the clients take their
// connections from, and what they did there (atomics: every client adds).
type member struct {
	target mysqlTarget
	db     *sql.DB

	committed, conflicts, lost atomic.Int64
	mu                         sync.Mutex
	lostAt                     time.Time
	lostErr                    string
	againErr                   string // the last failed reconnection after the loss
}

func newMember(t mysqlTarget) (*member, error) {
	conn, err := mysql.NewConnector(t.cfg)
	if err != nil {
		return nil, errorf(ErrSpec, "--dsn %s: %v", t.addr, err)
	}
	db := sql.OpenDB(conn)
	db.SetMaxIdleConns(0) // a client's connection closes when it lets go
	return &member{target: t, db: db}, nil
}

// lose records the first lost connection to the member.
func (m *member) lose(err error) {
	m.lost.Add(1)
	m.mu.Lock()
	if m.lostAt.IsZero() {
		m.lostAt, m.lostErr = time.Now(), cleanErr(err)
	}
	m.mu.Unlock()
}

// unreachable records why a connection to the member failed, once it was
// lost (the last reconnection's error says more than the query's).
func (m *member) unreachable(err error) {
	m.mu.Lock()
	if !m.lostAt.IsZero() {
		m.againErr = cleanErr(err)
	}
	m.mu.Unlock()
}

// lostWhy is why the member was lost, with the reconnection's error.
func (m *member) lostWhy() string {
	if m.againErr != "" {
		return m.lostErr + "; then " + m.againErr
	}
	return m.lostErr
}

// myClient is one connection running oltp_read_write, to its home member
// or, once that is lost, to the next member that answers.
type myClient struct {
	members   []*member
	home, cur int
	conn      *sql.Conn
	stmts     [][nStatements]*sql.Stmt // per table
	rng       *rand.Rand
	tables    int
	tableSize int
	c, pad    []byte
}

// open connects to the home member first, then each other in turn, and
// prepares every statement on every table.
func (c *myClient) open(ctx context.Context) error {
	var first error
	for k := range c.members {
		i := (c.home + k) % len(c.members)
		err := c.openOn(ctx, i)
		if err == nil {
			return nil
		}
		if first == nil {
			first = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	return first
}

func (c *myClient) openOn(ctx context.Context, i int) error {
	m := c.members[i]
	conn, err := m.db.Conn(ctx)
	if err != nil {
		m.unreachable(err)
		return errorf(ErrConnect, "%s", mysqlHint(m.target, err))
	}
	stmts := make([][nStatements]*sql.Stmt, c.tables)
	for t := range stmts {
		for k, q := range mysqlStatements {
			if stmts[t][k], err = conn.PrepareContext(ctx, fmt.Sprintf(q, t+1)); err != nil {
				conn.Close()
				return errorf(ErrConnect, "%s: prepare: %s", m.target.addr, cleanErr(err))
			}
		}
	}
	c.conn, c.stmts, c.cur = conn, stmts, i
	return nil
}

func (c *myClient) close() {
	if c.conn != nil {
		c.conn.Close()
		c.conn = nil
	}
}

func (c *myClient) rollback(ctx context.Context) error {
	_, err := c.conn.ExecContext(ctx, "ROLLBACK")
	return err
}

// failed classifies a MySQL error; a conflict is tried again, a lost
// connection (or a member that left the cluster's primary component) sends
// the client to another member.
func (c *myClient) failed(err error) (reason int, lost, retry bool) {
	m := c.members[c.cur]
	var me *mysql.MySQLError
	var ne net.Error
	switch {
	case errors.As(err, &me):
		switch me.Number {
		case 1213: // ER_LOCK_DEADLOCK: certification failure or deadlock
			m.conflicts.Add(1)
			return reasonDeadlock, false, true
		case 1205, 1020: // lock wait timeout, record changed since read
			m.conflicts.Add(1)
			return reasonOther, false, true
		case 1047, 1053, 1927, 4031: // WSREP not ready, shutdown, killed, idle timeout
			m.lose(err)
			return reasonConnection, true, false
		}
		return reasonOther, false, false
	case errors.Is(err, driver.ErrBadConn), errors.Is(err, mysql.ErrInvalidConn), errors.Is(err, sql.ErrConnDone),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET), errors.As(err, &ne):
		m.lose(err)
		return reasonConnection, true, false
	}
	return reasonOther, false, false
}

// tx runs one oltp_read_write transaction.
func (c *myClient) tx(ctx context.Context) error {
	if _, err := c.conn.ExecContext(ctx, "BEGIN"); err != nil {
		return err
	}
	st := func(k int) *sql.Stmt { return c.stmts[c.rng.IntN(c.tables)][k] }
	var buf []byte
	for range pointSelects {
		if err := st(stPoint).QueryRowContext(ctx, c.id()).Scan(&buf); err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
	}
	for _, k := range []int{stSimpleRange, stSumRange, stOrderRange, stDistinctRange} {
		lo := c.rng.IntN(max(c.tableSize-rangeSize+1, 1)) + 1
		rows, err := st(k).QueryContext(ctx, lo, lo+rangeSize-1)
		if err != nil {
			return err
		}
		for rows.Next() {
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
	}
	if _, err := st(stIndexUpdate).ExecContext(ctx, c.id()); err != nil {
		return err
	}
	c.c = c.fill(c.c, 10)
	if _, err := st(stNonIndexUpdate).ExecContext(ctx, c.c, c.id()); err != nil {
		return err
	}
	// The delete and the insert are on the same table and row, as
	// sysbench's: the row comes back with new values.
	t, id := c.rng.IntN(c.tables), c.id()
	if _, err := c.stmts[t][stDelete].ExecContext(ctx, id); err != nil {
		return err
	}
	c.c, c.pad = c.fill(c.c, 10), c.fill(c.pad, 5)
	if _, err := c.stmts[t][stInsert].ExecContext(ctx, id, c.id(), c.c, c.pad); err != nil {
		return err
	}
	if _, err := c.conn.ExecContext(ctx, "COMMIT"); err != nil {
		return err
	}
	c.members[c.cur].committed.Add(1)
	return nil
}

// id is a row id, uniformly distributed over the table.
func (c *myClient) id() int { return c.rng.IntN(c.tableSize) + 1 }

// fill writes sysbench's c or pad value into b: groups of 11 random
// digits joined by '-' (10 groups: 119 characters; 5: 59).
func (c *myClient) fill(b []byte, groups int) []byte {
	b = b[:0]
	for g := range groups {
		if g > 0 {
			b = append(b, '-')
		}
		for range 11 {
			b = append(b, byte('0'+c.rng.IntN(10)))
		}
	}
	return b
}
