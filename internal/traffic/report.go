package traffic

import "github.com/interlink/interlink/internal/pmqos"

// Schema is the schema of `interlink bench --json`.
const Schema = "interlink.bench/v1"

// Report is the result of `interlink bench` (schema interlink.bench/v1):
// the test as run against an agent, and per direction both ends' intervals
// and the summary. It lives here, with the Result it wraps, so that the
// command, the HTML report and the history decode one type.
type Report struct {
	Schema string `json:"schema"`
	Peer   string `json:"peer"`
	Agent  string `json:"agent"`
	*Result
	Interrupted bool `json:"interrupted,omitempty"`
	// SelfTest is a blocks run's loopback self-test (both engines in
	// this process), measured after the run; nil for other modes or with
	// --self-test=false.
	SelfTest *SelfTest `json:"self_test,omitempty"`
	// CPULatency says which ends held a PM QoS CPU latency request for
	// the run (bench --cpu-latency); nil when none was asked for.
	CPULatency *pmqos.Report `json:"cpu_latency,omitempty"`
}
