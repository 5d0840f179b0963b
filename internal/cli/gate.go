package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/interlink/interlink/internal/gate"
	"github.com/interlink/interlink/internal/readfile"
)

func init() { commands = append(commands, newGateCmd) }

// gateFlags are gate's flags: one route's, or a --config of routes.
type gateFlags struct {
	route              gate.Route
	configFile, metric string
}

const gateLong = `Accept client connections eagerly (the kernel's accept queue never overflows), hold
them in a bounded queue (in total and per source address), admit them to the upstream
listener at --rate per second with a --burst and at most --max-inflight upstream
handshakes, first-in first-out within a source and round-robin across sources, then
proxy both ways. What Oracle's listener RATE_LIMIT and QUEUESIZE do, where RAC's
clusterware-managed listeners cannot use them; also in front of PostgreSQL.

A client is never reset: one that gives up while queued is never dialled; one that
waits past --queue-timeout is closed before any server byte; with the queue full the
gate stops accepting and the kernel's backlog holds the rest.

With --config FILE, several routes, and SIGHUP reloads their limits without dropping
queued or proxied connections. --metrics ADDR serves Prometheus metrics on /metrics.`

func newGateCmd(e *env) *cobra.Command {
	var f gateFlags
	c := &cobra.Command{
		Use:   "gate (--listen ADDR --upstream ADDR --rate N --burst N | --config FILE) [flags]",
		Short: "Admission gate in front of a database listener: queue logons, admit at a rate",
		Long:  gateLong,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := gateZeroFlags(cmd.Flags()); err != nil {
				return err
			}
			return runGate(e, &f, cmd.Flags().Changed("listen") || cmd.Flags().Changed("upstream"))
		},
	}
	f.bind(c.Flags())
	return c
}

func (f *gateFlags) bind(fs *pflag.FlagSet) {
	r := &f.route
	fs.StringVar(&r.Listen, "listen", "", "address to accept clients on, e.g. 0.0.0.0:1521")
	fs.StringVar(&r.Upstream, "upstream", "", "the listener to admit them to, e.g. 192.0.2.10:1521")
	fs.Float64Var(&r.RatePerSec, "rate", 0, "admissions per second")
	fs.IntVar(&r.Burst, "burst", 0, "admissions at once after a quiet spell")
	fs.IntVar(&r.Queue, "queue", gate.DefaultLimits.Queue, "connections waiting at most (then the gate stops accepting)")
	fs.IntVar(&r.PerSource, "per-source", gate.DefaultLimits.PerSource, "connections waiting at most from one source address")
	fs.DurationVar(&r.QueueTimeout, "queue-timeout", gate.DefaultLimits.QueueTimeout, "close a connection that waited longer (before any server byte)")
	fs.IntVar(&r.MaxInflight, "max-inflight", 0, "upstream handshakes in progress at most (0: no bound)")
	fs.DurationVar(&r.DialTimeout, "dial-timeout", gate.DefaultLimits.DialTimeout, "bound on an upstream connect")
	fs.StringVar(&f.configFile, "config", "", "YAML file of routes (reloaded on SIGHUP)")
	fs.StringVar(&f.metric, "metrics", "", "serve Prometheus metrics on ADDR/metrics")
}

// routes returns the routes to serve and the metrics address: from
// --config (whose metrics address --metrics overrides), or the one route
// of the flags. routeFlags says --listen or --upstream was given.
func (f *gateFlags) routes(routeFlags bool) ([]gate.Route, string, error) {
	if f.configFile == "" {
		switch {
		case f.route.Listen == "":
			return nil, "", usageError("gate: --listen ADDR is required (or --config FILE)")
		case f.route.Upstream == "":
			return nil, "", usageError("gate: --upstream ADDR is required (the listener to admit clients to)")
		}
		if err := f.route.Validate(); err != nil {
			return nil, "", usageError("gate: %s", gateMsg(err))
		}
		return []gate.Route{f.route}, f.metric, nil
	}
	if routeFlags {
		return nil, "", usageError("gate: give routes either with --config or with --listen/--upstream, not both")
	}
	cfg, err := readGateConfig(f.configFile)
	if err != nil {
		return nil, "", err
	}
	metric := f.metric
	if metric == "" {
		metric = cfg.Metrics
	}
	return cfg.Routes, metric, nil
}

// runGate builds the gate, serves its metrics and reloads --config on
// SIGHUP while it serves, until the context ends.
func runGate(e *env, f *gateFlags, routeFlags bool) error {
	routes, metric, err := f.routes(routeFlags)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(e.stderr, nil))
	g, err := gate.New(routes, log)
	if err != nil {
		if errors.Is(err, gate.ErrConfig) {
			return usageError("gate: %s", gateMsg(err))
		}
		return fmt.Errorf("gate: %w", err)
	}
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	if metric != "" {
		ln, err := net.Listen("tcp", metric)
		if err != nil {
			cancel()
			g.Serve(ctx)
			return usageError("gate: --metrics %s: %v", metric, err)
		}
		mux := http.NewServeMux()
		mux.Handle("/metrics", promhttp.HandlerFor(g.Registry(), promhttp.HandlerOpts{}))
		srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
		go srv.Serve(ln)
		defer srv.Close()
		log.Info("metrics", "addr", ln.Addr().String())
	}
	if f.configFile != "" {
		defer reloadOnHUP(ctx, g, f.configFile, log)()
	}
	for _, rt := range routes {
		log.Info("gate", "route", rt.Name, "listen", g.Addr(rt.Name).String(), "upstream", rt.Upstream,
			"rate", rt.RatePerSec, "burst", rt.Burst, "queue", rt.Queue, "per_source", rt.PerSource,
			"queue_timeout", rt.QueueTimeout, "max_inflight", rt.MaxInflight)
	}
	g.Serve(ctx)
	return nil
}

// reloadOnHUP re-reads file into g's routes on each SIGHUP until ctx
// ends; a file that does not parse or validate leaves the running limits.
// The returned stop ends the signal delivery.
func reloadOnHUP(ctx context.Context, g *gate.Gate, file string, log *slog.Logger) (stop func()) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	go func() {
		for {
			select {
			case <-hup:
				c, err := readGateConfig(file)
				if err == nil {
					err = g.Reload(c.Routes)
				}
				if err != nil {
					log.Error("reload refused; the running limits stay", "err", err)
				}
			case <-ctx.Done():
				return
			}
		}
	}()
	return func() { signal.Stop(hup) }
}

// gateZeroFlags refuses a limit flag given as 0 or less: a route leaves a
// limit at zero to take the default, so "--queue 0" used to mean 1024
// silently.
func gateZeroFlags(fs *pflag.FlagSet) error {
	for _, name := range []string{"queue", "per-source", "queue-timeout", "dial-timeout"} {
		fl := fs.Lookup(name)
		if !fl.Changed {
			continue
		}
		if v := fl.Value.String(); strings.HasPrefix(v, "-") || v == "0" || v == "0s" {
			return usageError("gate: --%s %s: want more than 0", name, v)
		}
	}
	return nil
}

func readGateConfig(path string) (*gate.Config, error) {
	f, err := readfile.Open(path) // never blocks on a FIFO
	if err != nil {
		return nil, usageError("gate: --config: %v", err)
	}
	defer f.Close()
	c, err := gate.ParseConfig(f, path)
	if err != nil {
		return nil, usageError("gate: %s", gateMsg(err))
	}
	return c, nil
}

func gateMsg(err error) string {
	return strings.ReplaceAll(err.Error(), gate.ErrConfig.Error()+": ", "")
}
