package watch

import "github.com/prometheus/client_golang/prometheus"

// metrics are the watch's series, namespace interlink.
type metrics struct {
	mtu, loss, problem, verdict, up *prometheus.GaugeVec
	handshake                       *prometheus.SummaryVec
	rtt                             *rttCollector
	wake                            *wakeMetrics
	runs, incomplete                prometheus.Counter
	duration, lastComplete          prometheus.Gauge
}

func newMetrics(reg prometheus.Registerer) *metrics {
	path := []string{"from", "to", "network"}
	gv := func(name, help string, labels []string) *prometheus.GaugeVec {
		g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "interlink", Name: name, Help: help}, labels)
		reg.MustRegister(g)
		return g
	}
	m := &metrics{
		mtu:     gv("path_mtu_bytes", "Largest packet that crossed the path in the last round (both directions are separate series).", path),
		loss:    gv("path_probe_loss_ratio", "Probes lost at sizes that passed on retry, over probes sent, in the last round (random loss on the path).", path),
		problem: gv("path_problem", "1 when the path's verdict is not ok, it is below --expect, or it could not be measured.", path),
		verdict: gv("path_verdict", "1 for the path's verdict in the last round: ok, local-limit, icmp, blackhole, unreachable, not-measured.", append(path, "verdict")),
		up:      gv("agent_up", "1 when the node's agent answered the last round's authenticated handshake.", []string{"node"}),
		handshake: prometheus.NewSummaryVec(prometheus.SummaryOpts{Namespace: "interlink", Name: "agent_handshake_seconds",
			Help: "Time of an authenticated handshake from the watching host to the node's agent on its control address (TCP connect, two round trips " +
				"and the HMAC work), over the last 10 minutes: the management path to the agent, not the interconnect between nodes (interlink_path_rtt_seconds).",
			Objectives: map[float64]float64{0.5: 0.05, 0.9: 0.01, 0.99: 0.001}}, []string{"node"}),
		runs:         prometheus.NewCounter(prometheus.CounterOpts{Namespace: "interlink", Name: "mesh_rounds_total", Help: "Mesh rounds run."}),
		incomplete:   prometheus.NewCounter(prometheus.CounterOpts{Namespace: "interlink", Name: "mesh_rounds_incomplete_total", Help: "Mesh rounds cut short by the interval."}),
		duration:     prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "interlink", Name: "mesh_round_seconds", Help: "Duration of the last mesh round."}),
		lastComplete: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "interlink", Name: "mesh_last_complete_timestamp_seconds", Help: "Unix time the last complete round ended."}),
	}
	m.rtt = newRTTCollector()
	m.wake = newWakeMetrics(reg)
	reg.MustRegister(m.handshake, m.rtt, m.runs, m.incomplete, m.duration, m.lastComplete)
	return m
}
