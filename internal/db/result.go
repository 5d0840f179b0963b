package db

import (
	"time"

	"github.com/interlink/interlink/internal/latency"
)

// Schema is the JSON schema of a Result.
const Schema = "interlink.db/v1"

// Why a run stopped.
const (
	StopTime         = "time"
	StopTransactions = "transactions" // the --transactions bound
	StopInterrupted  = "interrupted"  // Ctrl-C
	StopNoClients    = "no-clients"   // every client lost its connection
)

// Result is one run of the workload and what was measured during it. All
// numbers are plain units: ns, bytes, counts. A section that could not be
// measured carries its error and the rest stands.
type Result struct {
	Schema string `json:"schema"`
	Spec   Spec   `json:"spec"`
	Server Server `json:"server"`

	Start    time.Time     `json:"start"`
	Duration time.Duration `json:"duration_ns"` // first transaction start to last end
	// StoppedBy says which bound ended the run (time, transactions,
	// interrupted, no-clients).
	StoppedBy    string  `json:"stopped_by"`
	Transactions int64   `json:"transactions"` // committed
	TPS          float64 `json:"tps"`
	Latency      Latency `json:"latency"`
	Failed       Failed  `json:"failed"`
	// CancelledAtEnd counts transactions in flight when the run stopped
	// that did not finish within StopGrace (or at Ctrl-C); they are
	// neither committed nor failed.
	CancelledAtEnd int64 `json:"cancelled_at_end,omitempty"`
	// Conflicts counts tries that hit a conflict the database asks the
	// client to retry (MySQL error 1213: a Galera certification failure or
	// an InnoDB deadlock; 1205, 1020); Retries of them were tried again
	// (at most MaxTries per transaction), the others are in Failed.
	Conflicts       int64      `json:"conflicts"`
	ConflictsPerSec float64    `json:"conflicts_per_sec"`
	Retries         int64      `json:"retries"`
	Intervals       []Interval `json:"intervals"`

	WAL      WAL       `json:"wal"`
	Standbys []Standby `json:"standbys"`
	Local    Local     `json:"local"`
	// Nodes is the network cost on the other nodes the run could see
	// (Spec.Nodes: a lab's nodes), in their order.
	Nodes []NodeCost `json:"nodes,omitempty"`
	// Lab adds up Nodes (nil without them).
	Lab *LabCost `json:"lab,omitempty"`
	// Members are the MySQL servers the clients were spread over, in
	// --dsn order; Galera sums their wsrep counters (nil when none runs
	// Galera).
	Members []Member `json:"members,omitempty"`
	Galera  *Galera  `json:"galera,omitempty"`
	Errors  []string `json:"errors,omitempty"` // sections that failed (partial result)
}

// Server is what the run learnt about the server it ran against.
type Server struct {
	Product string `json:"product"` // PostgreSQL, MariaDB or MySQL
	Address string `json:"address"` // host:port (or socket) the clients reached
	Version string `json:"version"` // server_version
	// InRecovery is true for a standby (read-only: select-only works).
	InRecovery              bool   `json:"in_recovery"`
	SynchronousCommit       string `json:"synchronous_commit"`
	SynchronousStandbyNames string `json:"synchronous_standby_names"`
	Scale                   int    `json:"scale"`
	// MySQL's sbtest tables: how many, and rows in each.
	Tables                   int   `json:"tables,omitempty"`
	TableSize                int   `json:"table_size,omitempty"`
	InitDuration             int64 `json:"init_ns,omitempty"` // --init's time
	InitBytes                int64 `json:"init_bytes,omitempty"`
	TablesCreatedByInterlink bool  `json:"tables_created_by_interlink"`
}

// Latency is the distribution of committed transactions' latency, in ns,
// from an HDR histogram (3 significant digits).
type Latency = latency.Summary

// Failed counts transactions that did not commit, by reason. A client whose
// connection is lost reconnects and goes on.
type Failed struct {
	Total          int64   `json:"total"`
	Percent        float64 `json:"percent"`         // of committed + failed
	Serialization  int64   `json:"serialization"`   // SQLSTATE 40001
	Deadlock       int64   `json:"deadlock"`        // SQLSTATE 40P01; MySQL 1213 after the last try
	ConnectionLost int64   `json:"connection_lost"` // closed socket, class 08, admin shutdown
	Other          int64   `json:"other"`
	// LastError is the last failure's text (for the reason of "other").
	LastError string `json:"last_error,omitempty"`
}

// Interval is one --interval slice of the run.
type Interval struct {
	Start        time.Duration `json:"start_ns"`
	End          time.Duration `json:"end_ns"`
	Transactions int64         `json:"transactions"`
	TPS          float64       `json:"tps"`
	Failed       int64         `json:"failed"`
	// Retries counts transactions tried again after a conflict.
	Retries int64 `json:"retries,omitempty"`
	P50     int64 `json:"p50_ns"`
	P99     int64 `json:"p99_ns"`
	Max     int64 `json:"max_ns"`
	// ReplayLagBytes is the largest distance of any standby's replay
	// position behind the primary's current WAL position at the end of the
	// interval (-1 when no standby is visible).
	ReplayLagBytes int64 `json:"replay_lag_bytes"`
}

// WAL is the write-ahead log the server generated during the run
// (pg_current_wal_lsn before and after; cluster-wide, so other sessions'
// writes count too).
type WAL struct {
	StartLSN   string  `json:"start_lsn,omitempty"`
	EndLSN     string  `json:"end_lsn,omitempty"`
	Bytes      int64   `json:"bytes"`
	BytesPerTx float64 `json:"bytes_per_tx"`
	Error      string  `json:"error,omitempty"`
}

// Standby is one row of the primary's pg_stat_replication, at the start
// and at the end of the run. LSN fields are null without the pg_monitor
// role; then Visible is false.
type Standby struct {
	Name       string `json:"application_name"`
	ClientAddr string `json:"client_addr"`
	State      string `json:"state"`
	SyncState  string `json:"sync_state"` // async, potential, sync, quorum
	Visible    bool   `json:"lsn_visible"`
	// Progress over the run, in bytes of WAL: how far each position moved.
	SentBytes   int64 `json:"sent_bytes"`
	WriteBytes  int64 `json:"write_bytes"`
	FlushBytes  int64 `json:"flush_bytes"`
	ReplayBytes int64 `json:"replay_bytes"`
	// End positions and the distance behind the primary's WAL at the end.
	SentLSN        string `json:"sent_lsn,omitempty"`
	ReplayLSN      string `json:"replay_lsn,omitempty"`
	ReplayLagBytes int64  `json:"replay_lag_bytes"`
	// MaxReplayLagBytes is the largest distance seen at any interval.
	MaxReplayLagBytes int64 `json:"max_replay_lag_bytes"`
	// Lag times at the end (pg_stat_replication write_lag etc.; 0 when the
	// standby is caught up and the server reports null).
	WriteLag  int64 `json:"write_lag_ns"`
	FlushLag  int64 `json:"flush_lag_ns"`
	ReplayLag int64 `json:"replay_lag_ns"`
	// MaxReplayLag is the largest replay_lag seen at any interval.
	MaxReplayLag int64 `json:"max_replay_lag_ns"`
	// Gone is true when the standby was listed at the start but not at
	// the end.
	Gone bool `json:"gone,omitempty"`
}

// Local is the cost on this node during the run, from /proc: the
// interface the server is reached through, the IP and TCP counters of this
// network namespace, and the host's CPU.
type Local struct {
	Interface  string `json:"interface"` // "" for a Unix socket
	RemoteAddr string `json:"remote_addr"`
	// Interface counters (/proc/net/dev).
	RxBytes   uint64 `json:"rx_bytes"`
	TxBytes   uint64 `json:"tx_bytes"`
	RxPackets uint64 `json:"rx_packets"`
	TxPackets uint64 `json:"tx_packets"`
	RxDropped uint64 `json:"rx_dropped"`
	TxDropped uint64 `json:"tx_dropped"`
	RxErrors  uint64 `json:"rx_errors"`
	TxErrors  uint64 `json:"tx_errors"`
	// Namespace-wide IP and TCP counters (/proc/net/snmp).
	IPInReceives   int64 `json:"ip_in_receives"`
	IPOutRequests  int64 `json:"ip_out_requests"`
	FragCreates    int64 `json:"ip_frag_creates"`
	ReasmReqds     int64 `json:"ip_reasm_reqds"`
	ReasmOKs       int64 `json:"ip_reasm_oks"`
	ReasmFails     int64 `json:"ip_reasm_fails"`
	TCPInSegs      int64 `json:"tcp_in_segs"`
	TCPOutSegs     int64 `json:"tcp_out_segs"`
	TCPRetransSegs int64 `json:"tcp_retrans_segs"`
	// Host CPU over the run (/proc/stat, all CPUs), ns; NCPU CPUs.
	CPUUserNs    int64 `json:"cpu_user_ns"`
	CPUSystemNs  int64 `json:"cpu_system_ns"`
	CPUSoftIRQNs int64 `json:"cpu_softirq_ns"`
	CPUIdleNs    int64 `json:"cpu_idle_ns"`
	NCPU         int   `json:"ncpu"`
	// ClientCPUNs is this process's own CPU (the workload driver).
	ClientCPUNs int64 `json:"client_cpu_ns"`
	// Per committed transaction.
	PacketsPerTx     float64 `json:"packets_per_tx"` // interface rx + tx
	BytesPerTx       float64 `json:"bytes_per_tx"`   // interface rx + tx
	CPUNsPerTx       float64 `json:"cpu_ns_per_tx"`  // host user + system + softirq
	ClientCPUNsPerTx float64 `json:"client_cpu_ns_per_tx"`
	Error            string  `json:"error,omitempty"`
}
