package gate

import (
	"github.com/prometheus/client_golang/prometheus"
)

// routeMetrics are one route's series (label route=NAME).
type routeMetrics struct {
	accepted, admitted, abandoned, timeouts, upstreamErrors, fullEpisodes prometheus.Counter
	rejected                                                              *prometheus.CounterVec
	queued, inflight                                                      prometheus.Gauge
	wait, dial                                                            prometheus.Observer
}

// metrics are the gate's Prometheus series.
type metrics struct {
	accepted, admitted, abandoned, timeouts, upstreamErrors, fullEpisodes *prometheus.CounterVec
	rejected                                                              *prometheus.CounterVec
	queued, inflight                                                      *prometheus.GaugeVec
	wait, dial                                                            *prometheus.HistogramVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	counter := func(name, help string) *prometheus.CounterVec {
		c := prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "interlink", Subsystem: "gate", Name: name, Help: help}, []string{"route"})
		reg.MustRegister(c)
		return c
	}
	gauge := func(name, help string) *prometheus.GaugeVec {
		g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "interlink", Subsystem: "gate", Name: name, Help: help}, []string{"route"})
		reg.MustRegister(g)
		return g
	}
	hist := func(name, help string, buckets []float64) *prometheus.HistogramVec {
		h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: "interlink", Subsystem: "gate", Name: name, Help: help, Buckets: buckets}, []string{"route"})
		reg.MustRegister(h)
		return h
	}
	m := &metrics{
		accepted:       counter("accepted_total", "Client connections accepted."),
		admitted:       counter("admitted_total", "Client connections admitted to the upstream."),
		abandoned:      counter("abandoned_total", "Clients that gave up while queued (never dialled upstream)."),
		timeouts:       counter("queue_timeouts_total", "Clients closed after waiting past the queue timeout, before any server byte."),
		upstreamErrors: counter("upstream_dial_errors_total", "Upstream dials that failed."),
		fullEpisodes:   counter("queue_full_total", "Episodes of a full queue: it filled and accepting paused, until it drained to half."),
		queued:         gauge("queued", "Client connections waiting now."),
		inflight:       gauge("inflight_handshakes", "Upstream handshakes in progress (dial to first upstream byte)."),
		wait:           hist("queue_wait_seconds", "Time from accept to admission or drop.", prometheus.ExponentialBuckets(0.001, 2, 20)),
		dial:           hist("upstream_dial_seconds", "Upstream connect time.", prometheus.ExponentialBuckets(0.0001, 2, 18)),
	}
	m.rejected = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "interlink", Subsystem: "gate", Name: "rejected_total",
		Help: "Client connections closed at once, by reason."}, []string{"route", "reason"})
	reg.MustRegister(m.rejected)
	return m
}

func (m *metrics) route(name string) *routeMetrics {
	return &routeMetrics{
		accepted: m.accepted.WithLabelValues(name), admitted: m.admitted.WithLabelValues(name),
		abandoned: m.abandoned.WithLabelValues(name), timeouts: m.timeouts.WithLabelValues(name),
		upstreamErrors: m.upstreamErrors.WithLabelValues(name), fullEpisodes: m.fullEpisodes.WithLabelValues(name),
		rejected: m.rejected.MustCurryWith(prometheus.Labels{"route": name}),
		queued:   m.queued.WithLabelValues(name), inflight: m.inflight.WithLabelValues(name),
		wait: m.wait.WithLabelValues(name), dial: m.dial.WithLabelValues(name),
	}
}

// sourceCollector exports the deepest per-source queues (top N), computed
// at scrape time, so memory does not grow with the number of sources ever
// seen.
type sourceCollector struct {
	g    *Gate
	top  int
	desc *prometheus.Desc
}

func (c *sourceCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *sourceCollector) Collect(ch chan<- prometheus.Metric) {
	for _, r := range c.g.routeList() {
		r.mu.Lock()
		top := r.q.top(c.top)
		r.mu.Unlock()
		for src, d := range top {
			ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(d), r.cfg.Name, src.String())
		}
	}
}
