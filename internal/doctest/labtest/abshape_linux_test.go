//go:build linux

package labtest

import (
	"slices"
	"testing"
)

// TestABShape: what ab's noise decides (verdicts, drift, outliers, notes,
// the table's figures, a "-" for a count 0 in every run) is left out; the
// metrics, sections and expectations stay.
func TestABShape(t *testing.T) {
	a := abShape([]string{
		"     metric  A median  B median     B/A  95 % CI of B/A      p",
		"retransmits        11        30  2.412x   0.321..10.545  0.223",
		"",
		"secondary metrics: Holm-corrected across 3 (...):",
		"  retransmits (lower is better): no detectable difference: the 95 % CI -67.9 % to +954.5 % includes 0",
		"    outliers: run(s) 11 lie far from their arm's median (modified z-score above 3.5)",
		"expect bits_per_sec: B > A: inconclusive (the 95 % interval of B - A spans -1.40 Gbit/s to +6.60 Gbit/s)",
	})
	b := abShape([]string{
		"     metric  A median  B median     B/A  95 % CI of B/A      p",
		"retransmits         0         0       -               -      1",
		"",
		"secondary metrics: Holm-corrected across 3 (...):",
		"  retransmits (lower is better): no difference: the same value in every run",
		"  NOTE: the round trip is mostly the two hosts waking up",
		"expect bits_per_sec: B > A: holds",
	})
	if !slices.Equal(a, b) || len(a) != 6 || a[1] != "retransmits" {
		t.Errorf("%q\n%q", a, b)
	}
}

// TestBenchShape: what the machine's load decides in a bench (the
// intervals, the wake-up verdict, the idle line's conclusion, why the
// split's p50s miss the round trip's) is left out; the rest stays.
func TestBenchShape(t *testing.T) {
	a := benchShape([]string{
		"[fwd]   0.00-1.20   sec   19.63 MiB  136.8 Mbit/s  2513 blocks  p50 17.0 us",
		"The round trip is mostly the two hosts waking up (10 of 17 us): a network change (MTU, switch, cabling) will barely show here; see check CPU-IDLE",
		"  blocks: 35086 = 11678 blocks/s, lost 0 (0.000 %)",
		"    the parts' p50s add up to 103 % of the round trip's p50 (16.6 us)",
		"    (this host's CPUs (both ends) went to sleep in an idle state (not polling) 0.00 times per block: they seldom slept, so ...)",
	})
	b := benchShape([]string{
		"[fwd]   0.00-1.00   sec   19.63 MiB  136.8 Mbit/s  2513 blocks  p50 17.0 us",
		"[fwd]   1.00-2.00   sec   19.63 MiB  136.8 Mbit/s  2513 blocks  p50 17.0 us",
		"  blocks: 35086 = 11678 blocks/s, lost 0 (0.000 %)",
		"    the parts' p50s add up to 103 % of the round trip's p50 (16.6 us): the parts vary from block to block",
		"    (this host's CPUs (both ends) went to sleep in an idle state (not polling) 0.00 times per block: the two readers' wake-ups account for up to 2; ...)",
	})
	if !slices.Equal(a, b) || len(a) != 3 || !isBench("interlink lab exec x node1 -- interlink bench 198.18.10.2") || isBench("interlink ab -- interlink bench x") {
		t.Errorf("%q\n%q", a, b)
	}
}
