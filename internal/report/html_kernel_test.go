package report

import (
	"strings"
	"testing"

	"github.com/interlink/interlink/internal/traffic"
)

// TestHTMLBenchReadShortAndAbsent: the HTML bench report says what the
// text report says of a run against an old kernel: datagrams read short
// (a sender before 4.18 that ignored UDP_SEGMENT: 57 KiB datagrams) are
// shown as such, not left out beside "0 lost", and fragments per message
// the receiving kernel's counters could not give are "n/a", not "0.00".
func TestHTMLBenchReadShortAndAbsent(t *testing.T) {
	udp := fixture(t, "lab-bench-udp.json").(*traffic.Report)
	sm := &udp.Flows[0].Summary
	sm.Truncated, sm.Joined, sm.Lost, sm.LossPercent = 50, 350, 0, 0
	sm.FragmentsPerMessage = 0
	page := render(t, udp)
	if !strings.Contains(page, "50 read short (holding 350 sent), not network loss") {
		t.Error("the UDP report does not show the datagrams read short")
	}
	if strings.Contains(page, ">0.00<") || !strings.Contains(page, ">n/a<") {
		t.Error("fragments per message not given by the kernel are not shown n/a")
	}

	blocks := fixture(t, "lab-bench-blocks.json").(*traffic.Report)
	bs := &blocks.Flows[0].Summary
	bs.LossBy = &traffic.LossPlaces{Truncated: 3}
	bs.Lost = 3
	if page := render(t, blocks); !strings.Contains(page, "3 read short at an end, not network loss") {
		t.Error("the blocks report does not place blocks lost to datagrams read short")
	}
}
