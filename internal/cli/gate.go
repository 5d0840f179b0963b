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

	"github.com/interlink/interlink/internal/gate"
)

func init() { commands = append(commands, newGateCmd) }

func newGateCmd(e *env) *cobra.Command {
	var (
		r                  gate.Route
		configFile, metric string
	)
	c := &cobra.Command{
		Use:   "gate (--listen ADDR --upstream ADDR --rate N --burst N | --config FILE) [flags]",
		Short: "Admission gate in front of a database listener: queue logons, admit at a rate",
		Long: `Accept client connections eagerly (the kernel's accept queue never overflows), hold
them in a bounded queue (in total and per source address), admit them to the upstream
listener at --rate per second with a --burst and at most --max-inflight upstream
handshakes, first-in first-out within a source and round-robin across sources, then
proxy both ways. What Oracle's listener RATE_LIMIT and QUEUESIZE do, where RAC's
clusterware-managed listeners cannot use them; also in front of PostgreSQL.

A client is never reset: one that gives up while queued is never dialled; one that
waits past --queue-timeout is closed before any server byte; with the queue full the
gate stops accepting and the kernel's backlog holds the rest.

With --config FILE, several routes, and SIGHUP reloads their limits without dropping
queued or proxied connections. --metrics ADDR serves Prometheus metrics on /metrics.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			var routes []gate.Route
			var cfg *gate.Config
			if configFile != "" {
				if cmd.Flags().Changed("listen") || cmd.Flags().Changed("upstream") {
					return usageError("gate: give routes either with --config or with --listen/--upstream, not both")
				}
				var err error
				if cfg, err = readGateConfig(configFile); err != nil {
					return err
				}
				routes = cfg.Routes
				if metric == "" {
					metric = cfg.Metrics
				}
			} else {
				if err := r.Validate(); err != nil {
					return usageError("gate: %s", gateMsg(err))
				}
				routes = []gate.Route{r}
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
			if configFile != "" {
				hup := make(chan os.Signal, 1)
				signal.Notify(hup, syscall.SIGHUP)
				defer signal.Stop(hup)
				go func() {
					for {
						select {
						case <-hup:
							c, err := readGateConfig(configFile)
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
			}
			for _, rt := range routes {
				log.Info("gate", "route", rt.Name, "listen", g.Addr(rt.Name).String(), "upstream", rt.Upstream,
					"rate", rt.RatePerSec, "burst", rt.Burst, "queue", rt.Queue, "per_source", rt.PerSource,
					"queue_timeout", rt.QueueTimeout, "max_inflight", rt.MaxInflight)
			}
			g.Serve(ctx)
			return nil
		},
	}
	fs := c.Flags()
	fs.StringVar(&r.Listen, "listen", "", "address to accept clients on, e.g. 0.0.0.0:1521")
	fs.StringVar(&r.Upstream, "upstream", "", "the listener to admit them to, e.g. 192.0.2.10:1521")
	fs.Float64Var(&r.RatePerSec, "rate", 0, "admissions per second")
	fs.IntVar(&r.Burst, "burst", 0, "admissions at once after a quiet spell")
	fs.IntVar(&r.Queue, "queue", gate.DefaultLimits.Queue, "connections waiting at most (then the gate stops accepting)")
	fs.IntVar(&r.PerSource, "per-source", gate.DefaultLimits.PerSource, "connections waiting at most from one source address")
	fs.DurationVar(&r.QueueTimeout, "queue-timeout", gate.DefaultLimits.QueueTimeout, "close a connection that waited longer (before any server byte)")
	fs.IntVar(&r.MaxInflight, "max-inflight", 0, "upstream handshakes in progress at most (0: no bound)")
	fs.DurationVar(&r.DialTimeout, "dial-timeout", gate.DefaultLimits.DialTimeout, "bound on an upstream connect")
	fs.StringVar(&configFile, "config", "", "YAML file of routes (reloaded on SIGHUP)")
	fs.StringVar(&metric, "metrics", "", "serve Prometheus metrics on ADDR/metrics")
	return c
}

func readGateConfig(path string) (*gate.Config, error) {
	f, err := os.Open(path)
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
