package report

import (
	"strings"
	"testing"

	"github.com/interlink/interlink/internal/gc"
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

// TestHTMLGCSplit: a gc run's pairs show their split receive times.
func TestHTMLGCSplit(t *testing.T) {
	r := fixture(t, "lab-gc.json").(*gc.Report)
	if page := render(t, r); strings.Contains(page, "Receive times split") {
		t.Error("a run without a split shows one")
	}
	var p *gc.Pair
	for i := range r.Pairs {
		if r.Pairs[i].TwoWay != nil {
			p = &r.Pairs[i]
		}
	}
	if p == nil {
		t.Fatal("no fixture pair has 2-way times")
	}
	l := func(p50 int64) *traffic.Latency {
		return &traffic.Latency{Count: 10, P50: p50, P90: p50, P99: p50, Max: p50}
	}
	p.TwoWaySplit = traffic.NewSplit(p.TwoWay, l(p.TwoWay.P50/4), l(p.TwoWay.P50/4), l(1000), nil)
	page := render(t, r)
	for _, want := range []string{"Receive times split into their parts (p50)", "server wake-up", ">n/a<", "What a stamp cannot see"} {
		if !strings.Contains(page, want) {
			t.Errorf("the HTML lacks %q", want)
		}
	}
}
