// Package latency is the one summary of a latency distribution that every
// measurement reports (bench round trips, storage operations, database
// transactions): count, min, mean, p50, p90, p99, p99.9 and max in ns, read
// from an HDR histogram.
package latency

import "github.com/HdrHistogram/hdrhistogram-go"

// Summary summarises a distribution of times, in ns.
type Summary struct {
	Count int64   `json:"count"`
	Min   int64   `json:"min_ns"`
	Mean  float64 `json:"mean_ns"`
	P50   int64   `json:"p50_ns"`
	P90   int64   `json:"p90_ns"`
	P99   int64   `json:"p99_ns"`
	P999  int64   `json:"p99_9_ns"`
	Max   int64   `json:"max_ns"`
}

// FromHistogram summarises h, whose values are recorded in units of scale
// ns (1 for ns, 1000 for us). An empty histogram gives the zero Summary.
func FromHistogram(h *hdrhistogram.Histogram, scale int64) Summary {
	if h.TotalCount() == 0 {
		return Summary{}
	}
	return Summary{Count: h.TotalCount(), Min: h.Min() * scale, Mean: h.Mean() * float64(scale),
		P50: h.ValueAtQuantile(50) * scale, P90: h.ValueAtQuantile(90) * scale, P99: h.ValueAtQuantile(99) * scale,
		P999: h.ValueAtQuantile(99.9) * scale, Max: h.Max() * scale}
}
