package report

import (
	"strings"
	"testing"

	"github.com/interlink/interlink/internal/traffic"
)

// TestHTMLBenchSplit: a blocks run's split shows its parts (n/a for one
// the kernel gave no stamp for), the wake-up verdict and what a stamp
// cannot see, as the text does.
func TestHTMLBenchSplit(t *testing.T) {
	r := fixture(t, "loopback-bench-udp-limited.json").(*traffic.Report)
	f := &r.Flows[0].Summary
	l := func(p50 int64) *traffic.Latency {
		return &traffic.Latency{Count: 10, P50: p50, P90: p50, P99: p50, Max: p50}
	}
	f.RTT = l(92000)
	f.Split = traffic.NewSplit(f.RTT, l(40000), l(38000), nil, l(12000))
	page := render(t, r)
	for _, want := range []string{"Round trip split (" + string(r.Flows[0].Direction) + ")", "Verdict: the round trip is mostly the two hosts waking up (78 of 92 us)",
		"requester wake-up", "<td class=\"num\">n/a</td>", "What a stamp cannot see: a receive stamp is taken when the driver hands"} {
		if !strings.Contains(page, want) {
			t.Errorf("the HTML lacks %q", want)

		}
	}
}
