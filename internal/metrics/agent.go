package metrics

import "github.com/prometheus/client_golang/prometheus"

// AgentStats reads an agent's session counts (agent.Server's Active,
// Pending and Sessions).
type AgentStats struct {
	Active   func() int   // authenticated sessions open now
	Pending  func() int   // handshakes in progress
	Sessions func() int64 // authenticated sessions since start
}

// RegisterAgent registers the agent's session metrics with reg, read at
// each scrape.
func RegisterAgent(reg prometheus.Registerer, st AgentStats) {
	reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "interlink", Name: "agent_sessions_active",
			Help: "Authenticated control sessions open on this agent."}, func() float64 { return float64(st.Active()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "interlink", Name: "agent_handshakes_pending",
			Help: "Handshakes of unauthenticated peers in progress on this agent."}, func() float64 { return float64(st.Pending()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Namespace: "interlink", Name: "agent_sessions_total",
			Help: "Authenticated control sessions this agent has served since it started."}, func() float64 { return float64(st.Sessions()) }),
	)
}

// RegisterIP registers the IP fragmentation and reassembly counters of
// snmpPath (/proc/net/snmp: the network namespace the process runs in),
// read at each scrape.
func RegisterIP(reg prometheus.Registerer, snmpPath string) {
	reg.MustRegister(newIPCollector(snmpPath))
}
