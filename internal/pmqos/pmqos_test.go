package pmqos

import (
	"errors"
	"strings"
	"testing"
)

func TestParseUS(t *testing.T) {
	for in, want := range map[string]int32{"0": 0, "5": 5, "0us": 0, " 20 ": 20, "1999999999": 1999999999} {
		got, err := ParseUS(in)
		if err != nil || got != want {
			t.Errorf("ParseUS(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"-1", "abc", "", "1.5", "2000000000", "99999999999", "5ms", "0x10"} {
		if _, err := ParseUS(in); !errors.Is(err, ErrBadValue) || strings.Contains(err.Error(), "\n") {
			t.Errorf("ParseUS(%q): %v, want one line wrapping ErrBadValue", in, err)
		}
	}
}

func TestReportLines(t *testing.T) {
	agg := int32(0)
	r := Report{RequestedUS: 0, Ends: []End{{End: "local", Held: true, AggregateUS: &agg},
		{End: "peer 10.0.0.2:7471", Reason: "this agent does not allow\x1b[31m CPU latency holds"}}}
	got := strings.Join(r.Lines(), "\n")
	for _, want := range []string{"of 0 us for the run", "local: held (the host's aggregate request: 0 us)", "peer 10.0.0.2:7471: NOT held: this agent does not allow"} {
		if !strings.Contains(got, want) {
			t.Errorf("lines lack %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "\x1b") || strings.Contains(got, "haltpoll") || r.HeldAll() {
		t.Errorf("escape shown, haltpoll note at 0, or HeldAll with an end not held:\n%s", got)
	}
	r.RequestedUS, r.Ends = 1, r.Ends[:1]
	if !r.HeldAll() || !strings.Contains(strings.Join(r.Lines(), "\n"), "haltpoll governor still halts") {
		t.Errorf("a 1 us request must name the haltpoll rule: %q", r.Lines())
	}
}
