// Package metrics is the Prometheus exposition of a node's own state for
// `interlink agent --metrics`: the kernel's IP fragmentation and
// reassembly counters, the findings of the node's `interlink check` audit
// by rule and severity (re-run on an interval), and the agent's sessions.
// Serve is the read-only HTTP endpoint that exposes a registry.
//
// Path metrics (MTU, verdict, round trips between nodes) are measured by
// `interlink watch` (package watch), which probes every path; this package
// holds what only the node itself can see.
package metrics

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Listen opens the TCP listener of a metrics endpoint on addr, HOST:PORT
// (HOST may be empty for every address). The port is required: a metrics
// endpoint on a random port cannot be scraped.
func Listen(addr string) (net.Listener, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("%q: want HOST:PORT or :PORT (e.g. :9472)", addr)
	}
	if port == "" {
		return nil, fmt.Errorf("%q: no port (e.g. %s)", addr, net.JoinHostPort(host, "9472"))
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%q: %w", addr, err)
	}
	return ln, nil
}

// Timeouts of the metrics server: a scrape is one small GET; a client that
// holds a connection idle or sends slowly is cut off.
const (
	readTimeout  = 10 * time.Second
	writeTimeout = 30 * time.Second
	idleTimeout  = 60 * time.Second
)

// Serve serves g on ln until ctx ends, then closes ln and returns nil. It
// answers GET and HEAD of /metrics and nothing else (404 for other paths,
// 405 for other methods): it is read-only. A collector that fails leaves
// its series out and the rest are served (promhttp.ContinueOnError).
func Serve(ctx context.Context, ln net.Listener, g prometheus.Gatherer) error {
	h := promhttp.HandlerFor(g, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError, MaxRequestsInFlight: 4, Timeout: 20 * time.Second})
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch {
			case r.URL.Path != "/metrics":
				http.NotFound(w, r)
			case r.Method != http.MethodGet && r.Method != http.MethodHead:
				w.Header().Set("Allow", "GET, HEAD")
				http.Error(w, "metrics are read-only", http.StatusMethodNotAllowed)
			default:
				h.ServeHTTP(w, r)
			}
		}),
		ReadHeaderTimeout: 5 * time.Second, ReadTimeout: readTimeout, WriteTimeout: writeTimeout,
		IdleTimeout: idleTimeout, MaxHeaderBytes: 16 << 10,
	}
	stop := context.AfterFunc(ctx, func() { srv.Close() })
	defer stop()
	err := srv.Serve(ln)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}
