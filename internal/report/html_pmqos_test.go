package report

import (
	"strings"
	"testing"

	"github.com/interlink/interlink/internal/gc"
	"github.com/interlink/interlink/internal/pmqos"
	"github.com/interlink/interlink/internal/traffic"
)

// The HTML says which ends held a CPU latency request, as the text does,
// for bench and gc; a run without one has no such section.
func TestHTMLCPULatency(t *testing.T) {
	agg := int32(0)
	hold := &pmqos.Report{RequestedUS: 0, Ends: []pmqos.End{{End: "local", Held: true, AggregateUS: &agg},
		{End: "peer 10.0.0.2:7471", Reason: "this agent does not allow CPU latency holds (start it with --allow-cpu-latency)"}}}
	r := fixture(t, "loopback-bench-udp-limited.json").(*traffic.Report)
	if strings.Contains(render(t, r), "CPU latency hold") {
		t.Error("a run without a hold shows one")
	}
	r.CPULatency = hold
	g := fixture(t, "lab-gc.json").(*gc.Report)
	g.CPULatency = hold
	for _, page := range []string{render(t, r), render(t, g)} {
		for _, want := range []string{"Host CPU latency hold", "of 0 us for the run", "<li>local: held (the host&#39;s aggregate request: 0 us)</li>",
			"peer 10.0.0.2:7471: NOT held: this agent does not allow CPU latency holds"} {
			if !strings.Contains(page, want) {
				t.Errorf("the HTML lacks %q", want)
			}
		}
	}
}
