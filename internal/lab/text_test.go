package lab

import (
	"strings"
	"testing"

	"github.com/interlink/interlink/internal/ebpf"
)

// TestLossText: a lab without loss prints the table as before (no LOSS
// column, no drop lines); with a lossy port, the LOSS column appears and
// each port that dropped frames gets a line saying how many, each way.
func TestLossText(t *testing.T) {
	links := []LinkStatus{
		{Name: "eth1", Switch: "ic", Port: "p1", State: "up", MTU: 9000, PortMTU: 9000},
		{Name: "eth2", Switch: "ic", Port: "p2", State: "up", MTU: 9000, PortMTU: 1500,
			PortFilter: &PortFilter{FromNode: &ebpf.Counters{Frames: 10, DroppedMTU: 2}, ToNode: &ebpf.Counters{Frames: 5}}},
	}
	s := &Status{Name: "l", State: StateUp, Nodes: []NodeStatus{{Name: "a", Links: links}, {Name: "b"}}}
	var b strings.Builder
	if err := s.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	if !strings.Contains(text, "NODE  LINK  SWITCH  MTU   PORT MTU  RATE  STATE  ADDRESSES") || strings.Contains(text, "LOSS") {
		t.Errorf("without loss:\n%s", text)
	}
	if want := "port p2 (a eth2) dropped: from the node 2 over the MTU and 0 at random, of 10 frames\n"; !strings.Contains(text, want) ||
		strings.Contains(text, "to the node") || strings.Contains(text, "port p1") {
		t.Errorf("without loss:\n%s\nwant only %q", text, want)
	}
	links[0].LossPercent = 0.5
	links[0].PortFilter = &PortFilter{FromNode: &ebpf.Counters{Frames: 1000, DroppedLoss: 4}, ToNode: &ebpf.Counters{Frames: 900, DroppedLoss: 6}}
	b.Reset()
	if err := s.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	text = b.String()
	for _, want := range []string{
		"RATE  LOSS  STATE",
		"eth1  ic      9000  9000      -     0.5%  up",
		"eth2  ic      9000  1500      -     -     up",
		"port p1 (a eth1) dropped: from the node 0 over the MTU and 4 at random, of 1000 frames; to the node 0 over the MTU and 6 at random, of 900 frames\n",
		"  b     -",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("with loss:\n%s\nwant %q", text, want)
		}
	}
}
