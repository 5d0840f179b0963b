package db

import (
	"context"
	"math/rand/v2"

	"github.com/jackc/pgx/v5"
)

// The statements of pgbench's built-in scripts, prepared by name on each
// connection (pgbench -M prepared: Bind/Execute per statement, no parse).
var statements = map[string]string{
	"il_upd_acct": `UPDATE pgbench_accounts SET abalance = abalance + $1 WHERE aid = $2`,
	"il_sel_acct": `SELECT abalance FROM pgbench_accounts WHERE aid = $1`,
	"il_upd_tell": `UPDATE pgbench_tellers SET tbalance = tbalance + $1 WHERE tid = $2`,
	"il_upd_bran": `UPDATE pgbench_branches SET bbalance = bbalance + $1 WHERE bid = $2`,
	"il_ins_hist": `INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES ($1, $2, $3, $4, CURRENT_TIMESTAMP)`,
}

// client is one connection running the workload in a loop.
type client struct {
	cfg   *pgx.ConnConfig
	conn  *pgx.Conn
	rng   *rand.Rand
	scale int
	work  Workload
}

func (c *client) open(ctx context.Context) error {
	conn, err := connect(ctx, c.cfg)
	if err != nil {
		return err
	}
	for name, sql := range statements {
		if c.work == SelectOnly && name != "il_sel_acct" {
			continue
		}
		if _, err := conn.Prepare(ctx, name, sql); err != nil {
			conn.Close(context.WithoutCancel(ctx))
			return err
		}
	}
	c.conn = conn
	return nil
}

// failed says why tx failed and whether the connection is gone; a
// PostgreSQL transaction is not tried again.
func (c *client) failed(err error) (reason int, lost, retry bool) {
	reason, lost = classify(c.conn, err)
	return reason, lost, false
}

func (c *client) rollback(ctx context.Context) error {
	_, err := c.conn.Exec(ctx, "ROLLBACK")
	return err
}

func (c *client) close() {
	if c.conn != nil {
		c.conn.Close(context.Background())
		c.conn = nil
	}
}

func (c *client) tx(ctx context.Context) error {
	n := c.scale * AccountsPerScale
	aid := c.rng.IntN(n) + 1
	var bal int
	if c.work == SelectOnly {
		return c.conn.QueryRow(ctx, "il_sel_acct", aid).Scan(&bal)
	}
	bid := c.rng.IntN(c.scale) + 1
	tid := c.rng.IntN(c.scale*TellersPerScale) + 1
	delta := c.rng.IntN(10001) - 5000
	if _, err := c.conn.Exec(ctx, "BEGIN"); err != nil {
		return err
	}
	if _, err := c.conn.Exec(ctx, "il_upd_acct", delta, aid); err != nil {
		return err
	}
	if err := c.conn.QueryRow(ctx, "il_sel_acct", aid).Scan(&bal); err != nil {
		return err
	}
	if c.work == TPCB {
		if _, err := c.conn.Exec(ctx, "il_upd_tell", delta, tid); err != nil {
			return err
		}
		if _, err := c.conn.Exec(ctx, "il_upd_bran", delta, bid); err != nil {
			return err
		}
	}
	if _, err := c.conn.Exec(ctx, "il_ins_hist", tid, bid, aid, delta); err != nil {
		return err
	}
	_, err := c.conn.Exec(ctx, "END")
	return err
}
