package traffic

import (
	"bytes"
	"strings"
	"testing"

	"github.com/interlink/interlink/internal/idlestat"
)

func lat(p50, p90, p99 int64) *Latency {
	return &Latency{Count: 100, Min: p50 / 2, P50: p50, P90: p90, P99: p99, P999: p99, Max: p99}
}

// TestSplitOf: the parts combine from both ends; the wake-ups' share and
// the accounting follow the p50s; an agent without the split leaves its
// parts and the rest absent (n/a, never 0), and says why.
func TestSplitOf(t *testing.T) {
	s := &Summary{RTT: lat(92000, 120000, 300000), Messages: 1000, Bytes: 1000 * 8192, MTU: 1500, Chunks: 1}
	client := &Side{Split: &SideSplit{Wake: lat(40000, 50000, 90000), Rest: lat(10000, 12000, 20000)}}
	server := &Side{Split: &SideSplit{Wake: lat(38000, 48000, 80000), Work: lat(2000, 3000, 5000)}}
	sp := splitOf(s, client, server)
	if sp.WakeP50Ns == nil || *sp.WakeP50Ns != 78000 || sp.AccountedPercent == nil || *sp.AccountedPercent < 97 || *sp.AccountedPercent > 98 || sp.Unaccounted != "" {
		t.Fatalf("split: %+v", sp)
	}
	if sp.Fragments != 6 || !strings.Contains(sp.StampNote(), "6 IP fragments and carries the stamp of the last to arrive") {
		t.Errorf("fragments %d: %s", sp.Fragments, sp.StampNote())
	}
	want := "the round trip is mostly the two hosts waking up (78 of 92 us): a network change (MTU, switch, cabling) will barely show here; see check CPU-IDLE"
	if v := sp.WakeVerdict(s.RTT.P50); v != want {
		t.Errorf("verdict %q", v)
	}
	// Tuned: wake-ups 6 of 14 us, no verdict.
	tuned := splitOf(&Summary{RTT: lat(14000, 15000, 20000), Messages: 10}, &Side{Split: &SideSplit{Wake: lat(3000, 3000, 3000), Rest: lat(7000, 7000, 7000)}},
		&Side{Split: &SideSplit{Wake: lat(3000, 3000, 3000), Work: lat(500, 500, 500)}})
	if v := tuned.WakeVerdict(14000); v != "" {
		t.Errorf("tuned: %q", v)
	}
	// An agent from before the split: its parts absent, and said.
	old := splitOf(s, &Side{Split: &SideSplit{Wake: lat(40000, 50000, 90000), Unheld: 1000}}, &Side{})
	if old.ResponderWake != nil || old.ResponderWork != nil || old.NetworkAndStacks != nil || old.WakeShare != nil || old.AccountedPercent != nil || len(old.Missing) != 2 {
		t.Errorf("old agent: %+v", old)
	}
	rep := Report{Result: &Result{Spec: Spec{Mode: ModeBlocks}, Flows: []Flow{{Direction: Forward, Summary: Summary{RTT: s.RTT, Messages: 1, Split: old}}}}}
	var b bytes.Buffer
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"responder wake-up               n/a", "network and stacks (both ways)  n/a", "n/a: responder's parts: the agent did not report them"} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("text lacks %q:\n%s", w, b.String())
		}
	}
	if strings.Contains(b.String(), "waking up") {
		t.Errorf("a verdict without the responder's wake-up:\n%s", b.String())
	}
	// The CPUs seldom slept (a PM QoS hold, other load): the wake-up
	// parts are scheduling and the receive path, and no idle setting is
	// to blame: no verdict. They slept: the verdict.
	busy := &idlestat.Delta{CPUs: 2, Entries: 200, SleepEntries: 200}
	slept := &idlestat.Delta{CPUs: 2, Entries: 1800, SleepEntries: 1800}
	for _, c := range []struct {
		idle *idlestat.Delta
		want bool
	}{{busy, false}, {slept, true}} {
		sp := splitOf(s, &Side{Split: &SideSplit{Wake: lat(40000, 50000, 90000), Rest: lat(10000, 12000, 20000), Idle: c.idle, Host: "h"}},
			&Side{Split: &SideSplit{Wake: lat(38000, 48000, 80000), Work: lat(2000, 3000, 5000), Idle: c.idle, Host: "h"}})
		if got := sp.WakeVerdict(s.RTT.P50) != ""; got != c.want || sp.WakeDominant != c.want {
			t.Errorf("%d sleep entries per 1000 blocks: verdict %v, want %v (%s)", c.idle.SleepEntries, got, c.want, sp.IdleNote())
		}
	}
	// Off at both ends: no split at all.
	if splitOf(s, &Side{}, &Side{}) != nil {
		t.Error("a split without either end's parts")
	}
}

// TestSplitVerdictFirst: the wake-up verdict is the summary's first line,
// and the parts that miss the round trip by more than 15 % say why.
func TestSplitVerdictFirst(t *testing.T) {
	s := Summary{RTT: lat(92000, 120000, 300000), Messages: 1000, Bytes: 1000 * 8192}
	s.Split = splitOf(&s, &Side{Split: &SideSplit{Wake: lat(40000, 50000, 90000), Rest: lat(40000, 52000, 60000)}},
		&Side{Split: &SideSplit{Wake: lat(38000, 48000, 80000), Work: lat(2000, 3000, 5000)}})
	if s.Split.Unaccounted == "" {
		t.Errorf("130 %% accounted without a reason: %+v", s.Split)
	}
	rep := Report{Result: &Result{Spec: Spec{Mode: ModeBlocks}, Flows: []Flow{{Direction: Forward, Summary: s}}}}
	var b bytes.Buffer
	rep.WriteText(&b)
	lines := strings.Split(b.String(), "\n")
	if len(lines) < 2 || !strings.HasPrefix(lines[1], "The round trip is mostly the two hosts waking up (78 of 92 us)") {
		t.Errorf("verdict not first:\n%s", b.String())
	}
	if !strings.Contains(b.String(), "add up to 130 % of the round trip's p50 (92.0 us): the parts vary") {
		t.Errorf("no reason for 130 %%:\n%s", b.String())
	}
}
