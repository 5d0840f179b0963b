//go:build linux

package main

import (
	"slices"
	"strings"
	"testing"
)

// TestScenarioTable: the scenarios run in the order and in the labs they
// always did, each with every side and its goal set; the goals judge
// ratios and losses at their edges as stated.
func TestScenarioTable(t *testing.T) {
	want := []struct{ name, lab, unit, goal string }{
		{"TCP 1 stream, MTU 9000", "t5-bench9000", "goodput", ">= 1.0"},
		{"UDP 8 KiB unpaced, MTU 1500", "t5-bench1500", "goodput", ">= 1.0, loss <="},
		{"UDP 8 KiB unpaced, MTU 9000", "t5-bench9000", "goodput", ">= 1.0, loss <="},
		{"UDP 8 KiB unpaced, MTU 9000, GSO off", "t5-bench9000", "goodput", ">= 1.0, loss <="},
		{"UDP small-datagram rate, MTU 1500", "t5-bench1500", "pkt/s", ">= 1.5"},
		{"8 KiB round trip (8K both ways), MTU 9000", "t5-bench9000", "median RTT", "<= 1.0"},
		{"8 KiB lone round trip (100/s), MTU 9000", "t5-bench9000", "median RTT", "<= 1.0"},
		{"TCP on a 1 Gbit/s tbf link, MTU 1500", "t5-bench1g", "% of limit", ">= 97 %"},
		{"8 KiB round trip, MTU 9000, PM QoS 0 held", "t5-bench9000", "median RTT", "<= 1.0"},
		{"8 KiB blocks/s, round trip split on vs off, MTU 9000", "t5-bench9000", "blocks/s", ">= 0.97"},
		{"8 KiB blocks/s, round trip split on vs off, MTU 9000, PM QoS 0 held", "t5-bench9000", "blocks/s", ">= 0.97"},
	}
	var labs []string
	for _, l := range labSpecs {
		labs = append(labs, l.name)
	}
	got := scenarios()
	if len(got) != len(want) {
		t.Fatalf("%d scenarios, want %d", len(got), len(want))
	}
	for i, sc := range got {
		w := want[i]
		if sc.name != w.name || sc.lab != w.lab || sc.unit != w.unit || sc.goal != w.goal {
			t.Errorf("scenario %d: %q in %s (%s, goal %s), want %+v", i, sc.name, sc.lab, sc.unit, sc.goal, w)
		}
		if !slices.Contains(labs, sc.lab) {
			t.Errorf("%s: lab %s is not one compare brings up (%v)", sc.name, sc.lab, labs)
		}
		if (sc.holdUS != nil) != strings.Contains(sc.name, "PM QoS") || sc.holdUS != nil && *sc.holdUS != 0 {
			t.Errorf("%s: hold %v: a scenario holds a request of 0 exactly when its name says so", sc.name, sc.holdUS)
		}
		if sc.peer == nil || sc.agent == nil || sc.direct == nil || sc.ratio == nil || sc.met == nil || sc.peerName == "" {
			t.Errorf("%s: a side, the ratio, the goal or the peer's name is missing", sc.name)
		}
	}
	judge := []struct {
		i         int
		r, pl, ol float64
		met       bool
		ratioPeer float64
		ratioOurs float64
		wantRatio float64
	}{
		{0, 1.0, 0, 0, true, 2, 3, 1.5},
		{0, 0.99, 0, 0, false, 2, 3, 1.5},
		{1, 1.0, 1.0, 1.1, true, 2, 1, 0.5},
		{1, 1.0, 1.0, 1.2, false, 2, 1, 0.5},
		{1, 0.98, 0, 0, false, 2, 1, 0.5},
		{4, 1.5, 0, 50, true, 1, 2, 2},
		{4, 1.49, 0, 0, false, 1, 2, 2},
		{5, 1.0, 0, 0, true, 4, 2, 0.5},
		{5, 1.01, 0, 0, false, 4, 2, 0.5},
		{7, 97, 0, 0, true, 50, 98, 98},
		{7, 96.9, 0, 0, false, 50, 98, 98},
		{8, 1.0, 0, 0, true, 4, 2, 0.5},
		{8, 1.01, 0, 0, false, 4, 2, 0.5},
	}
	for _, j := range judge {
		sc := got[j.i]
		if m := sc.met(j.r, j.pl, j.ol); m != j.met {
			t.Errorf("%s: met(%g, loss %g, %g) = %v", sc.name, j.r, j.pl, j.ol, m)
		}
		if r := sc.ratio(j.ratioPeer, j.ratioOurs); r != j.wantRatio {
			t.Errorf("%s: ratio(%g, %g) = %g, want %g", sc.name, j.ratioPeer, j.ratioOurs, r, j.wantRatio)
		}
	}
}

// TestFormatFigure: each unit prints as the table's columns always did.
func TestFormatFigure(t *testing.T) {
	for _, c := range []struct {
		unit    string
		x, loss float64
		want    string
	}{
		{"pkt/s", 1234567.4, 0.25, "1234567 pkt/s (loss 0.2%)"},
		{"median RTT", 41234, 0, "41.2 us"},
		{"% of limit", 97.44, 0, "97.4 %"},
	} {
		if got := formatFigure(c.unit, c.x, c.loss); got != c.want {
			t.Errorf("formatFigure(%q, %g, %g) = %q, want %q", c.unit, c.x, c.loss, got, c.want)
		}
	}
	if got := formatFigure("goodput", 9.5e9, 1.25); got == "" || got[len(got)-len("(loss 1.2%)"):] != "(loss 1.2%)" {
		t.Errorf("goodput: %q", got)
	}
}
