package metrics

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/interlink/interlink/internal/inventory"
	"github.com/interlink/interlink/internal/rules"
)

// Audit runs the node's audit once and returns its result.
type Audit func(ctx context.Context) (*rules.Result, error)

// LiveAudit is the audit `interlink check` runs with cfg on the tree under
// root ("/" for the live node): gather the inventory, judge it with every
// rule. A run reads the tree afresh.
func LiveAudit(root string, cfg rules.Config) Audit {
	return func(ctx context.Context) (*rules.Result, error) {
		src, err := inventory.OpenContext(ctx, root)
		if err != nil {
			return nil, err
		}
		defer src.Close()
		inv, err := inventory.Gather(ctx, src, inventory.Options{})
		if err != nil {
			return nil, err
		}
		return rules.Check(inv, cfg), nil
	}
}

// Checker re-runs an audit on an interval and exports its findings:
// interlink_check_findings{rule,severity} (a series for every rule and
// every severity it may emit, 0 when it found nothing, so an alert
// resolves), interlink_check_last_run_timestamp_seconds,
// interlink_check_duration_seconds and interlink_check_failures_total.
type Checker struct {
	audit    Audit
	interval time.Duration
	log      func(string)

	findings       *prometheus.GaugeVec
	last, duration prometheus.Gauge
	failures       prometheus.Counter
	known          map[[2]string]bool // rule, severity series ever set (Once only)
	ran            atomic.Bool        // a run succeeded
}

// NewChecker registers the audit's metrics with reg. Run runs audit every
// interval; log, when not nil, is told of a failed run (one line).
func NewChecker(reg prometheus.Registerer, audit Audit, interval time.Duration, log func(string)) *Checker {
	c := &Checker{audit: audit, interval: interval, log: log, known: map[[2]string]bool{},
		findings: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "interlink", Name: "check_findings",
			Help: "Findings of the node's last 'interlink check' audit by rule and severity (0: the rule found nothing)."},
			[]string{"rule", "severity"}),
		last: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "interlink", Name: "check_last_run_timestamp_seconds",
			Help: "Unix time the last successful audit finished (absent until the first one)."}),
		duration: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "interlink", Name: "check_duration_seconds",
			Help: "Duration of the last successful audit."}),
		failures: prometheus.NewCounter(prometheus.CounterOpts{Namespace: "interlink", Name: "check_failures_total",
			Help: "Audits that could not run (nothing read); the findings then stay those of the last successful run."}),
	}
	reg.MustRegister(c.findings, c.duration, c.failures)
	// The timestamp appears with the first run, so "absent" means never.
	reg.MustRegister(gaugeAfterRun{c.last, &c.ran})
	return c
}

// gaugeAfterRun collects its gauge only after the first successful run.
type gaugeAfterRun struct {
	prometheus.Gauge
	ran *atomic.Bool
}

func (g gaugeAfterRun) Collect(ch chan<- prometheus.Metric) {
	if g.ran.Load() {
		g.Gauge.Collect(ch)
	}
}

// Run runs the audit at once and then every interval until ctx ends. A run
// that hangs (a hung file system) delays the next one; the timestamp then
// goes stale, which an alert sees.
func (c *Checker) Run(ctx context.Context) {
	t := time.NewTicker(c.interval)
	defer t.Stop()
	for {
		if err := c.Once(ctx); err != nil && ctx.Err() == nil && c.log != nil {
			c.log(fmt.Sprintf("check: %v; findings kept from the last run", err))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Once runs the audit and updates the metrics.
func (c *Checker) Once(ctx context.Context) error {
	start := time.Now()
	res, err := c.audit(ctx)
	if err != nil {
		c.failures.Inc()
		return err
	}
	count := map[[2]string]int{}
	for _, r := range rules.All() {
		for _, s := range r.Severities() {
			count[[2]string{r.ID, s.String()}] = 0
		}
	}
	for k := range c.known {
		count[k] = 0
	}
	for _, f := range res.Findings {
		count[[2]string{f.Rule, f.Severity.String()}]++
	}
	for k, n := range count {
		c.findings.WithLabelValues(k[0], k[1]).Set(float64(n))
		c.known[k] = true
	}
	c.duration.Set(time.Since(start).Seconds())
	c.last.SetToCurrentTime()
	c.ran.Store(true)
	return nil
}
