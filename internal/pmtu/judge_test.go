package pmtu

import "testing"

func TestJudge(t *testing.T) {
	for _, c := range []struct {
		v      Verdict
		mtu    int
		expect int
		want   string
		meets  string // "", "yes", "no"
	}{
		{OK, 9000, 0, StatusOK, ""},
		{OK, 9000, 9000, StatusOK, "yes"},
		{Blackhole, 1500, 0, StatusWarning, ""},
		{Blackhole, 1500, 9000, StatusCritical, "no"},
		{LocalLimit, 1500, 1500, StatusWarning, "yes"},
		{ICMP, 1400, 1500, StatusCritical, "no"},
		{Unreachable, 0, 9000, StatusUnknown, ""},
	} {
		meets, st := Judge(Result{Verdict: c.v, PathMTU: c.mtu}, c.expect)
		m := ""
		if meets != nil {
			m = map[bool]string{true: "yes", false: "no"}[*meets]
		}
		if st != c.want || m != c.meets {
			t.Errorf("%s %d expect %d: %s %q, want %s %q", c.v, c.mtu, c.expect, st, m, c.want, c.meets)
		}
	}
	// Critical outranks unknown whichever direction comes first.
	for _, order := range [][]Result{{{Verdict: Unreachable}, {Verdict: Blackhole, PathMTU: 1500}}, {{Verdict: Blackhole, PathMTU: 1500}, {Verdict: Unreachable}}} {
		rep := &Report{Expect: 9000}
		rep.Evaluate(order)
		if rep.Status != StatusCritical || len(rep.Directions) != 2 {
			t.Errorf("%+v: status %s", order, rep.Status)
		}
	}
	if Worse(StatusWarning, StatusUnknown) != StatusUnknown || Worse("", StatusOK) != StatusOK || Worse(StatusCritical, StatusUnknown) != StatusCritical {
		t.Error("Worse")
	}
}
