// Package db runs a pgbench-like OLTP workload against a PostgreSQL server
// over pgx, or sysbench's oltp_read_write against MySQL or MariaDB servers
// (a Galera cluster's members) over go-sql-driver/mysql, and measures what a
// DBA looks at during the run: transactions per second, latency
// percentiles, failed transactions by reason and conflicts retried, the WAL
// the server generated and each standby's progress and lag
// (pg_stat_replication), or each MySQL server's share and its Galera
// counters (wsrep_*), and the network and CPU cost on the local node and on
// every lab node from /proc.
//
// Run takes a Spec and returns a *Result (schema interlink.db/v1); WriteText
// renders it. The tables are pgbench's (pgbench_accounts, _branches,
// _tellers, _history) with its scale factor, or sysbench's (sbtest1..N), so
// pgbench or sysbench and interlink can run against the same database. Both
// drivers' clients are sessions (session.go) driven by the same loop.
package db

import (
	"errors"
	"fmt"
	"time"
)

// ErrSpec marks a Spec that cannot run (bad flags); callers map it to a
// usage error.
var ErrSpec = errors.New("db: bad spec")

// kindError is an error of a class (ErrSpec, ErrConnect, ErrTables) whose
// text is only its message: the class is for errors.Is, not for the user.
type kindError struct {
	kind error
	msg  string
}

func (e *kindError) Error() string { return e.msg }
func (e *kindError) Unwrap() error { return e.kind }

func errorf(kind error, format string, a ...any) error {
	return &kindError{kind: kind, msg: fmt.Sprintf(format, a...)}
}

// Workload is the transaction each client runs in a loop.
type Workload string

// The workloads of pgbench's built-in scripts.
const (
	// TPCB is pgbench's default "TPC-B (sort of)": update an account, read
	// it back, update its teller and branch, insert a history row.
	TPCB Workload = "tpcb"
	// SimpleUpdate is pgbench -N: the same without the teller and branch
	// updates (no hot rows, so no lock waits between clients).
	SimpleUpdate Workload = "simple-update"
	// SelectOnly is pgbench -S: one primary-key lookup, no WAL.
	SelectOnly Workload = "select-only"
	// OLTPReadWrite is sysbench's oltp_read_write for MySQL and MariaDB
	// (mysql_workload.go): 10 point selects, four range selects, two
	// updates, a delete and an insert per transaction.
	OLTPReadWrite Workload = "oltp-read-write"
)

// Limits on a Spec. A scale factor is 100,000 accounts (about 15 MiB of
// table and index); --init is bounded so a typo cannot fill a disk.
const (
	MaxClients            = 1000
	MaxDuration           = time.Hour
	MaxInitScale          = 100
	MaxScale              = 100000
	DefaultMaxTx          = 100_000_000
	MinInterval           = 100 * time.Millisecond
	DefaultConnectTimeout = 10 * time.Second
	// StopGrace is how long transactions in flight at the end of --time
	// may take to finish before they are cancelled (a commit waiting for
	// a synchronous standby that is gone would wait forever).
	StopGrace = 5 * time.Second
	// AccountsPerScale, TellersPerScale: pgbench's row counts per scale
	// factor (and one branch).
	AccountsPerScale = 100000
	TellersPerScale  = 10
	// MySQL's sbtest tables (sysbench's defaults and --init's bounds).
	DefaultTables    = 1
	DefaultTableSize = 10000
	MaxTables        = 64
	MaxInitRows      = 10_000_000 // all tables: about 2 GB
)

// Spec is one run. Zero values take the defaults of Normalize.
type Spec struct {
	// DSN is the server (a libpq DSN, or a mysql:// URL); DSNs lists
	// several MySQL servers (each URL may list hosts), over which the
	// clients are spread, the first DSN's host first. Set either; both may
	// hold a password: never printed or saved.
	DSN      string        `json:"-"`
	DSNs     []string      `json:"-"`
	Workload Workload      `json:"workload"`
	Clients  int           `json:"clients"`
	Duration time.Duration `json:"duration_ns"`
	// MaxTransactions bounds the run by count, across all clients; 0 means
	// DefaultMaxTx.
	MaxTransactions int64 `json:"max_transactions"`
	// Scale is the scale factor --init creates; a run without Init reads
	// it from pgbench_branches (0 here).
	Scale int  `json:"scale"`
	Init  bool `json:"init"`
	// Tables and TableSize are the sbtest tables --init creates for
	// MySQL (sbtest1..Tables, TableSize rows each); a run without Init
	// reads them from the server (0 here).
	Tables    int           `json:"tables,omitempty"`
	TableSize int           `json:"table_size,omitempty"`
	Interval  time.Duration `json:"interval_ns"`
	// ConnectTimeout bounds each connection attempt unless the DSN sets
	// connect_timeout; zero means DefaultConnectTimeout, a negative one
	// is refused.
	ConnectTimeout time.Duration `json:"connect_timeout_ns"`
	// Nodes are read before and after the load (Result.Nodes).
	Nodes []NodeProbe `json:"-"`
}

// MySQL reports whether the spec runs against MySQL or MariaDB (its DSN
// is a mysql:// URL).
func (s Spec) MySQL() bool {
	if len(s.DSNs) > 0 {
		return isMySQL(s.DSNs[0])
	}
	return isMySQL(s.DSN)
}

// Normalize fills defaults and checks the limits; errors wrap ErrSpec.
func (s Spec) Normalize() (Spec, error) {
	if len(s.DSNs) == 0 && s.DSN != "" {
		s.DSNs = []string{s.DSN}
	}
	if len(s.DSNs) == 0 || s.DSNs[0] == "" {
		return s, errorf(ErrSpec, "--dsn is required (e.g. postgres://user@host:5432/db or mysql://user:password@host:3306/db)")
	}
	s.DSN = s.DSNs[0]
	var err error
	if s.MySQL() {
		s, err = s.normalizeMySQL()
	} else {
		s, err = s.normalizePostgres()
	}
	if err != nil {
		return s, err
	}
	return s.normalizeCommon()
}

// normalizePostgres checks pgbench's workloads and scale.
func (s Spec) normalizePostgres() (Spec, error) {
	if s.Workload == "" {
		s.Workload = TPCB
	}
	switch s.Workload {
	case TPCB, SimpleUpdate, SelectOnly:
	case OLTPReadWrite:
		return s, errorf(ErrSpec, "--workload %s is for MySQL (a mysql:// --dsn); PostgreSQL runs tpcb, simple-update or select-only", s.Workload)
	default:
		return s, errorf(ErrSpec, "--workload %q: want tpcb, simple-update or select-only", s.Workload)
	}
	if len(s.DSNs) > 1 {
		if isMySQL(s.DSNs[1]) {
			return s, errorf(ErrSpec, "--dsn: PostgreSQL and mysql:// DSNs mixed; run one database at a time")
		}
		return s, errorf(ErrSpec, "--dsn: PostgreSQL takes one server (several are for a MySQL or Galera cluster)")
	}
	if s.Tables != 0 || s.TableSize != 0 {
		return s, errorf(ErrSpec, "--tables and --table-size are for MySQL's sbtest tables; PostgreSQL's size is --scale")
	}
	if s.Init {
		if s.Scale == 0 {
			s.Scale = 1
		}
		if s.Scale < 1 || s.Scale > MaxInitScale {
			return s, errorf(ErrSpec, "--scale %d: --init creates 1 to %d (each is %d accounts, about 15 MiB)", s.Scale, MaxInitScale, AccountsPerScale)
		}
	} else if s.Scale != 0 {
		return s, errorf(ErrSpec, "--scale is for --init; a run reads the scale from pgbench_branches")
	}
	return s, nil
}

// normalizeMySQL checks the sysbench-shaped workload and its tables.
func (s Spec) normalizeMySQL() (Spec, error) {
	if s.Workload == "" {
		s.Workload = OLTPReadWrite
	}
	if s.Workload != OLTPReadWrite {
		return s, errorf(ErrSpec, "--workload %q: MySQL runs oltp-read-write (sysbench's shape)", s.Workload)
	}
	for _, d := range s.DSNs {
		if !isMySQL(d) {
			return s, errorf(ErrSpec, "--dsn: PostgreSQL and mysql:// DSNs mixed; run one database at a time")
		}
	}
	if s.Scale != 0 {
		return s, errorf(ErrSpec, "--scale is pgbench's; MySQL's tables are --tables and --table-size")
	}
	targets, err := parseMySQL(s.DSNs, time.Second)
	if err != nil {
		return s, err
	}
	if s.Clients < len(targets) {
		return s, errorf(ErrSpec, "--clients %d: fewer than the %d servers given (want at least one client per server)", s.Clients, len(targets))
	}
	if !s.Init {
		if s.Tables != 0 || s.TableSize != 0 {
			return s, errorf(ErrSpec, "--tables and --table-size are for --init; a run reads them from the sbtest tables")
		}
		return s, nil
	}
	if s.Tables == 0 {
		s.Tables = DefaultTables
	}
	if s.TableSize == 0 {
		s.TableSize = DefaultTableSize
	}
	if s.Tables < 1 || s.Tables > MaxTables {
		return s, errorf(ErrSpec, "--tables %d: want 1 to %d", s.Tables, MaxTables)
	}
	if s.TableSize < 1 || int64(s.Tables)*int64(s.TableSize) > MaxInitRows {
		return s, errorf(ErrSpec, "--table-size %d: want 1 or more, and at most %d rows in all tables (about 190 bytes each)", s.TableSize, MaxInitRows)
	}
	return s, nil
}

// normalizeCommon checks what every database's run shares.
func (s Spec) normalizeCommon() (Spec, error) {
	if s.Clients < 1 || s.Clients > MaxClients {
		return s, errorf(ErrSpec, "--clients %d: want 1 to %d", s.Clients, MaxClients)
	}
	if s.Duration <= 0 || s.Duration > MaxDuration {
		return s, errorf(ErrSpec, "--time %v: want more than 0 and at most %v", s.Duration, MaxDuration)
	}
	if s.MaxTransactions < 0 {
		return s, errorf(ErrSpec, "--transactions %d: want 0 (no limit but %d) or more", s.MaxTransactions, int64(DefaultMaxTx))
	}
	if s.MaxTransactions == 0 {
		s.MaxTransactions = DefaultMaxTx
	}
	if s.Interval == 0 {
		s.Interval = time.Second
	}
	if s.Interval < MinInterval {
		return s, errorf(ErrSpec, "--interval %v: want at least %v", s.Interval, MinInterval)
	}
	if s.ConnectTimeout < 0 {
		return s, errorf(ErrSpec, "--connect-timeout %v: want a positive duration (0 for the default, %v)", s.ConnectTimeout, DefaultConnectTimeout)
	}
	if s.ConnectTimeout == 0 {
		s.ConnectTimeout = DefaultConnectTimeout
	}
	return s, nil
}
