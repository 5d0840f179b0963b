package db

import (
	"context"
	"fmt"
	"time"

	"github.com/interlink/interlink/internal/parallel"
)

// engine is what differs between the PostgreSQL and the MySQL/MariaDB
// runs; Run drives both through the same phases (connect, sample the
// start, load, sample the end) so they report alike.
type engine interface {
	// connect logs in, makes or finds the tables and opens the clients.
	// Its error means no Result; the sessions are the clients to drive.
	connect(ctx context.Context) (*Result, []session, error)
	// begin reads what the run is measured against (WAL position,
	// wsrep counters) and the local interface, once everything is
	// connected and before the load starts.
	begin(ctx context.Context, res *Result)
	// tick adds the engine's own figures to an interval as it ends.
	tick(ctx context.Context, iv *Interval)
	// end reads the counters again, after the load (ctx is not cancelled
	// by Ctrl-C then), and records what failed in res.Errors.
	end(ctx context.Context, res *Result)
	// close ends every connection connect opened, also after its error.
	close(ctx context.Context)
}

// testHookBegin, when set by a test, runs just before the engine reads
// the start of the run (where a test stalls a server to make that read
// fail).
var testHookBegin func()

// runEngine is Run's skeleton for both engines.
func runEngine(ctx context.Context, spec Spec, obs Observer, e engine) (*Result, error) {
	defer e.close(context.WithoutCancel(ctx))
	res, sessions, err := e.connect(ctx)
	if err != nil {
		return nil, interrupted(ctx, err)
	}
	// Everything is connected: from here on a Result is returned.
	if testHookBegin != nil {
		testHookBegin()
	}
	e.begin(ctx, res)
	lm, lerr := startLocal()
	nm := startNodes(spec.Nodes)
	if obs.Start != nil {
		obs.Start(res)
	}
	rec := newRecorder()
	res.Start = time.Now()
	res.Duration, res.StoppedBy = drive(ctx, spec, sessions, rec, func(iv Interval) Interval {
		iv.ReplayLagBytes = -1
		e.tick(ctx, &iv)
		res.Intervals = append(res.Intervals, iv)
		if obs.Interval != nil {
			obs.Interval(iv)
		}
		return iv
	})
	measureEnd(res, rec, spec, nm, lm, lerr)
	// The last queries must run even after Ctrl-C.
	e.end(context.WithoutCancel(ctx), res)
	if res.Local.Error != "" {
		res.Errors = append(res.Errors, "local: "+res.Local.Error)
	}
	return res, nil
}

// openLimit is how many clients connect at once: enough to open hundreds
// quickly, few enough not to look like a storm to the server's accept
// queue (or a gate in front of it).
const openLimit = 16

// openAll runs open(i) for i in [0, n), at most limit at a time, and
// returns the error of the lowest i that failed (the others usually say
// the same), each wrapped as "client I of N".
func openAll(n, limit int, open func(i int) error) error {
	return parallel.First(n, limit, func(i int) error {
		if err := open(i); err != nil {
			return fmt.Errorf("client %d of %d: %w", i+1, n, err)
		}
		return nil
	})
}
