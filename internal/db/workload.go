package db

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
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

// recorder collects latencies and counts from all clients; one mutex is
// cheap next to a database round trip.
type recorder struct {
	mu        sync.Mutex
	total     *hdrhistogram.Histogram // microseconds
	interval  *hdrhistogram.Histogram
	committed int64
	ivTx      int64
	ivFailed  int64
	failed    Failed
	cancelled int64
}

// Histogram range: 1 us to 1 h, 3 significant digits.
const histMaxUs = int64(time.Hour / time.Microsecond)

func newRecorder() *recorder {
	return &recorder{total: hdrhistogram.New(1, histMaxUs, 3), interval: hdrhistogram.New(1, histMaxUs, 3)}
}

func (r *recorder) commit(d time.Duration) {
	us := min(max(int64(d/time.Microsecond), 1), histMaxUs)
	r.mu.Lock()
	r.total.RecordValue(us)
	r.interval.RecordValue(us)
	r.committed++
	r.ivTx++
	r.mu.Unlock()
}

func (r *recorder) fail(reason int, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ivFailed++
	f := &r.failed
	f.Total++
	switch reason {
	case reasonSerialization:
		f.Serialization++
	case reasonDeadlock:
		f.Deadlock++
	case reasonConnection:
		f.ConnectionLost++
	default:
		f.Other++
	}
	f.LastError = cleanErr(err)
}

func (r *recorder) cancel() {
	r.mu.Lock()
	r.cancelled++
	r.mu.Unlock()
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

// loop runs transactions until stop is set (time, count or Ctrl-C).
// Queries run under qctx, which is cancelled at Ctrl-C or when the grace
// after the end has passed; tickets bounds the count across clients.
func (c *client) loop(qctx context.Context, stop *atomic.Bool, tickets *atomic.Int64, maxTx int64, rec *recorder) {
	for !stop.Load() {
		if c.conn == nil && !c.reopen(qctx, stop) {
			return
		}
		if tickets.Add(1) > maxTx {
			stop.Store(true)
			return
		}
		t0 := time.Now()
		err := c.tx(qctx)
		if err == nil {
			rec.commit(time.Since(t0))
			continue
		}
		if qctx.Err() != nil {
			rec.cancel()
			c.conn.Close(context.Background())
			c.conn = nil
			return
		}
		reason, lost := classify(c.conn, err)
		rec.fail(reason, err)
		if lost {
			c.conn.Close(context.Background())
			c.conn = nil
			continue
		}
		rctx, cancel := context.WithTimeout(qctx, StopGrace)
		_, rerr := c.conn.Exec(rctx, "ROLLBACK")
		cancel()
		if rerr != nil {
			c.conn.Close(context.Background())
			c.conn = nil
		}
	}
}

// reopen reconnects after a lost connection, every 200 ms until it works
// or the run stops.
func (c *client) reopen(ctx context.Context, stop *atomic.Bool) bool {
	for !stop.Load() && ctx.Err() == nil {
		if c.open(ctx) == nil {
			return true
		}
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
	return false
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
