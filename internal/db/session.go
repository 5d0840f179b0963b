package db

import (
	"context"
	"sync/atomic"
	"time"
)

// session is one client connection of a workload, whatever the database:
// the PostgreSQL client (workload.go) and the MySQL one (mysql_workload.go)
// implement it, and loop drives either the same way.
type session interface {
	// open connects (again, after a lost connection) and prepares the
	// workload's statements.
	open(ctx context.Context) error
	// tx runs one transaction.
	tx(ctx context.Context) error
	// failed says why tx failed (a reason* constant), whether the
	// connection is gone (then the client reconnects), and whether the
	// same kind of transaction is to be tried again at once (a conflict
	// the database asks the client to retry).
	failed(err error) (reason int, lost, retry bool)
	// rollback ends a failed transaction on a live connection.
	rollback(ctx context.Context) error
	// close drops the connection (nothing when there is none).
	close()
}

// MaxTries bounds the tries of one transaction that keeps hitting
// conflicts; after the last it counts as failed.
const MaxTries = 10

// loop runs transactions until stop is set (time, count or Ctrl-C).
// Queries run under qctx, which is cancelled at Ctrl-C or when the grace
// after the end has passed; tickets bounds the count across clients. A
// transaction's latency runs from its first try to its commit, retries
// included; each retry is counted.
func loop(s session, qctx context.Context, stop *atomic.Bool, tickets *atomic.Int64, maxTx int64, rec *recorder) {
	connected := true
	for !stop.Load() {
		if !connected {
			if connected = reopen(s, qctx, stop); !connected {
				return
			}
		}
		if tickets.Add(1) > maxTx {
			stop.Store(true)
			return
		}
		t0 := time.Now()
		for try := 1; ; try++ {
			err := s.tx(qctx)
			if err == nil {
				rec.commit(time.Since(t0))
				break
			}
			if qctx.Err() != nil {
				rec.cancel()
				s.close()
				return
			}
			reason, lost, retry := s.failed(err)
			if lost {
				rec.fail(reason, err)
				s.close()
				connected = false
				break
			}
			rctx, cancel := context.WithTimeout(qctx, StopGrace)
			rerr := s.rollback(rctx)
			cancel()
			if rerr != nil {
				s.close()
				connected = false
			}
			if !retry || try >= MaxTries || !connected || stop.Load() {
				rec.fail(reason, err)
				break
			}
			rec.retry()
		}
	}
}

// reopen reconnects after a lost connection, every 200 ms until it works
// or the run stops.
func reopen(s session, ctx context.Context, stop *atomic.Bool) bool {
	for !stop.Load() && ctx.Err() == nil {
		if s.open(ctx) == nil {
			return true
		}
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
	return false
}
