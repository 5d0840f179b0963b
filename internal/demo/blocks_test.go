package demo

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/interlink/interlink/internal/traffic"
)

func blocksRun(label string, perSec, frags float64, p50 int64) Bench {
	return Bench{Label: label, Interface: "eth1", Result: &traffic.Result{Spec: traffic.Spec{Block: 8192}, Flows: []traffic.Flow{{
		Summary: traffic.Summary{PerSec: perSec, FragmentsPerMessage: frags, RTT: &traffic.Latency{P50: p50, P99: 2 * p50}}}}}}
}

// TestBlocksAdviceFollowsFigures: the advice quotes blocks/s only from a
// comparison that says the same as it. The figures are the ones a demo
// printed here (11093 vs 12390 blocks/s at one in flight, 88.8k vs 42.6k
// with 8) when it advised 9000 "here 11093 vs 12390 blocks/s".
func TestBlocksAdviceFollowsFigures(t *testing.T) {
	one := []Bench{blocksRun("MTU 9000", 11093, 1, 100e3), blocksRun("MTU 1500", 12390, 6, 90e3)}
	loaded := []Bench{blocksRun("MTU 9000", 88800, 1, 90e3), blocksRun("MTU 1500", 42600, 6, 188e3)}
	fast := []Bench{blocksRun("MTU 9000", 60000, 1, 14e3), blocksRun("MTU 1500", 40000, 6, 21e3)}
	for _, c := range []struct {
		name          string
		blocks, load  []Bench
		want, notWant string
	}{
		{"hidden, shown under load", one, loaded, "here 88800 vs 42600 blocks/s with 8 in flight", "11093"},
		{"hidden, no loaded runs", one, nil, "show no gain, because the hosts' wake-ups hide the wire", "blocks/s;"},
		{"gain at one in flight", fast, nil, "here 60000 vs 40000 blocks/s.", "no gain"},
		{"no gain anywhere", one, []Bench{loaded[1], loaded[0]}, "show no gain", "42600"},
	} {
		adv := blocksAdvice(&Result{Blocks: c.blocks, Loaded: c.load})
		if !strings.Contains(adv, c.want) || strings.Contains(adv, c.notWant) {
			t.Errorf("%s: advice %q, want %q and not %q", c.name, adv, c.want, c.notWant)
		}
		// Whatever pair of blocks/s it quotes, the first (9000) is larger.
		if m := regexp.MustCompile(`here (\d+) vs (\d+) blocks/s`).FindStringSubmatch(adv); m != nil {
			a, _ := strconv.Atoi(m[1])
			b, _ := strconv.Atoi(m[2])
			if a <= b {
				t.Errorf("%s: the advice for 9000 quotes %d vs %d blocks/s", c.name, a, b)
			}
		}
	}
}

// TestBlocksChapterNamesWakeUps: when 9000 shows no gain at one in flight
// the chapter says why instead of leaving the ratio to speak, and shows
// the loaded runs with their ratio.
func TestBlocksChapterNamesWakeUps(t *testing.T) {
	var b bytes.Buffer
	renderBlocks(&b, &Result{Blocks: []Bench{blocksRun("MTU 9000", 11093, 1, 100e3), blocksRun("MTU 1500", 12390, 6, 90e3)},
		Loaded: []Bench{blocksRun("MTU 9000", 88800, 1, 90e3), blocksRun("MTU 1500", 42600, 6, 188e3)}})
	out := b.String()
	for _, want := range []string{"At MTU 9000: 0.90x the blocks/s", "shows no gain here: each round trip waits for both hosts to wake up",
		"8 blocks in flight", "At MTU 9000: 2.08x the blocks/s of MTU 1500 with 8 in flight."} {
		if !strings.Contains(out, want) {
			t.Errorf("the chapter lacks %q:\n%s", want, out)
		}
	}
	b.Reset()
	renderBlocks(&b, &Result{Blocks: []Bench{blocksRun("MTU 9000", 60000, 1, 14e3), blocksRun("MTU 1500", 40000, 6, 21e3)}})
	if strings.Contains(b.String(), "no gain") || !strings.Contains(b.String(), "1.50x the blocks/s and 0.67x the median round trip") {
		t.Errorf("a real gain:\n%s", b.String())
	}
}

// TestBlocksChapterSplit: with the round trip split, the chapter shows the
// hosts' wake-ups per run and, when they are most of a round trip, says
// that they hide the MTU's effect (with the split's own figures).
func TestBlocksChapterSplit(t *testing.T) {
	withSplit := func(b Bench, wakeNs int64) Bench {
		s := b.Summary()
		share := float64(wakeNs) / float64(s.RTT.P50)
		// As traffic decides it for a run whose CPUs slept.
		s.Split = &traffic.Split{WakeP50Ns: &wakeNs, WakeShare: &share, WakeDominant: share >= traffic.WakeDominates}
		return b
	}
	var b bytes.Buffer
	renderBlocks(&b, &Result{Blocks: []Bench{withSplit(blocksRun("MTU 9000", 11093, 1, 100e3), 80e3), withSplit(blocksRun("MTU 1500", 12390, 6, 90e3), 70e3)}})
	out := b.String()
	for _, want := range []string{"hosts waking up (p50, both ends)", "80.0 us", "70.0 us", "80 %", "78 %",
		"MTU 9000: the round trip is mostly the two hosts waking up (80 of 100 us)", "here they hide what it changes"} {
		if !strings.Contains(out, want) {
			t.Errorf("the chapter lacks %q:\n%s", want, out)
		}
	}
	// A real gain with the wake-ups most of the round trip: what is left
	// without them is what the MTU changes.
	b.Reset()
	renderBlocks(&b, &Result{Blocks: []Bench{withSplit(blocksRun("MTU 9000", 32320, 1, 16.3e3), 10.3e3), withSplit(blocksRun("MTU 1500", 26594, 6, 28.4e3), 12e3)}})
	if !strings.Contains(b.String(), "without them a round trip is 6.0 us at MTU 9000 and 16.4 us at MTU 1500") || strings.Contains(b.String(), "hide") {
		t.Errorf("a gain under wake-ups:\n%s", b.String())
	}
	b.Reset()
	renderBlocks(&b, &Result{Blocks: []Bench{withSplit(blocksRun("MTU 9000", 60000, 1, 14e3), 3e3), withSplit(blocksRun("MTU 1500", 40000, 6, 21e3), 3e3)}})
	if strings.Contains(b.String(), "mostly the two hosts waking up") || !strings.Contains(b.String(), "21 %") {
		t.Errorf("wake-ups a fifth of the round trip named as most of it:\n%s", b.String())
	}
}
