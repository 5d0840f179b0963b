package ab

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Unit says how a metric's values are shown; values stay in plain units
// (bit/s, ns, counts) as in interlink's JSON.
type Unit string

// Units of the known metrics.
const (
	UnitNone    Unit = ""
	UnitBitRate Unit = "bit/s"
	UnitNs      Unit = "ns"
	UnitPerSec  Unit = "/s"
	UnitPercent Unit = "%"
	UnitCount   Unit = "count"
)

// Metric is what one run yields as one number.
type Metric struct {
	Name        string `json:"name"`
	Source      string `json:"source"` // "interlink", "json:PATH", "regex:RE", "wall"
	Unit        Unit   `json:"unit,omitempty"`
	LowerBetter bool   `json:"lower_is_better"`
	re          *regexp.Regexp
	path        []string
	known       *known
	// optional marks a secondary metric ab chose itself (no --metric): a
	// run whose JSON lacks it (the kernel did not give the counters it
	// needs) leaves it out for that run rather than fail.
	optional bool
}

// errAbsent is a figure missing from a run's JSON: not measured.
var errAbsent = errors.New("not in the run's JSON")

// known is a metric interlink understands in its own JSON documents.
type known struct {
	schema string
	path   []string // inside each flow's summary, or from the top with a leading "."
	sum    bool     // add up over flows (rates); otherwise the first flow's
	unit   Unit
	lower  bool
	help   string
}

// Known lists interlink's own metrics by name, for `bench --json` runs.
var knownMetrics = map[string]known{
	"bits_per_sec":               {"interlink.bench/v1", []string{"bits_per_sec"}, true, UnitBitRate, false, "goodput delivered, all flows"},
	"messages_per_sec":           {"interlink.bench/v1", []string{"messages_per_sec"}, true, UnitPerSec, false, "datagrams or blocks delivered per second"},
	"blocks_per_sec":             {"interlink.bench/v1", []string{"messages_per_sec"}, true, UnitPerSec, false, "blocks per second (blocks mode)"},
	"rtt_p50":                    {"interlink.bench/v1", []string{"rtt", "p50_ns"}, false, UnitNs, true, "median round trip (blocks)"},
	"rtt_p99":                    {"interlink.bench/v1", []string{"rtt", "p99_ns"}, false, UnitNs, true, "99th percentile round trip (blocks)"},
	"loss_percent":               {"interlink.bench/v1", []string{"loss_percent"}, false, UnitPercent, true, "messages lost"},
	"retransmits":                {"interlink.bench/v1", []string{"retransmits"}, true, UnitCount, true, "TCP retransmits"},
	"jitter":                     {"interlink.bench/v1", []string{"jitter_ns"}, false, UnitNs, true, "RFC 3550 jitter (udp)"},
	"fragments_per_message":      {"interlink.bench/v1", []string{"fragments_per_message"}, false, UnitNone, true, "IP packets per message"},
	"packets_per_message":        {"interlink.bench/v1", []string{"packets_per_message"}, false, UnitNone, true, "IP packets both ways per message"},
	"cpu_per_message_client":     {"interlink.bench/v1", []string{"client_cost", "cpu_ns_per_message"}, false, UnitNs, true, "requester/sender CPU per message"},
	"cpu_per_message_server":     {"interlink.bench/v1", []string{"server_cost", "cpu_ns_per_message"}, false, UnitNs, true, "responder/receiver (agent) CPU per message"},
	"softirq_per_message_client": {"interlink.bench/v1", []string{"client_cost", "softirq_ns_per_message"}, false, UnitNs, true, "host softirq per message, client side"},
	"softirq_per_message_server": {"interlink.bench/v1", []string{"server_cost", "softirq_ns_per_message"}, false, UnitNs, true, "host softirq per message, agent side"},
	"cpu_per_gib_client":         {"interlink.bench/v1", []string{"client_cost", "cpu_ns_per_gib"}, false, UnitNs, true, "client CPU per GiB delivered"},
	"cpu_per_gib_server":         {"interlink.bench/v1", []string{"server_cost", "cpu_ns_per_gib"}, false, UnitNs, true, "agent CPU per GiB delivered"},
	"wall":                       {"", nil, false, UnitNs, true, "wall time of the run (any command)"},
	// interlink db bench: paths from the top of the document (leading "").
	"tps":              {"interlink.db/v1", []string{"", "tps"}, false, UnitPerSec, false, "committed transactions per second (db bench)"},
	"latency_p50":      {"interlink.db/v1", []string{"", "latency", "p50_ns"}, false, UnitNs, true, "median transaction latency (db bench)"},
	"latency_p90":      {"interlink.db/v1", []string{"", "latency", "p90_ns"}, false, UnitNs, true, "90th percentile transaction latency (db bench)"},
	"latency_p99":      {"interlink.db/v1", []string{"", "latency", "p99_ns"}, false, UnitNs, true, "99th percentile transaction latency (db bench)"},
	"failed_percent":   {"interlink.db/v1", []string{"", "failed", "percent"}, false, UnitPercent, true, "transactions that did not commit (db bench)"},
	"wal_bytes_per_tx": {"interlink.db/v1", []string{"", "wal", "bytes_per_tx"}, false, UnitNone, true, "WAL generated per transaction (db bench)"},
	"packets_per_tx":   {"interlink.db/v1", []string{"", "local", "packets_per_tx"}, false, UnitNone, true, "packets on the server's interface per transaction (db bench)"},
	"bytes_per_tx":     {"interlink.db/v1", []string{"", "local", "bytes_per_tx"}, false, UnitNone, true, "bytes on the server's interface per transaction (db bench)"},
	"cpu_per_tx":       {"interlink.db/v1", []string{"", "local", "cpu_ns_per_tx"}, false, UnitNs, true, "host CPU (user, system, softirq) per transaction (db bench)"},
	"tcp_retransmits":  {"interlink.db/v1", []string{"", "local", "tcp_retrans_segs"}, false, UnitCount, true, "TCP segments retransmitted during the run (db bench)"},
	"ip_fragments":     {"interlink.db/v1", []string{"", "local", "ip_frag_creates"}, false, UnitCount, true, "IP fragments created during the run (db bench)"},
	// db bench against MySQL or a Galera cluster, and the lab's nodes.
	"conflicts_per_sec":       {"interlink.db/v1", []string{"", "conflicts_per_sec"}, false, UnitPerSec, true, "conflicts retried or failed per second (db bench, MySQL error 1213)"},
	"cert_failures_per_sec":   {"interlink.db/v1", []string{"", "galera", "cert_failures_per_sec"}, false, UnitPerSec, true, "Galera certification failures per second, all servers (db bench)"},
	"flow_control_paused":     {"interlink.db/v1", []string{"", "galera", "flow_control_paused_ns"}, false, UnitNs, true, "longest time a Galera server was paused by flow control (db bench)"},
	"replicated_bytes_per_tx": {"interlink.db/v1", []string{"", "galera", "replicated_bytes_per_tx"}, false, UnitNone, true, "Galera write-set bytes replicated per transaction (db bench)"},
	"lab_tcp_segs_per_tx":     {"interlink.db/v1", []string{"", "lab", "tcp_out_segs_per_tx"}, false, UnitNone, true, "TCP segments the lab's nodes sent per transaction (db bench --lab)"},
	"lab_cpu_per_tx":          {"interlink.db/v1", []string{"", "lab", "process_cpu_ns_per_tx"}, false, UnitNs, true, "CPU of the lab nodes' processes per transaction (db bench --lab)"},
	// interlink storage bench (interlink.storage/v1), from the top.
	"storage_time":           {"interlink.storage/v1", []string{"", "duration_ns"}, false, UnitNs, true, "duration of the storage bench run"},
	"cpu_per_io":             {"interlink.storage/v1", []string{"", "cpu_ns_per_io"}, false, UnitNs, true, "interlink's CPU per I/O (storage bench)"},
	"rpc_calls":              {"interlink.storage/v1", []string{"", "emulation", "calls_total"}, false, UnitCount, true, "NFS RPCs the emulated client issued (storage bench nfs://)"},
	"getattr_calls":          {"interlink.storage/v1", []string{"", "emulation", "calls", "GETATTR"}, false, UnitCount, true, "NFS GETATTR calls (storage bench nfs://)"},
	"commit_calls":           {"interlink.storage/v1", []string{"", "emulation", "calls", "COMMIT"}, false, UnitCount, true, "NFS COMMIT calls (storage bench nfs://)"},
	"write_calls":            {"interlink.storage/v1", []string{"", "emulation", "calls", "WRITE"}, false, UnitCount, true, "NFS WRITE calls (storage bench nfs://)"},
	"standby_replay_lag_max": {"interlink.db/v1", []string{"", "standbys", "0", "max_replay_lag_bytes"}, false, UnitNone, true, "first standby's largest replay lag, bytes (db bench)"},
	// interlink bench --mode gc (interlink.gc/v1), from the top.
	"gc_blocks_per_sec":      {"interlink.gc/v1", []string{"", "total", "blocks_per_sec"}, false, UnitPerSec, false, "blocks received per second, all nodes (bench --mode gc)"},
	"gc_2way_mean":           {"interlink.gc/v1", []string{"", "total", "two_way", "mean_ns"}, false, UnitNs, true, "mean 2-way block receive time, all nodes (gc)"},
	"gc_2way_p50":            {"interlink.gc/v1", []string{"", "total", "two_way", "p50_ns"}, false, UnitNs, true, "median 2-way block receive time (gc)"},
	"gc_2way_p99":            {"interlink.gc/v1", []string{"", "total", "two_way", "p99_ns"}, false, UnitNs, true, "99th percentile 2-way block receive time (gc)"},
	"gc_3way_mean":           {"interlink.gc/v1", []string{"", "total", "three_way", "mean_ns"}, false, UnitNs, true, "mean 3-way block receive time, all nodes (gc; 3 nodes or more)"},
	"gc_3way_p50":            {"interlink.gc/v1", []string{"", "total", "three_way", "p50_ns"}, false, UnitNs, true, "median 3-way block receive time (gc)"},
	"gc_3way_p99":            {"interlink.gc/v1", []string{"", "total", "three_way", "p99_ns"}, false, UnitNs, true, "99th percentile 3-way block receive time (gc)"},
	"gc_lost":                {"interlink.gc/v1", []string{"", "total", "lost"}, false, UnitCount, true, "blocks lost, all pairs (gc)"},
	"gc_cpu_per_block":       {"interlink.gc/v1", []string{"", "total", "cpu_ns_per_block"}, false, UnitNs, true, "agents' cpu (user + system) per block received (gc)"},
	"gc_fragments_per_block": {"interlink.gc/v1", []string{"", "total", "fragments_per_block"}, false, UnitNone, true, "IP packets per block shipped (gc)"},
	"gc_ping_500b_avg":       {"interlink.gc/v1", []string{"", "total", "ping_500b_avg_ns"}, false, UnitNs, true, "mean 500 B ping to another node (gc)"},
	"gc_ping_8k_avg":         {"interlink.gc/v1", []string{"", "total", "ping_8k_avg_ns"}, false, UnitNs, true, "mean 8 KiB ping to another node (gc)"},
}

// DefaultMetrics are taken from an interlink run when no --metric is
// given: bench by mode, db and storage by schema (storage over nfs:// adds
// the RPC counts), any other command by its wall time.
var DefaultMetrics = map[string][]string{
	"blocks": {"blocks_per_sec", "rtt_p50", "rtt_p99", "fragments_per_message", "cpu_per_message_client", "cpu_per_message_server"},
	"tcp":    {"bits_per_sec", "retransmits", "cpu_per_gib_client", "cpu_per_gib_server"},
	"udp":    {"bits_per_sec", "loss_percent", "fragments_per_message", "cpu_per_gib_client", "cpu_per_gib_server"},
	"":       {"wall"},
	// Other interlink commands, by schema.
	"interlink.db/v1":          {"tps", "latency_p50", "latency_p99", "packets_per_tx", "cpu_per_tx"},
	"interlink.db/v1 galera":   {"tps", "latency_p50", "latency_p99", "conflicts_per_sec", "flow_control_paused", "replicated_bytes_per_tx"},
	"interlink.storage/v1":     {"storage_time", "cpu_per_io"},
	"interlink.storage/v1 nfs": {"storage_time", "rpc_calls", "getattr_calls", "commit_calls", "write_calls"},
	// 3-way figures exist from 3 nodes on: ask for them with --metric.
	"interlink.gc/v1": {"gc_blocks_per_sec", "gc_2way_p50", "gc_lost", "gc_cpu_per_block"},
}

// KnownNames returns the metric names interlink understands, with their
// meaning, for help text.
func KnownNames() map[string]string {
	m := map[string]string{}
	for n, k := range knownMetrics {
		m[n] = k.help
	}
	return m
}

// ParseMetric parses a --metric argument:
//
//	NAME             a known interlink metric (see KnownNames) or wall
//	NAME=json:PATH   a number in the run's JSON output, PATH dot-separated
//	                 with numeric indexes (flows.0.summary.bits_per_sec)
//	NAME=REGEX       the first capture group of REGEX over the run's output
//	                 (e.g. 'tps=tps = ([0-9.]+)')
//
// NAME may end in + (higher is better) or - (lower is better); without
// either, a custom metric is higher-is-better unless its name says it is a
// time, latency, loss or cost.
func ParseMetric(arg string) (Metric, error) {
	name, src, hasSrc := strings.Cut(arg, "=")
	m := Metric{}
	dir := ""
	if strings.HasSuffix(name, "+") || strings.HasSuffix(name, "-") {
		dir, name = name[len(name)-1:], name[:len(name)-1]
	}
	if !validName(name) {
		return m, fmt.Errorf("%w: --metric %q: a name of letters, digits, _ and . is needed before '='", ErrSpec, arg)
	}
	m.Name = name
	switch {
	case !hasSrc:
		k, ok := knownMetrics[name]
		if !ok {
			return m, fmt.Errorf("%w: --metric %q: not a metric interlink knows; give NAME=REGEX or NAME=json:PATH", ErrSpec, arg)
		}
		m.known, m.Unit, m.LowerBetter = &k, k.unit, k.lower
		m.Source = "interlink"
		if name == "wall" {
			m.Source = "wall"
		}
	case strings.HasPrefix(src, "json:"):
		p := strings.TrimPrefix(src, "json:")
		if p == "" || strings.Contains(p, "..") {
			return m, fmt.Errorf("%w: --metric %q: empty JSON path", ErrSpec, arg)
		}
		m.path = strings.Split(strings.TrimPrefix(p, "."), ".")
		m.Source, m.LowerBetter = "json:"+p, lowerByName(name)
	default:
		re, err := regexp.Compile(src)
		if err != nil {
			return m, fmt.Errorf("%w: --metric %q: %v", ErrSpec, arg, err)
		}
		if re.NumSubexp() < 1 {
			return m, fmt.Errorf("%w: --metric %q: the regular expression needs a capture group around the number, e.g. 'tps = ([0-9.]+)'", ErrSpec, arg)
		}
		m.re, m.Source, m.LowerBetter = re, "regex:"+src, lowerByName(name)
	}
	switch dir {
	case "+":
		m.LowerBetter = false
	case "-":
		m.LowerBetter = true
	}
	return m, nil
}

func validName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r == '.' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

func lowerByName(name string) bool {
	n := strings.ToLower(name)
	for _, w := range []string{"latency", "rtt", "time", "wall", "loss", "lost", "cpu", "error", "retrans", "elapsed", "duration"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// Extract takes m's value from one run's output and wall time.
func (m Metric) Extract(out []byte, doc any, wall time.Duration) (float64, error) {
	switch {
	case m.Source == "wall":
		return float64(wall.Nanoseconds()), nil
	case m.re != nil:
		sub := m.re.FindSubmatch(out)
		if sub == nil {
			return 0, fmt.Errorf("metric %s: %s matched nothing in the output", m.Name, m.re)
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(string(sub[1])), 64)
		if err != nil {
			return 0, fmt.Errorf("metric %s: %q is not a number", m.Name, sub[1])
		}
		return v, nil
	case doc == nil:
		return 0, fmt.Errorf("metric %s: the run printed no JSON document", m.Name)
	case m.path != nil:
		return number(lookup(doc, m.path), m.Name, strings.Join(m.path, "."))
	default:
		return m.extractKnown(doc)
	}
}

func (m Metric) extractKnown(doc any) (float64, error) {
	k := m.known
	if s, _ := lookup(doc, []string{"schema"}).(string); s != k.schema {
		return 0, fmt.Errorf("metric %s: wants a %s document, the run printed %q", m.Name, k.schema, s)
	}
	if len(k.path) > 0 && k.path[0] == "" {
		// A document without flows (db): the path starts at the top.
		if err := unmeasured(doc, k.path[1:], m.Name); err != nil {
			return 0, err
		}
		return number(lookup(doc, k.path[1:]), m.Name, strings.Join(k.path[1:], "."))
	}
	flows, _ := lookup(doc, []string{"flows"}).([]any)
	if len(flows) == 0 {
		return 0, fmt.Errorf("metric %s: the result has no flows", m.Name)
	}
	total := 0.0
	for i, f := range flows {
		full := append([]string{"summary"}, k.path...)
		leaf := lookup(f, full)
		if parent, ok := lookup(f, full[:len(full)-1]).(map[string]any); ok && leaf == nil && k.unit == UnitCount {
			// interlink omits zero counts (omitempty): a present parent
			// with a count absent means zero. Any other figure absent
			// was not measured (fragments per message without the
			// kernel's counters, CPU per message of a tcp run), and a 0
			// taken for it would enter the medians as a real value.
			if _, there := parent[full[len(full)-1]]; !there {
				leaf = 0.0
			}
		}
		v, err := number(leaf, m.Name, "flows."+strconv.Itoa(i)+"."+strings.Join(full, "."))
		if err != nil {
			return 0, err
		}
		if !k.sum {
			return v, nil
		}
		total += v
	}
	return total, nil
}

// ParseJSON returns the first JSON document in out, or nil if it holds none.
func ParseJSON(out []byte) any {
	var doc any
	if err := json.NewDecoder(strings.NewReader(string(out))).Decode(&doc); err != nil {
		return nil
	}
	return doc
}

func lookup(doc any, path []string) any {
	for _, p := range path {
		switch v := doc.(type) {
		case map[string]any:
			doc = v[p]
		case []any:
			i, err := strconv.Atoi(p)
			if err != nil || i < 0 || i >= len(v) {
				return nil
			}
			doc = v[i]
		default:
			return nil
		}
	}
	return doc
}

// unmeasured refuses a figure whose section of the document says it was
// not measured: a db run whose counters or WAL position could not be read
// sets the section's "error" and leaves its figures 0 (interface
// counters, WAL bytes), and a 0 taken as a run's value would enter the
// medians and the verdict as a real one. The run fails as a run whose
// JSON lacks the metric does (left out with --keep-going).
func unmeasured(doc any, path []string, name string) error {
	for i := 1; i < len(path); i++ {
		sec, ok := lookup(doc, path[:i]).(map[string]any)
		if !ok {
			continue
		}
		if e, _ := sec["error"].(string); e != "" {
			return fmt.Errorf("metric %s: %s not measured in this run: %s", name, strings.Join(path[:i], "."), e)
		}
	}
	return nil
}

func number(v any, name, path string) (float64, error) {
	switch x := v.(type) {
	case float64:
		return x, nil
	case nil:
		return 0, fmt.Errorf("metric %s: %s is %w", name, path, errAbsent)
	default:
		return 0, fmt.Errorf("metric %s: %s is %T, not a number", name, path, v)
	}
}
