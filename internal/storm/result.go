package storm

import (
	"math"
	"sort"
	"time"

	"github.com/interlink/interlink/internal/stats"
)

// Schema is the JSON schema name of a Result.
const Schema = "interlink.storm/v1"

// Result is a storm's outcome.
type Result struct {
	Schema   string         `json:"schema"`
	Spec     Spec           `json:"spec"`
	Start    time.Time      `json:"start"`
	Duration int64          `json:"duration_ns"` // release to the last client's end
	LoggedOn int            `json:"logged_on"`
	Failed   int            `json:"failed"`
	Errors   map[string]int `json:"errors,omitempty"` // by kind
	Connect  *Percentiles   `json:"connect,omitempty"`
	First    *Percentiles   `json:"first_byte,omitempty"`
	Logon    *Percentiles   `json:"logon,omitempty"`
	// Timeline counts logons and failures per interval since the release.
	Timeline []Slot `json:"timeline"`
	// Fairness is Jain's index over the sources' median logon times (1:
	// every source waited alike; 1/n: one source got everything).
	Fairness *float64 `json:"fairness_jain,omitempty"`
	Sources  int      `json:"sources"`
	// Kernel is this host's TCP counters over the storm (the network
	// namespace the storm ran in): they show a server's accept queue
	// overflowing when the server runs here too.
	Kernel  *Kernel  `json:"kernel,omitempty"`
	Clients []Client `json:"clients"`
}

// Percentiles of times since the release, in ns.
type Percentiles struct {
	N   int   `json:"n"`
	Min int64 `json:"min_ns"`
	P50 int64 `json:"p50_ns"`
	P90 int64 `json:"p90_ns"`
	P99 int64 `json:"p99_ns"`
	Max int64 `json:"max_ns"`
}

// Slot is one interval of the timeline.
type Slot struct {
	StartNs  int64 `json:"start_ns"`
	LoggedOn int   `json:"logged_on"`
	Failed   int   `json:"failed"`
}

func percentiles(xs []float64) *Percentiles {
	if len(xs) == 0 {
		return nil
	}
	q := func(p float64) int64 { return int64(stats.Quantile(xs, p)) }
	return &Percentiles{N: len(xs), Min: int64(stats.Min(xs)), P50: q(0.5), P90: q(0.9), P99: q(0.99), Max: int64(stats.Max(xs))}
}

func summarize(spec Spec, t0 time.Time, cs []Client) *Result {
	r := &Result{Schema: Schema, Spec: spec, Start: t0, Errors: map[string]int{}, Clients: cs}
	var conn, first, logon []float64
	var end int64
	bySource := map[string][]float64{}
	for _, c := range cs {
		if c.ConnectNs > 0 {
			conn = append(conn, float64(c.ConnectNs))
		}
		if c.FirstNs > 0 {
			first = append(first, float64(c.FirstNs))
		}
		if c.Error != "" {
			r.Failed++
			r.Errors[c.Error]++
		} else {
			r.LoggedOn++
			logon = append(logon, float64(c.LogonNs))
			bySource[c.Source] = append(bySource[c.Source], float64(c.LogonNs))
		}
		end = max(end, c.EndNs)
	}
	r.Duration = end
	r.Connect, r.First, r.Logon = percentiles(conn), percentiles(first), percentiles(logon)
	r.Sources = max(1, len(spec.Sources))
	if len(bySource) > 1 {
		var sum, sq float64
		for _, v := range bySource {
			m := stats.Median(v)
			sum += m
			sq += m * m
		}
		j := sum * sum / (float64(len(bySource)) * sq)
		if !math.IsNaN(j) {
			r.Fairness = &j
		}
	}
	r.Timeline = timeline(cs, r.Duration)
	return r
}

// timeline buckets the logons and failures, by when each client ended,
// into about 20 intervals.
func timeline(cs []Client, total int64) []Slot {
	step := max(total/20, int64(10*time.Millisecond))
	n := int(total/step) + 1
	slots := make([]Slot, n)
	for i := range slots {
		slots[i].StartNs = int64(i) * step
	}
	for _, c := range cs {
		i := min(int(c.EndNs/step), n-1)
		if c.Error != "" {
			slots[i].Failed++
		} else {
			slots[i].LoggedOn++
		}
	}
	sort.Slice(slots, func(a, b int) bool { return slots[a].StartNs < slots[b].StartNs })
	return slots
}

// Kernel counter deltas over the storm (TcpExt, /proc/net/netstat). A
// counter this kernel does not keep is nil (absent in JSON, "n/a" in
// text), never 0.
type Kernel struct {
	ListenOverflows *int64 `json:"listen_overflows,omitempty"`
	ListenDrops     *int64 `json:"listen_drops,omitempty"`
	SYNRetrans      *int64 `json:"syn_retransmits,omitempty"`
}
