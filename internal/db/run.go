package db

import (
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/interlink/interlink/internal/latency"
)

// ErrInterrupted is returned when Ctrl-C came before the load started.
var ErrInterrupted = errors.New("db: interrupted before the run started")

// Run checks spec, connects, optionally creates the tables, then runs the
// workload with spec.Clients connections until spec.Duration or
// spec.MaxTransactions (or ctx's cancellation, Ctrl-C), and returns what
// was measured. obs receives the start and each interval as it ends.
//
// Errors before the load starts (bad spec, unreachable server, refused
// login, missing tables) return a nil Result. Once the load has started a
// Result is always returned; sections that could not be measured carry
// their error, listed in Result.Errors.
func Run(ctx context.Context, spec Spec, obs Observer) (*Result, error) {
	spec, err := spec.Normalize()
	if err != nil {
		return nil, err
	}
	if spec.MySQL() {
		return runEngine(ctx, spec, obs, &myEngine{spec: spec})
	}
	return runEngine(ctx, spec, obs, &pgEngine{spec: spec})
}

// pgEngine runs the pgbench-shaped workload against one PostgreSQL server,
// with a monitor connection for the WAL and the standbys' replay lag.
type pgEngine struct {
	spec     Spec
	mon      *monitor
	clients  []*client
	sb       standbys
	walStart string
	standby  bool // the server is in recovery: no WAL, no standbys of its own
}

func (e *pgEngine) connect(ctx context.Context) (*Result, []session, error) {
	cfg, err := parseDSN(e.spec)
	if err != nil {
		return nil, nil, err
	}
	res := &Result{Schema: Schema, Spec: e.spec, Intervals: []Interval{}, Standbys: []Standby{}}
	mconn, err := connect(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	e.mon = &monitor{conn: mconn}
	if err := prepareServer(ctx, e.mon, e.spec, &res.Server); err != nil {
		return nil, nil, err
	}
	if e.clients, err = openClients(ctx, cfg, e.spec, res.Server.Scale); err != nil {
		return nil, nil, err
	}
	res.Server.Address = e.clients[0].conn.PgConn().Conn().RemoteAddr().String()
	res.Local.RemoteAddr = res.Server.Address
	sessions := make([]session, len(e.clients))
	for i, c := range e.clients {
		sessions[i] = c
	}
	return res, sessions, nil
}

func (e *pgEngine) begin(ctx context.Context, res *Result) {
	if !res.Server.InRecovery {
		var err error
		if e.walStart, err = e.mon.walLSN(ctx); err != nil {
			res.WAL.Error = cleanErr(err)
		}
		e.sb.sample(ctx, e.mon)
	} else {
		res.WAL.Error = "the server is a standby: the WAL is the primary's"
	}
	var err error
	res.Local.Interface, err = localInterface(e.clients[0].conn.PgConn().Conn().RemoteAddr())
	if err != nil {
		res.Local.Error = cleanErr(err)
	}
	e.standby = res.Server.InRecovery
}

func (e *pgEngine) tick(ctx context.Context, iv *Interval) {
	if !e.standby {
		iv.ReplayLagBytes = e.sb.sample(ctx, e.mon)
	}
}

func (e *pgEngine) end(ctx context.Context, res *Result) {
	if res.Server.InRecovery {
		return
	}
	if e.walStart != "" {
		finishWAL(ctx, e.mon, e.walStart, &res.WAL, res.Transactions)
	}
	e.sb.sample(ctx, e.mon)
	var err error
	if res.Standbys, err = e.sb.result(); err != nil {
		res.Standbys = []Standby{}
		res.Errors = append(res.Errors, err.Error())
	}
	if res.WAL.Error != "" {
		res.Errors = append(res.Errors, "wal: "+res.WAL.Error)
	}
}

func (e *pgEngine) close(ctx context.Context) {
	for _, c := range e.clients {
		if c != nil && c.conn != nil {
			c.conn.Close(ctx)
		}
	}
	if e.mon != nil {
		e.mon.conn.Close(ctx)
	}
}

// measureEnd fills what the load did from the recorder and this and the
// lab's nodes' counters, at once when it ends.
func measureEnd(res *Result, rec *recorder, spec Spec, nm *nodeMeter, lm *localMeter, lerr error) {
	rec.mu.Lock()
	res.Transactions, res.Failed, res.CancelledAtEnd = rec.committed, rec.failed, rec.cancelled
	res.Retries = rec.retries
	res.Latency = summarize(rec)
	rec.mu.Unlock()
	if res.Duration > 0 {
		res.TPS = float64(res.Transactions) / res.Duration.Seconds()
	}
	if n := res.Transactions + res.Failed.Total; n > 0 {
		res.Failed.Percent = 100 * float64(res.Failed.Total) / float64(n)
	}
	if len(spec.Nodes) > 0 {
		res.Nodes = nm.stop(res.Transactions)
		res.Lab = sumNodes(res.Nodes, res.Transactions)
	}
	switch {
	case lerr != nil:
		res.Local.Error = cleanErr(lerr)
	default:
		if err := lm.stop(&res.Local, res.Transactions); err != nil {
			res.Local.Error = cleanErr(err)
		}
	}
}

// interrupted reports a Ctrl-C during the set-up as such, not as the
// failure it caused.
func interrupted(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ErrInterrupted
	}
	return err
}

func prepareServer(ctx context.Context, mon *monitor, spec Spec, s *Server) error {
	if err := mon.info(ctx, s); err != nil {
		return errorf(ErrConnect, "read server settings: %s", cleanErr(err))
	}
	s.Product = "PostgreSQL"
	if s.InRecovery && (spec.Init || spec.Workload != SelectOnly) {
		return errorf(ErrTables, "the server is a standby (read-only): name the primary in --dsn, or use --workload select-only without --init")
	}
	if spec.Init {
		d, size, err := initTables(ctx, mon.conn, spec.Scale)
		if err != nil {
			return err
		}
		s.Scale, s.InitDuration, s.InitBytes, s.TablesCreatedByInterlink = spec.Scale, d.Nanoseconds(), size, true
		return nil
	}
	scale, ours, err := readScale(ctx, mon.conn)
	s.Scale, s.TablesCreatedByInterlink = scale, ours
	return err
}

// openClients connects spec.Clients connections, openLimit at a time,
// each with the workload's statements prepared. The clients are returned
// also with the error, to be closed.
func openClients(ctx context.Context, cfg *pgx.ConnConfig, spec Spec, scale int) ([]*client, error) {
	clients := make([]*client, spec.Clients)
	for i := range clients {
		clients[i] = &client{cfg: cfg, scale: scale, work: spec.Workload,
			rng: rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(i)))}
	}
	return clients, openAll(len(clients), openLimit, func(i int) error { return clients[i].open(ctx) })
}

func localInterface(a net.Addr) (string, error) {
	tcp, ok := a.(*net.TCPAddr)
	if !ok {
		return "", nil // a Unix socket: no interface, no network
	}
	ip, _ := netip.AddrFromSlice(tcp.IP)
	return routeInterface(ip)
}

func finishWAL(ctx context.Context, mon *monitor, start string, w *WAL, tx int64) {
	end, err := mon.walLSN(ctx)
	if err != nil {
		w.Error = cleanErr(err)
		return
	}
	n, err := mon.walDiff(ctx, end, start)
	if err != nil {
		w.Error = cleanErr(err)
		return
	}
	w.StartLSN, w.EndLSN, w.Bytes = start, end, n
	if tx > 0 {
		w.BytesPerTx = float64(n) / float64(tx)
	}
}

// drive runs the clients and cuts intervals until the run ends, and returns
// the load's duration and why it stopped.
func drive(ctx context.Context, spec Spec, clients []session, rec *recorder, tick func(Interval) Interval) (time.Duration, string) {
	var stop atomic.Bool
	var tickets atomic.Int64
	// Queries are cancelled at Ctrl-C, or StopGrace after the end.
	qctx, qcancel := context.WithCancel(ctx)
	defer qcancel()
	start := time.Now()
	var wg sync.WaitGroup
	for _, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			loop(c, qctx, &stop, &tickets, spec.MaxTransactions, rec)
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()

	ticker := time.NewTicker(spec.Interval)
	defer ticker.Stop()
	deadline := time.NewTimer(spec.Duration)
	defer deadline.Stop()
	var grace <-chan time.Time
	reason := ""
	last := time.Duration(0)
	cut := func() {
		now := time.Since(start)
		rec.mu.Lock()
		iv := Interval{Start: last, End: now, Transactions: rec.ivTx, Failed: rec.ivFailed, Retries: rec.ivRetries,
			P50: rec.interval.ValueAtQuantile(50) * 1000, P99: rec.interval.ValueAtQuantile(99) * 1000, Max: rec.interval.Max() * 1000}
		rec.interval.Reset()
		rec.ivTx, rec.ivFailed, rec.ivRetries = 0, 0, 0
		rec.mu.Unlock()
		if d := now - last; d > 0 {
			iv.TPS = float64(iv.Transactions) / d.Seconds()
		}
		last = now
		tick(iv)
	}
	for {
		select {
		case <-ticker.C:
			if reason == "" {
				cut()
			}
		case <-deadline.C:
			if reason == "" {
				reason = StopTime
			}
			stop.Store(true)
			grace = time.After(StopGrace)
		case <-ctx.Done():
			if reason == "" {
				reason = StopInterrupted
			}
			stop.Store(true)
			ctx = context.Background() // fire once
		case <-grace:
			qcancel()
		case <-done:
			end := time.Since(start)
			if reason == "" {
				reason = StopTransactions
			}
			if end > last {
				cut()
			}
			return end, reason
		}
	}
}

func summarize(rec *recorder) Latency {
	return latency.FromHistogram(rec.total, 1000) // recorded in us
}
