package db

// Member is one MySQL or MariaDB server of a run (a --dsn host): the
// clients whose home it is, what they did there, and its own counters.
type Member struct {
	Address string `json:"address"`        // host:port
	Name    string `json:"name,omitempty"` // wsrep_node_name, else hostname
	Version string `json:"version"`
	// Clients were connected to it at the start; a client whose
	// connection is lost goes on against the next member that answers.
	Clients        int     `json:"clients"`
	Transactions   int64   `json:"transactions"` // committed through it
	TPS            float64 `json:"tps"`
	Conflicts      int64   `json:"conflicts"`
	ConnectionLost int64   `json:"connection_lost"`
	// LostAt is when a connection to it was first lost (ns from the
	// start; 0: never), LostError why.
	LostAt    int64  `json:"lost_at_ns,omitempty"`
	LostError string `json:"lost_error,omitempty"`
	// Galera holds its wsrep counters over the run (nil without Galera).
	Galera *GaleraCounters `json:"galera,omitempty"`
	// Error says why its counters could not be read at the start (Galera
	// is then nil: counters read at the end alone would count from the
	// server's start) or at the end (it was lost; Galera is nil too); its
	// share of the load stands, and the run's Galera sums leave it out.
	Error string `json:"error,omitempty"`
}

// GaleraCounters are one member's wsrep status variables: states at the
// start and end, counters as their change over the run.
type GaleraCounters struct {
	StateStart       string `json:"state_start"` // wsrep_local_state_comment
	StateEnd         string `json:"state_end"`
	ClusterSizeStart int    `json:"cluster_size_start"`
	ClusterSizeEnd   int    `json:"cluster_size_end"`
	ClusterStatus    string `json:"cluster_status"` // at the end: Primary, non-Primary
	// Write sets it replicated (its clients' commits) and received (the
	// others'), and their bytes.
	Replicated      int64 `json:"replicated"`
	ReplicatedBytes int64 `json:"replicated_bytes"`
	Received        int64 `json:"received"`
	ReceivedBytes   int64 `json:"received_bytes"`
	// Its transactions that failed certification, and those aborted by
	// a replicated write set that touched the same rows (brute force).
	CertFailures int64 `json:"local_cert_failures"`
	BFAborts     int64 `json:"local_bf_aborts"`
	// Time replication was paused by flow control, and the pause
	// requests it sent (its apply queue was full) and received.
	FlowControlPaused int64 `json:"flow_control_paused_ns"`
	FlowControlSent   int64 `json:"flow_control_sent"`
	FlowControlRecv   int64 `json:"flow_control_recv"`
}

// Galera sums the members' counters: what the cluster network carried for
// the run's commits and what replication cost them.
type Galera struct {
	Members     int `json:"members"`      // whose counters were read at both ends
	ClusterSize int `json:"cluster_size"` // the largest wsrep_cluster_size at the end
	// Replicated write sets and bytes (every commit once, from the member
	// that took it), and received bytes (each write set once per other
	// member), in all and per committed transaction.
	WriteSets            int64   `json:"write_sets"`
	ReplicatedBytes      int64   `json:"replicated_bytes"`
	ReplicatedBytesPerTx float64 `json:"replicated_bytes_per_tx"`
	ReceivedBytes        int64   `json:"received_bytes"`
	ReceivedBytesPerTx   float64 `json:"received_bytes_per_tx"`
	// Certification failures (and brute-force aborts) over the members,
	// in all and per second of the run.
	CertFailures       int64   `json:"cert_failures"`
	CertFailuresPerSec float64 `json:"cert_failures_per_sec"`
	BFAborts           int64   `json:"bf_aborts"`
	// FlowControlPaused is the longest any member was paused by flow
	// control (ns), and its share of the run.
	FlowControlPaused        int64   `json:"flow_control_paused_ns"`
	FlowControlPausedPercent float64 `json:"flow_control_paused_percent"`
	FlowControlSent          int64   `json:"flow_control_sent"`
}
