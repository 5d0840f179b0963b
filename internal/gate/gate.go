// Package gate is an admission gate for database listeners: it accepts
// client connections eagerly (so the kernel's accept queue never
// overflows), holds them in a bounded queue (in total and per source
// address), admits them to the upstream listener at a rate with a burst and
// at most a number of upstream handshakes in flight, first-in first-out
// within a source and round-robin across sources, and then proxies bytes
// both ways. It does what Oracle's listener RATE_LIMIT and QUEUESIZE do,
// where RAC's clusterware-managed listeners cannot use them.
//
// A client is never reset by default: one that gives up while queued is
// dropped and never dialled; one that waits past the queue timeout is
// closed before any server byte; when the queue is full the gate stops
// accepting, and the kernel's backlog holds the rest.
//
// On Linux an event loop per route accepts, and proxies the connections
// admitted at once with splice(2) (loop_linux.go); connections that waited
// in the queue, and every connection elsewhere, are proxied by a goroutine
// pair (proxy.go).
package gate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// ErrConfig marks an invalid route or limit.
var ErrConfig = errors.New("gate: invalid configuration")

// Limits shape one route's admissions. They can change while the gate
// runs (Reload); queued and proxied connections are kept.
type Limits struct {
	// RatePerSec admissions per second, with Burst admitted at once after
	// a quiet spell (a token bucket).
	RatePerSec float64 `yaml:"rate" json:"rate_per_sec"`
	Burst      int     `yaml:"burst" json:"burst"`
	// Queue bounds the connections waiting in total, PerSource those
	// from one client address.
	Queue     int `yaml:"queue" json:"queue"`
	PerSource int `yaml:"per_source" json:"per_source"`
	// QueueTimeout closes a connection that waited longer (before any
	// server byte).
	QueueTimeout time.Duration `yaml:"queue_timeout" json:"queue_timeout_ns"`
	// MaxInflight bounds the upstream handshakes in progress (from the
	// dial until the upstream's first byte, as a logon); 0: no bound.
	MaxInflight int `yaml:"max_inflight" json:"max_inflight"`
	// DialTimeout bounds a dial of the upstream.
	DialTimeout time.Duration `yaml:"dial_timeout" json:"dial_timeout_ns"`
	// ClientBuffer bounds what the gate keeps of what a queued client
	// sends before it is admitted (then TCP flow control holds the rest).
	ClientBuffer int `yaml:"client_buffer" json:"client_buffer"`
}

// DefaultLimits fill what a route leaves at zero (rate and burst are
// required).
var DefaultLimits = Limits{
	Queue: 1024, PerSource: 256, QueueTimeout: 60 * time.Second, DialTimeout: 5 * time.Second, ClientBuffer: 64 << 10,
}

// Route is one listener and the upstream it admits to.
type Route struct {
	Name     string `yaml:"name" json:"name"`
	Listen   string `yaml:"listen" json:"listen"`
	Upstream string `yaml:"upstream" json:"upstream"`
	Limits   `yaml:",inline" json:"limits"`
}

// Validate fills defaults and checks r.
func (r *Route) Validate() error {
	bad := func(format string, a ...any) error {
		name := r.Name
		if name == "" {
			name = r.Listen
		}
		if name == "" {
			// Never "route : ...": a route with neither is named by
			// what it lacks.
			return fmt.Errorf("%w: route without a name: %s", ErrConfig, fmt.Sprintf(format, a...))
		}
		return fmt.Errorf("%w: route %s: %s", ErrConfig, name, fmt.Sprintf(format, a...))
	}
	switch {
	case r.Listen == "":
		return bad("listen is required (the address to accept clients on)")
	case r.Upstream == "":
		return bad("upstream is required (the listener to admit clients to)")
	}
	if err := checkUpstream(r.Upstream); err != nil {
		return bad("upstream %q: %v", r.Upstream, err)
	}
	if r.Upstream == r.Listen {
		return bad("upstream %s is the gate's own listen address (a loop)", r.Upstream)
	}
	if r.Name == "" {
		r.Name = r.Listen
	}
	l := &r.Limits
	if l.Queue == 0 {
		l.Queue = DefaultLimits.Queue
	}
	if l.PerSource == 0 {
		l.PerSource = min(DefaultLimits.PerSource, l.Queue)
	}
	if l.QueueTimeout == 0 {
		l.QueueTimeout = DefaultLimits.QueueTimeout
	}
	if l.DialTimeout == 0 {
		l.DialTimeout = DefaultLimits.DialTimeout
	}
	if l.ClientBuffer == 0 {
		l.ClientBuffer = DefaultLimits.ClientBuffer
	}
	switch {
	case !(l.RatePerSec > 0) || l.RatePerSec > 1e6:
		return bad("rate %g: want 0 < rate <= 1000000 admissions per second", l.RatePerSec)
	case l.Burst < 1 || l.Burst > 1e6:
		return bad("burst %d: want 1 to 1000000", l.Burst)
	case l.Queue < 1 || l.Queue > 1_000_000:
		return bad("queue %d: want 1 to 1000000", l.Queue)
	case l.PerSource < 1 || l.PerSource > l.Queue:
		return bad("per-source queue %d: want 1 to the queue (%d)", l.PerSource, l.Queue)
	case l.QueueTimeout < 0 || l.DialTimeout < 0:
		return bad("timeouts must be positive")
	case l.MaxInflight < 0:
		return bad("max in-flight %d: want 0 (no bound) or more", l.MaxInflight)
	case l.ClientBuffer < 0 || l.ClientBuffer > 16<<20:
		return bad("client buffer %d: want up to 16 MiB", l.ClientBuffer)
	}
	return nil
}

// checkUpstream refuses an upstream address that can never be dialled:
// not HOST:PORT, no host, or a port that is not 1 to 65535. A name is
// resolved per connection, as before, so one that does not resolve yet is
// not refused here.
func checkUpstream(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return errors.New("want HOST:PORT, e.g. 192.0.2.10:1521")
	}
	if host == "" {
		return errors.New("no host: want HOST:PORT")
	}
	if n, err := strconv.ParseUint(port, 10, 16); err != nil || n == 0 {
		return fmt.Errorf("port %q: want 1 to 65535", port)
	}
	return nil
}

// Gate runs routes.
type Gate struct {
	mu     sync.Mutex
	routes map[string]*route
	order  []string
	reg    *prometheus.Registry
	m      *metrics
	log    *slog.Logger
}

// TopSources is how many per-source queue depths the metrics export.
const TopSources = 10

// New validates routes and listens on each; nothing is accepted until
// Serve. log receives the gate's events (nil: discarded).
func New(routes []Route, log *slog.Logger) (*Gate, error) {
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if len(routes) == 0 {
		return nil, fmt.Errorf("%w: no route", ErrConfig)
	}
	g := &Gate{routes: map[string]*route{}, reg: prometheus.NewRegistry(), log: log}
	g.m = newMetrics(g.reg)
	g.reg.MustRegister(&sourceCollector{g: g, top: TopSources, desc: prometheus.NewDesc("interlink_gate_source_queued",
		"Connections queued from one source address (the deepest sources only).", []string{"route", "source"}, nil)})
	g.reg.MustRegister(listenOverflows())
	for i := range routes {
		rt := routes[i]
		if err := rt.Validate(); err != nil {
			g.close()
			return nil, err
		}
		if g.routes[rt.Name] != nil {
			g.close()
			return nil, fmt.Errorf("%w: two routes named %s", ErrConfig, rt.Name)
		}
		ln, err := listenConfig.Listen(context.Background(), "tcp", rt.Listen)
		if err != nil {
			g.close()
			return nil, fmt.Errorf("route %s: %w", rt.Name, err)
		}
		g.routes[rt.Name] = newRoute(rt, ln.(*net.TCPListener), g.m.route(rt.Name), log)
		g.order = append(g.order, rt.Name)
	}
	return g, nil
}

func (g *Gate) close() {
	for _, r := range g.routes {
		r.ln.Close()
	}
}

// Addr returns the address route name listens on.
func (g *Gate) Addr(name string) net.Addr {
	g.mu.Lock()
	defer g.mu.Unlock()
	if r := g.routes[name]; r != nil {
		return r.addr
	}
	return nil
}

// Registry returns the gate's Prometheus registry.
func (g *Gate) Registry() *prometheus.Registry { return g.reg }

func (g *Gate) routeList() []*route {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]*route, 0, len(g.order))
	for _, n := range g.order {
		out = append(out, g.routes[n])
	}
	return out
}

// Serve runs every route until ctx ends, then closes the listeners and the
// queued connections and waits for proxied ones to finish.
func (g *Gate) Serve(ctx context.Context) {
	var wg sync.WaitGroup
	for _, r := range g.routeList() {
		wg.Add(1)
		go func() { defer wg.Done(); r.serve(ctx) }()
	}
	wg.Wait()
}

// Reload applies the limits of routes to the running routes of the same
// name. Listen and upstream addresses cannot change while running: a
// route whose addresses differ, or that is new or missing, is an error and
// nothing is changed.
func (g *Gate) Reload(routes []Route) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(routes) != len(g.routes) {
		return fmt.Errorf("%w: reload has %d routes, the gate runs %d: routes can change only by a restart", ErrConfig, len(routes), len(g.routes))
	}
	for i := range routes {
		if err := routes[i].Validate(); err != nil {
			return err
		}
		r := g.routes[routes[i].Name]
		if r == nil || r.cfg.Listen != routes[i].Listen || r.cfg.Upstream != routes[i].Upstream {
			return fmt.Errorf("%w: route %s: a reload changes limits only, not routes or addresses", ErrConfig, routes[i].Name)
		}
	}
	for _, rt := range routes {
		g.routes[rt.Name].setLimits(rt.Limits)
		g.log.Info("limits reloaded", "route", rt.Name, "rate", rt.RatePerSec, "burst", rt.Burst, "queue", rt.Queue)
	}
	return nil
}
