// Package awr reads Oracle AWR reports (awrrpt.sql for one instance,
// awrgrpt.sql for a whole RAC database; text and HTML; releases 11.2,
// 12c, 18c/19c and later), extracts the header, the load profile and the
// cluster sections into typed values, judges them (findings as check has
// them) and compares reports taken before and after a change.
//
// Parsers take an io.Reader and read it as a stream: a text report line by
// line, an HTML report through golang.org/x/net/html's tokenizer, keeping
// only the row being read, so a report of any size is read in bounded
// memory. Each section is parsed by its own file (header.go, profile.go,
// waits.go, interconnect.go; global.go, globalload.go and globalic.go for
// awrgrpt); read.go and html.go turn the two formats into the same stream
// of section titles and rows. 12.2 and later print cluster times in
// microseconds; they are kept in milliseconds, as 11.2 printed them.
//
// A section a report does not have is absent, never zero: scalar sections
// are pointers (nil: absent) and list sections nil slices (absent) or
// empty ones (the section was there with no rows); Instance.Sections says
// which was which.
package awr

import (
	"errors"

	"github.com/interlink/interlink/internal/rules"
)

// Schema names the JSON document of `interlink awr --json`.
const Schema = "interlink.awr/v1"

// ErrNotAWR marks input that is not an AWR report: no AWR title was found.
var ErrNotAWR = errors.New("not an AWR report")

// Kinds of report.
const (
	KindInstance = "instance" // awrrpt.sql: one instance ("WORKLOAD REPOSITORY report for")
	KindGlobal   = "global"   // awrgrpt.sql: every instance ("WORKLOAD REPOSITORY REPORT (RAC)")
)

// Result is what `interlink awr` prints: the reports read, the findings on
// them and the verdict.
type Result struct {
	Schema   string          `json:"schema"`
	Reports  []Report        `json:"reports"`
	Findings []rules.Finding `json:"findings"`
	Summary  rules.Summary   `json:"summary"`
}

// Report is one AWR report as read.
type Report struct {
	File   string `json:"file"`
	Format string `json:"format"` // "text" or "html"
	Kind   string `json:"kind"`   // KindInstance or KindGlobal
	DBName string `json:"db_name"`
	DBID   string `json:"db_id"`
	// Release is the database release as printed (11.2.0.4.0, 19.0.0.0.0).
	Release string `json:"release"`
	// RAC is the header's RAC column; nil when the report does not say.
	RAC       *bool `json:"rac"`
	BeginSnap *Snap `json:"begin_snap"`
	EndSnap   *Snap `json:"end_snap"`
	// DecimalComma: the report prints numbers as 1.234,56.
	DecimalComma bool       `json:"decimal_comma,omitempty"`
	Instances    []Instance `json:"instances"`
	// Cluster: at least one cluster section was read.
	Cluster bool `json:"cluster"`
	// Notes say what a reader should know: no cluster sections, a report
	// cut short, rows that could not be read.
	Notes []string `json:"notes"`
}

// Snap is a snapshot bounding the report's interval.
type Snap struct {
	ID   int64  `json:"id"`
	Time string `json:"time"` // as printed, e.g. 20-Jan-25 08:00:22
}

// Instance is what a report says about one instance: an awrrpt report has
// one, an awrgrpt report one per instance it covers.
type Instance struct {
	Number int    `json:"number"` // 0 when the report does not say
	Name   string `json:"name"`
	Host   string `json:"host"`
	// ElapsedSeconds and DBTimeSeconds come from the header (minutes as
	// printed, times 60).
	ElapsedSeconds *float64      `json:"elapsed_seconds"`
	DBTimeSeconds  *float64      `json:"db_time_seconds"`
	Load           *LoadProfile  `json:"load_profile"`
	GCLoad         *GCLoad       `json:"gc_load_profile"`
	GCEfficiency   *GCEfficiency `json:"gc_efficiency"`
	GCWorkload     *GCWorkload   `json:"gc_workload"`
	// GCBlocksLost and GCBlocksCorrupt are the interval's totals of the
	// statistics "gc blocks lost" and "gc blocks corrupt": blocks, from
	// Instance Activity Stats (awrrpt) or SysStat and Global Messaging -
	// RAC (awrgrpt; GCBlocksLostFrom names the section). nil when the
	// report prints no such row.
	GCBlocksLost     *float64 `json:"gc_blocks_lost"`
	GCBlocksLostFrom string   `json:"gc_blocks_lost_from,omitempty"`
	GCBlocksCorrupt  *float64 `json:"gc_blocks_corrupt"`
	// GCLostBlockWaits is the waits of "gc cr block lost" and "gc current
	// block lost": waits, not blocks (a lost block may be waited for more
	// than once, or by nobody). nil when the report has no wait table, or
	// only a top events table without them; 0 when Foreground Wait Events
	// lists neither event.
	GCLostBlockWaits *float64 `json:"gc_lost_block_waits"`
	// Waits are the global cache wait events (gc ...), from Foreground
	// Wait Events, else from the top events table (WaitsFrom names it):
	// nil when neither table is in the report, empty when the table had
	// rows but no gc event.
	Waits     []WaitEvent        `json:"gc_wait_events"`
	WaitsFrom string             `json:"gc_wait_events_from,omitempty"`
	Pings     []Ping             `json:"interconnect_pings"`
	Clients   []ClientThroughput `json:"interconnect_clients"`
	Devices   []Device           `json:"interconnect_devices"`
	Remaster  *Remaster          `json:"dynamic_remastering"`
	// Sections lists every section this package reads, in a fixed order,
	// with "present", "empty" (its title was there with no rows) or
	// "absent".
	Sections []SectionStatus `json:"sections"`
}

// SectionStatus says whether a section was in the report.
type SectionStatus struct {
	Name   string `json:"name"`
	Status string `json:"status"` // present, empty, absent
}

// LoadProfile is the Load Profile section, per second.
type LoadProfile struct {
	DBTimePerSec       *float64 `json:"db_time_per_sec"` // seconds of DB time per second
	DBCPUPerSec        *float64 `json:"db_cpu_per_sec"`
	TransactionsPerSec *float64 `json:"transactions_per_sec"`
	ExecutesPerSec     *float64 `json:"executes_per_sec"`
	UserCallsPerSec    *float64 `json:"user_calls_per_sec"`
	RedoBytesPerSec    *float64 `json:"redo_bytes_per_sec"`
	LogicalReadsPerSec *float64 `json:"logical_reads_per_sec"`
}

// GCLoad is the Global Cache Load Profile, per second.
type GCLoad struct {
	BlocksReceivedPerSec   *float64 `json:"blocks_received_per_sec"`
	BlocksServedPerSec     *float64 `json:"blocks_served_per_sec"`
	MessagesReceivedPerSec *float64 `json:"gcs_ges_messages_received_per_sec"`
	MessagesSentPerSec     *float64 `json:"gcs_ges_messages_sent_per_sec"`
	FusionWritesPerSec     *float64 `json:"dbwr_fusion_writes_per_sec"`
	// TrafficKBPerSec is "Estd Interconnect traffic (KB)": Oracle's
	// estimate, KB per second (Statspack's sprepins.sql prints the same formula; docs/awr.md).
	TrafficKBPerSec *float64 `json:"estd_interconnect_traffic_kb_per_sec"`
	// TrafficComputed: awrgrpt does not print the estimate; it was
	// computed here by Oracle's formula from the report's per-second
	// blocks and messages and its block size.
	TrafficComputed bool `json:"estd_interconnect_traffic_computed,omitempty"`
	// BlocksLost and CRFailures are the interval's totals of "gc blocks
	// lost" and "gc cr failure" (awrgrpt's SysStat and Global Messaging;
	// awrrpt does not print them here).
	BlocksLost *float64 `json:"gc_blocks_lost"`
	CRFailures *float64 `json:"gc_cr_failures"`
}

// GCEfficiency is Global Cache Efficiency Percentages: where buffer gets
// were satisfied.
type GCEfficiency struct {
	LocalPct  *float64 `json:"local_cache_percent"`
	RemotePct *float64 `json:"remote_cache_percent"`
	DiskPct   *float64 `json:"disk_percent"`
}

// GCWorkload is Global Cache and Enqueue Services - Workload
// Characteristics, in milliseconds (the flush shares in percent). The
// receive times of an instance that received no block (0 blocks/s in its
// load profile and a printed 0) are absent (nil): no block, no time.
type GCWorkload struct {
	EnqueueGetMs        *float64 `json:"avg_global_enqueue_get_ms"`
	CRReceiveMs         *float64 `json:"avg_cr_block_receive_ms"`
	CurrentReceiveMs    *float64 `json:"avg_current_block_receive_ms"`
	CRBuildMs           *float64 `json:"avg_cr_block_build_ms"`
	CRSendMs            *float64 `json:"avg_cr_block_send_ms"`
	CRFlushMs           *float64 `json:"avg_cr_block_flush_ms"`
	CRFlushesPct        *float64 `json:"cr_log_flushes_percent"`
	CurrentPinMs        *float64 `json:"avg_current_block_pin_ms"`
	CurrentSendMs       *float64 `json:"avg_current_block_send_ms"`
	CurrentFlushMs      *float64 `json:"avg_current_block_flush_ms"`
	CurrentFlushesPct   *float64 `json:"current_log_flushes_percent"`
	MessageSentQueueMs  *float64 `json:"avg_message_sent_queue_ms,omitempty"`
	MessageKSXPQueueMs  *float64 `json:"avg_message_sent_queue_ksxp_ms,omitempty"`
	MessageReceivedQMs  *float64 `json:"avg_message_received_queue_ms,omitempty"`
	GCSMessageProcessMs *float64 `json:"avg_gcs_message_process_ms,omitempty"`
}

// WaitEvent is one global cache wait event of the interval.
type WaitEvent struct {
	Name         string   `json:"name"`
	Waits        *float64 `json:"waits"`
	TotalSeconds *float64 `json:"total_wait_seconds"`
	AvgMs        *float64 `json:"avg_wait_ms"`
	PctDBTime    *float64 `json:"percent_db_time"`
}

// Ping is one row of Interconnect Ping Latency Stats: this instance's
// pings of Target (the instance itself is the control). A size with a
// count of 0 has no samples: its average and deviation are absent (nil),
// not the 0 the report prints. 12.2 and later
// print the averages in microseconds; they are kept in milliseconds. The
// standard deviations are kept as printed: their column names no unit,
// and beside averages in microseconds their values are those of
// milliseconds (0.01 beside an average of 6), as before 12.2.
type Ping struct {
	Target      int      `json:"target_instance"`
	Count500B   *float64 `json:"count_500b"`
	Avg500BMs   *float64 `json:"avg_500b_ms"`
	Stddev500Ms *float64 `json:"stddev_500b_ms"`
	Count8K     *float64 `json:"count_8k"`
	Avg8KMs     *float64 `json:"avg_8k_ms"`
	Stddev8KMs  *float64 `json:"stddev_8k_ms"`
}

// ClientThroughput is one row of Interconnect Throughput by Client, MB/s.
type ClientThroughput struct {
	Client          string   `json:"client"`
	SendMBPerSec    *float64 `json:"send_mb_per_sec"`
	ReceiveMBPerSec *float64 `json:"receive_mb_per_sec"`
}

// Device is one interconnect device (Interconnect Device Statistics, at
// OS level, over the interval): throughput in MB/s, the rest counts.
type Device struct {
	Name             string   `json:"name"`
	Address          string   `json:"address"`
	Public           string   `json:"public,omitempty"` // YES, NO or "" (not printed)
	Source           string   `json:"source,omitempty"`
	SendMBPerSec     *float64 `json:"send_mb_per_sec"`
	SendErrors       *float64 `json:"send_errors"`
	SendDropped      *float64 `json:"send_dropped"`
	SendOverrun      *float64 `json:"send_buffer_overrun"`
	SendCarrierLost  *float64 `json:"send_carrier_lost"`
	ReceiveMBPerSec  *float64 `json:"receive_mb_per_sec"`
	ReceiveErrors    *float64 `json:"receive_errors"`
	ReceiveDropped   *float64 `json:"receive_dropped"`
	ReceiveOverrun   *float64 `json:"receive_buffer_overrun"`
	ReceiveFrameErrs *float64 `json:"receive_frame_errors"`
}

// Remaster is Dynamic Remastering Stats: totals over the interval.
type Remaster struct {
	Ops                   *float64 `json:"remaster_ops"`
	Objects               *float64 `json:"remastered_objects"`
	ReplayedLocksReceived *float64 `json:"replayed_locks_received"`
	ReplayedLocksSent     *float64 `json:"replayed_locks_sent"`
	ResourcesCleaned      *float64 `json:"resources_cleaned"`
	TimeSeconds           *float64 `json:"remaster_time_seconds"`
}
